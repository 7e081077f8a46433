/**
 * The CLI's tables and blocks of executions, the ledger, workflows and workers, to the character
 * (the seed's `orbit ps` and `orbit status`; docs/cli.md). The schedule blocks and tables are
 * test/cli/format.test.ts's.
 */
import { describe, expect, it } from "vitest";
import { shortDuration } from "../../src/cli/durations.js";
import { executionTable, statusBlock, workflowTable } from "../../src/cli/execution-format.js";
import { workerTable } from "../../src/cli/outcomes.js";
import { occurrenceTable, scheduleBlock } from "../../src/cli/schedule-format.js";
import type { ExecutionJson } from "../../src/client/types.js";
import { everyTenSeconds, manualRun, nightlyOrders, PS_NOW } from "./fixtures/api.js";

const lines = (...l: string[]): string => `${l.join("\n")}\n`;

describe("orbit ps", () => {
  it("prints the seed's table, to the character", () => {
    expect(executionTable(everyTenSeconds, PS_NOW)).toBe(
      lines(
        "EXECUTION                              WORKFLOW                 VERSION    STATUS        AGE",
        "orders-every-10s:2026-11-15T18:51:30Z  OrderProcessing          1.0.0      COMPLETED     259ms",
        "orders-every-10s:2026-11-15T18:51:20Z  OrderProcessing          1.0.0      COMPLETED     10.3s",
        "orders-every-10s:2026-11-15T18:51:10Z  OrderProcessing          1.0.0      COMPLETED     20.3s",
      ),
    );
  });

  it.each([
    [0, "0ms"],
    [259, "259ms"],
    [999, "999ms"],
    [1000, "1.0s"],
    [10_259, "10.3s"],
    [59_940, "59.9s"],
    [59_960, "1m00s"],
    [312_000, "5m12s"],
    [3_599_999, "59m59s"],
    [3 * 3_600_000 + 4 * 60_000, "3h04m"],
    [2 * 86_400_000 + 5 * 3_600_000, "2d05h"],
    [-50, "0ms"],
  ])("AGE of %i ms is %s", (ms, text) => {
    expect(shortDuration(ms)).toBe(text);
  });
});

describe("orbit status", () => {
  it("prints the seed's block", () => {
    expect(statusBlock(manualRun, PS_NOW)).toBe(
      lines(
        "COMPLETED nightly-orders:manual:2026-11-15T18:52:22.296Z  OrderProcessing@1.0.0",
        "  schedule: nightly-orders",
        "  elapsed: 33ms",
      ),
    );
  });

  it("--wide adds the result of a completed execution as JSON, null included", () => {
    const result = (value: ExecutionJson["result"]): string | undefined =>
      statusBlock({ ...manualRun, result: value }, PS_NOW, true)
        .split("\n")
        .find((l) => l.startsWith("  result:"));
    // A string printed bare (`result: plain`), so the string "42" read as the number 42.
    expect(result("plain")).toBe('  result: "plain"');
    expect(result("42")).toBe('  result: "42"');
    expect(result(42)).toBe("  result: 42");
    expect(result({ ok: true, items: [1] })).toBe('  result: {"ok":true,"items":[1]}');
    // null (also what a workflow returning undefined, a function or a Symbol stores) printed no line.
    expect(result(null)).toBe("  result: null");
    // Escaped as JSON, and what JSON leaves raw (DEL, C1, bidi overrides) escaped for the terminal.
    expect(result("a\nb\u001b[2K\u007f\u202e")).toBe('  result: "a\\nb\\u001b[2K\\u007f\\u202e"');
    // Not without --wide, and not for a run that did not complete.
    expect(statusBlock({ ...manualRun, result: null }, PS_NOW)).not.toContain("result:");
    expect(statusBlock({ ...manualRun, status: "FAILED", result: null }, PS_NOW, true)).not.toContain("result:");
  });

  it("counts a running execution up to now and adds cancel reason and error", () => {
    const running = { ...manualRun, status: "RUNNING" as const, ended_at: null, schedule_id: null };
    expect(statusBlock(running, Date.parse("2026-11-15T18:52:32.796Z"))).toBe(
      lines("RUNNING nightly-orders:manual:2026-11-15T18:52:22.296Z  OrderProcessing@1.0.0", "  elapsed: 10.5s"),
    );
    const failed = {
      ...manualRun,
      status: "CANCELLED" as const,
      cancel_reason: "operator",
      error: { message: "boom" },
    };
    expect(statusBlock(failed, 0).split("\n").slice(3)).toEqual([
      "  cancel reason: operator",
      // The message a worker reported, and its step, as `orbit schedule get` prints an outcome's.
      "  error: boom",
      "",
    ]);
    const inStep = { ...failed, error: { message: 'card declined: {"x":1}', type: "Error", step: "charge" } };
    expect(statusBlock(inStep, 0)).toContain('\n  error: card declined: {"x":1} (in step charge)\n');
    // Any other shape stays JSON.
    expect(statusBlock({ ...failed, error: { code: 7 } }, 0)).toContain('\n  error: {"code":7}\n');
    // `throw new TypeError("")` printed `error: ` and nothing (a tester).
    const empty = { ...failed, error: { message: " ", type: "TypeError", step: "charge" } };
    expect(statusBlock(empty, 0)).toContain("\n  error: TypeError (thrown without a message) (in step charge)\n");
    // The SDK's own refusals name the step already: `step "s1": … (in step s1)` said it twice (a tester).
    const named = { ...failed, error: { message: 'step "s1": the result is not JSON: BigInt', step: "s1" } };
    expect(statusBlock(named, 0)).toContain('\n  error: step "s1": the result is not JSON: BigInt\n');
    // Another step's name, or one the message only begins like, still gets the suffix.
    const other = { ...failed, error: { message: 'step "s10": refused', step: "s1" } };
    expect(statusBlock(other, 0)).toContain('\n  error: step "s10": refused (in step s1)\n');
    const outcome = {
      ...nightlyOrders,
      last_outcome: {
        status: "FAILED" as const,
        execution_id: "nightly-orders:2026-11-15T01:00:00Z",
        ended_at: "2026-11-15T01:00:02.120Z",
        error: 'step "s1" was refused: too large',
        error_step: "s1",
      },
    };
    expect(scheduleBlock(outcome)).toContain('\n  error:      step "s1" was refused: too large\n');
    expect(statusBlock({ ...failed, error: { message: "" } }, 0)).toContain(
      "\n  error: Error (thrown without a message)\n",
    );
  });
});

