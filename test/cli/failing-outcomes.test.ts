/**
 * Outcomes that read healthy in the CLI though they need a human (a tester's report, h4): a cancel
 * whose compensation failed, a run that waits for a worker in the default list, and a timed-out
 * execution in `orbit ps` and `orbit status` (src/cli/schedule-format.ts, execution-format.ts).
 */
import { describe, expect, it } from "vitest";
import { executionTable, statusBlock } from "../../src/cli/execution-format.js";
import { scheduleTable } from "../../src/cli/schedule-format.js";
import type { ExecutionJson, ScheduleJson } from "../../src/client/types.js";
import { everyTenSeconds, hourlyCheck, manualRun, PS_NOW } from "./fixtures/api.js";

const lines = (...l: string[]): string => `${l.join("\n")}\n`;
const LAST = "hourly-check:2026-11-15T18:00:00Z";
const HEADER =
  "SCHEDULE                 WORKFLOW             TIMING                           STATE    NEXT FIRE              LAST EXECUTION";
const row = (last: string) =>
  `hourly-check             OrderProcessing      every 1h                         active   2026-11-15T19:00:12.359Z ${last}`;

describe("orbit schedule list", () => {
  const cancelled = (errorType?: string): ScheduleJson => ({
    ...hourlyCheck,
    last_execution_id: LAST,
    last_outcome: {
      status: "CANCELLED",
      execution_id: LAST,
      ended_at: "2026-11-15T18:00:05Z",
      error: "user cancel; compensation failed: charge: refund API down",
      ...(errorType === undefined ? {} : { error_type: errorType }),
    },
  });

  it("says COMPENSATION FAILED of a cancel whose compensation failed, with and without --wide", () => {
    const s = cancelled("CompensationFailed");
    expect(scheduleTable([s])).toBe(lines(HEADER, row(`${LAST} (COMPENSATION FAILED)`)));
    // Longer than OUTCOME's 14: it pushes the line on with one space, as the seed's jittered time.
    expect(scheduleTable([s], { wide: true }).split("\n")[1]).toBe(
      "hourly-check             OrderProcessing      every 1h                         active   COMPENSATION FAILED 2026-11-15T19:00:12.359Z hourly-check:2026-11-15T18:00:00Z",
    );
    // A clean cancel reads as before: the seed's row, and CANCELLED under --wide.
    expect(scheduleTable([cancelled()])).toBe(lines(HEADER, row(LAST)));
    expect(scheduleTable([cancelled()], { wide: true })).toContain(" CANCELLED     2026-11-15T19:00:12.359Z");
    // A streak of failures before it still reads as the streak.
    expect(scheduleTable([{ ...s, consecutive_failures: 2 }])).toBe(lines(HEADER, row(`${LAST} (FAILED x2)`)));
  });

  it("says NO WORKER without --wide too, when the last run waits and no live worker runs it", () => {
    const waiting = { ...hourlyCheck, last_execution_id: LAST };
    const waits = new Map([["hourly-check", "1.0.0"]]);
    expect(scheduleTable([waiting], { polled: new Set(["Reports"]), waits })).toBe(
      lines(HEADER, row(`${LAST} (NO WORKER)`)),
    );
    // A worker runs it, or the workers could not be listed: the seed's row.
    const runs = new Set(["OrderProcessing", "OrderProcessing@1.0.0"]);
    expect(scheduleTable([waiting], { polled: runs, waits })).toBe(lines(HEADER, row(LAST)));
    expect(scheduleTable([waiting], { polled: null, waits })).toBe(lines(HEADER, row(LAST)));
  });
});

describe("a timed-out execution", () => {
  const deadline = "2026-11-15T18:52:25.296Z";
  const message = `run_timeout exceeded: the execution did not end by ${deadline}`;
  const error = { type: "Timeout", timeout: "run_timeout", message, deadline };
  const timedOut: ExecutionJson = { ...manualRun, status: "FAILED", cancel_reason: `timeout: ${message}`, error };

  it("reads TIMED OUT in orbit ps, as the schedule list and get say it", () => {
    const [first] = everyTenSeconds;
    if (first === undefined) throw new Error("no fixture");
    const table = executionTable([{ ...first, ...timedOut, execution_id: first.execution_id }], PS_NOW);
    expect(table.split("\n")[1]).toMatch(/ {2}1\.0\.0 {6}TIMED OUT {5}\S+$/);
    // Any other FAILED execution stays FAILED, and the seed's COMPLETED rows are unchanged.
    const failed = { ...first, status: "FAILED" as const, error: { message: "boom", type: "Error" } };
    expect(executionTable([failed], PS_NOW).split("\n")[1]).toMatch(/ {2}1\.0\.0 {6}FAILED {8}\S+$/);
  });

  it("prints the timeout in orbit status as a timeout, not a cancel reason nobody gave", () => {
    const block = statusBlock(timedOut, 0);
    expect(block.split("\n")[0]).toBe(
      "TIMED OUT nightly-orders:manual:2026-11-15T18:52:22.296Z  OrderProcessing@1.0.0",
    );
    expect(block).not.toContain("cancel reason");
    expect(block.split("\n").slice(3)).toEqual([`  timed out: ${message}`, ""]);
    // What the compensations did not undo is more than the timeout said: the error says it.
    const left = { ...timedOut, error: { ...error, message: `${message}; compensation failed: charge` } };
    expect(statusBlock(left, 0).split("\n").slice(3)).toEqual([
      `  timed out: ${message}`,
      `  error: ${message}; compensation failed: charge`,
      "",
    ]);
    // Timed out before a worker took it: no cancel at all, the error alone.
    const unheld = { ...timedOut };
    delete unheld.cancel_reason;
    expect(statusBlock(unheld, 0).split("\n").slice(3)).toEqual([`  error: ${message}`, ""]);
    // Someone's cancel is still a cancel reason.
    const cancelled = { ...timedOut, status: "CANCELLED" as const, cancel_reason: "operator", error: null };
    expect(statusBlock(cancelled, 0)).toContain("\n  cancel reason: operator\n");
  });
});

describe("an execution that ran across a backward step of the server's clock", () => {
  it("prints its elapsed time as unknown, not 0ms", () => {
    // Its end recorded 59 min before its start: a 40 s run across a step of -1 h (a tester).
    const stepped: ExecutionJson = {
      ...manualRun,
      started_at: "2026-12-07T22:02:53.001Z",
      ended_at: "2026-12-07T21:03:33.095Z",
    };
    expect(statusBlock(stepped, 0).split("\n")[2]).toBe(
      "  elapsed: unknown (the server's clock went back while it ran)",
    );
    expect(statusBlock(manualRun, 0).split("\n")[2]).toBe("  elapsed: 33ms");
  });
});