describe("other tables", () => {
  it("prints ledger rows with their detail", () => {
    const text = occurrenceTable([
      {
        id: 3,
        kind: "skipped",
        occurrence: "2026-11-15T18:51:40Z",
        reason: "missed",
        count: 12,
        range_from: "2026-11-15T18:50:00Z",
        range_to: "2026-11-15T18:51:50Z",
        recorded_at: "2026-11-15T18:52:00.001Z",
      },
      {
        id: 4,
        kind: "skipped",
        occurrence: "2026-11-15T18:49:50Z",
        reason: "missed",
        count: 1,
        range_from: "2026-11-15T18:49:50Z",
        range_to: "2026-11-15T18:49:50Z",
        recorded_at: "2026-11-15T18:51:40Z",
      },
      { id: 2, kind: "skipped", occurrence: null, reason: "overlap", recorded_at: "2026-11-15T18:51:31.5Z" },
      {
        id: 1,
        kind: "started",
        occurrence: "2026-11-15T18:51:30Z",
        execution_id: "orders-every-10s:2026-11-15T18:51:30Z",
        status: "COMPLETED",
        recorded_at: "2026-11-15T18:51:30.1Z",
      },
    ]);
    expect(text).toBe(
      lines(
        "RECORDED                  KIND         OCCURRENCE                DETAIL",
        "2026-11-15T18:52:00.001Z  skipped      2026-11-15T18:51:40Z      missed  count 12 (from 2026-11-15T18:50:00Z to 2026-11-15T18:51:50Z)",
        "2026-11-15T18:51:40Z      skipped      2026-11-15T18:49:50Z      missed",
        "2026-11-15T18:51:31.5Z    skipped      -                         overlap",
        "2026-11-15T18:51:30.1Z    started      2026-11-15T18:51:30Z      orders-every-10s:2026-11-15T18:51:30Z  COMPLETED",
      ),
    );
  });

  it("says a started row's execution was deleted when the server no longer stores it", () => {
    // Retention deleted it: the API gives no status, and the column was blank (a tester).
    const row = {
      id: 1,
      kind: "started",
      occurrence: "2026-11-15T18:51:30Z",
      execution_id: "orders-every-10s:2026-11-15T18:51:30Z",
      recorded_at: "2026-11-15T18:51:30.1Z",
    };
    expect(occurrenceTable([row]).split("\n")[1]).toMatch(
      /orders-every-10s:2026-11-15T18:51:30Z {2}execution deleted \(retention\)$/,
    );
  });

  it("reads a started row whose run hit its timeout as TIMED OUT, as schedule get does", () => {
    const row = {
      id: 4,
      kind: "started",
      occurrence: "2026-11-15T19:00:00Z",
      execution_id: "slow:2026-11-15T19:00:00Z",
      status: "FAILED",
      recorded_at: "2026-11-15T19:00:00.2Z",
    };
    expect(occurrenceTable([{ ...row, error_type: "Timeout" }]).split("\n")[1]).toMatch(
      /slow:2026-11-15T19:00:00Z {2}TIMED OUT$/,
    );
    expect(occurrenceTable([{ ...row, error_type: "PaymentError" }]).split("\n")[1]).toMatch(/ {2}FAILED$/);
  });

  it("prints workflows", () => {
    expect(
      workflowTable([
        {
          name: "OrderProcessing",
          version: "1.0.0",
          input_schema: null,
          description: null,
          created_at: "x",
          deprecated_at: null,
        },
        {
          name: "OrderProcessing",
          version: "0.9.0",
          input_schema: null,
          description: "old",
          created_at: "x",
          deprecated_at: "y",
        },
      ]),
    ).toBe(
      lines(
        "NAME                     VERSION    DESCRIPTION",
        "OrderProcessing          1.0.0      -",
        "OrderProcessing          0.9.0      [deprecated] old",
      ),
    );
  });
});

describe("orbit workers", () => {
  it("prints the table of docs/cli.md § orbit workers, to the character", () => {
    const worker = {
      worker_id: "host:4242:a1b2c3",
      status: "live",
      workflows: [
        { name: "OrderProcessing", version: "1.0.0" },
        { name: "Nightly", version: "2.0.0" },
      ],
      first_seen_at: "2026-11-15T18:00:00Z",
      last_seen_at: "2026-11-15T18:51:00Z",
      running_tasks: 2,
    };
    expect(workerTable([worker], Date.parse("2026-11-15T18:51:03.100Z"))).toBe(
      lines(
        "WORKER                            STATUS  LAST SEEN RUNNING WORKFLOWS",
        "host:4242:a1b2c3                  live    3.1s      2       OrderProcessing@1.0.0, Nightly@2.0.0",
      ),
    );
  });
});
