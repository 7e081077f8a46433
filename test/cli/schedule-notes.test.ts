/**
 * What `orbit schedule get`, `list` and `orbit status` say where they said too little (testers):
 * a buffer held off by another schedule's run on its concurrency key said it started "when the
 * running execution ends", of a schedule with none running; a refused start waiting for its retry
 * showed an odd NEXT FIRE (`…:00.286Z`, later than the occurrence) without a word; `throw
 * undefined` printed `error: undefined`.
 */
import { describe, expect, it } from "vitest";
import { statusBlock } from "../../src/cli/execution-format.js";
import { scheduleBlock, scheduleTable } from "../../src/cli/schedule-format.js";
import type { ExecutionJson, ScheduleJson } from "../../src/client/types.js";
import { errorSummary } from "../../src/scheduler/outcomes.js";
import { errorJson } from "../../src/worker/errors.js";
import { ORDER_INPUT, ORDER_SCHEMA, startTestServer } from "../api/helpers.js";
import { FakeServer } from "./fake-server.js";
import { hourlyCheck, manualRun, nightlyOrders } from "./fixtures/api.js";

const bufferOne: ScheduleJson = {
  ...nightlyOrders,
  schedule_id: "buf",
  overlap: "buffer_one",
  concurrency_key: "k1",
  fired: 0,
  skipped: 1008,
  buffered: ["2026-11-16T01:00:00Z"],
};
const bufferedLine = (s: string): string | undefined => s.split("\n").find((l) => l.startsWith("  buffered:"));

describe("a buffered occurrence says what it waits for", () => {
  it("the concurrency key, held by another schedule, when the schedule runs nothing", () => {
    expect(bufferedLine(scheduleBlock(bufferOne))).toBe(
      "  buffered:   2026-11-16T01:00:00Z (waits for the concurrency key k1, held by another schedule's execution)",
    );
    // Its last run ended (the outcome is its own, COMPLETED): the key is what holds it.
    const ended = {
      ...bufferOne,
      last_execution_id: "buf:2026-11-15T01:00:00Z",
      last_outcome: {
        status: "COMPLETED" as const,
        execution_id: "buf:2026-11-15T01:00:00Z",
        ended_at: "2026-11-15T01:00:01Z",
        error: null,
      },
    };
    expect(bufferedLine(scheduleBlock(ended))).toContain("(waits for the concurrency key k1, held by another");
  });

  it("its own running execution, when get read it RUNNING", () => {
    const running = { ...bufferOne, last_execution_id: "buf:2026-11-15T01:00:00Z" };
    expect(bufferedLine(scheduleBlock(running, { status: "RUNNING", run: 1 }))).toBe(
      "  buffered:   2026-11-16T01:00:00Z (starts when its running execution ends)",
    );
    // Unread (create, update, or the read failed): both are named.
    expect(bufferedLine(scheduleBlock(running))).toBe(
      "  buffered:   2026-11-16T01:00:00Z (starts when its slot is free (its running execution, or concurrency key k1))",
    );
  });

  it("orbit schedule get reads the last execution to tell", async () => {
    const running = { ...bufferOne, last_execution_id: "buf:2026-11-15T01:00:00Z" };
    const server = new FakeServer((req) => {
      if (req.path === "/v1/schedules/buf") return { status: 200, body: running };
      if (req.path === "/v1/executions/buf%3A2026-11-15T01%3A00%3A00Z") {
        return { status: 200, body: { ...manualRun, execution_id: running.last_execution_id, status: "RUNNING" } };
      }
      return undefined;
    });
    const r = await server.run(["schedule", "get", "buf"]);
    expect(r.code, r.stderr).toBe(0);
    expect(bufferedLine(r.stdout)).toBe("  buffered:   2026-11-16T01:00:00Z (starts when its running execution ends)");
  });

  it("without a concurrency key, the running execution, as before", () => {
    const plain = { ...bufferOne, concurrency_key: undefined };
    expect(bufferedLine(scheduleBlock(plain))).toBe(
      "  buffered:   2026-11-16T01:00:00Z (starts when the running execution ends)",
    );
  });
});

describe("a refused start waiting for its retry", () => {
  // hourly-check's next fire with its 30 s jitter, as the server computes it (src/time/jitter.ts).
  const jitteredFailed: ScheduleJson = { ...hourlyCheck, next_fire_at: "2026-11-15T19:00:03.583Z", last_error: "x" };
  // The occurrence 01:00 was refused; the loop tries it again 5 s later (docs/scheduling.md).
  const retrying: ScheduleJson = {
    ...nightlyOrders,
    last_error: "too many executions are running (--max-active-executions 10)",
    next_fire_at: "2026-11-16T01:00:05.286Z",
  };

  it("labels the pending fire in orbit schedule get", () => {
    const block = scheduleBlock(retrying);
    expect(block).toContain(
      "  next fire:  2026-11-16T01:00:05.286Z (retrying a refused start)\n  next fires:\n    2026-11-16T01:00:00Z\n",
    );
    // The seed's block, and a jittered next fire, have no such line.
    expect(scheduleBlock(nightlyOrders)).not.toContain("next fire:");
    expect(scheduleBlock({ ...jitteredFailed, last_error: "an earlier dead letter's error" })).not.toContain(
      "next fire:",
    );
  });

  it("says so after the last execution in the list, keeping the seed's columns", () => {
    const table = scheduleTable([retrying, hourlyCheck]);
    expect(table.split("\n")).toEqual([
      "SCHEDULE                 WORKFLOW             TIMING                           STATE    NEXT FIRE              LAST EXECUTION",
      'nightly-orders           OrderProcessing      cron "0 2 * * *" Europe/Berlin   active   2026-11-16T01:00:05.286Z - (START FAILED, retrying at NEXT FIRE)',
      "hourly-check             OrderProcessing      every 1h                         active   2026-11-15T19:00:12.359Z -",
      "",
    ]);
    // A start that failed and is not being retried (a dead letter) keeps its note.
    const dead = { ...nightlyOrders, last_error: "workflow OrderProcessing is not registered" };
    expect(scheduleTable([dead]).split("\n")[1]).toMatch(/ - \(START FAILED\)$/);
    // A jittered schedule whose last start failed: its next fire is its jitter, not a retry.
    expect(scheduleTable([jitteredFailed]).split("\n")[1]).toMatch(/ - \(START FAILED\)$/);
  });

  it("as a real server shows it: a start refused for its input, retried 5 s later", async () => {
    const t = await startTestServer();
    try {
      await t.registerOrders();
      const body = {
        schedule_id: "refused",
        workflow: "OrderProcessing",
        interval: "10s",
        jitter: "5s",
        input: ORDER_INPUT,
      };
      expect((await t.call("POST", "/v1/schedules", body)).status).toBe(201);
      const before = (await t.ok("GET", "/v1/schedules/refused")) as ScheduleJson;
      // Jittered, not refused: no label (the CLI computes the server's jitter, src/time/jitter.ts).
      expect(before.next_fire_at).not.toBe(before.next_fire_times[0]);
      expect(scheduleBlock({ ...before, last_error: "an earlier error" })).not.toContain("next fire:");
      // Version 2.0.0 requires a field the schedule's input lacks: each start is refused.
      const v2 = { ...ORDER_SCHEMA, required: ["region"] };
      await t.ok("POST", "/v1/workflows", { name: "OrderProcessing", version: "2.0.0", input_schema: v2 });
      const s = (await t.until(
        async () => {
          t.clock.advance(1000);
          return (await t.ok("GET", "/v1/schedules/refused")) as ScheduleJson;
        },
        (v) => v.last_error !== null,
        "a refused start",
      )) as ScheduleJson;
      expect(s.next_fire_at).not.toBe(s.next_fire_times[0]);
      expect(scheduleBlock(s)).toContain(`  next fire:  ${s.next_fire_at} (retrying a refused start)\n`);
      expect(scheduleTable([s]).split("\n")[1]).toMatch(/ - \(START FAILED, retrying at NEXT FIRE\)$/);
    } finally {
      await t.stop();
    }
  });
});

describe("a thrown value that is not an Error", () => {
  /** The schedule's outcome and the execution as the server stores what the worker reported. */
  function failedWith(thrown: unknown): { schedule: ScheduleJson; execution: ExecutionJson } {
    const reported = errorJson(thrown);
    const summary = errorSummary(reported);
    const execution: ExecutionJson = { ...manualRun, status: "FAILED", error: reported };
    const schedule: ScheduleJson = {
      ...nightlyOrders,
      last_execution_id: execution.execution_id,
      last_outcome: {
        status: "FAILED",
        execution_id: execution.execution_id,
        ended_at: "2026-11-15T18:52:22.329Z",
        error: summary.message,
        ...(summary.type === null ? {} : { error_type: summary.type }),
      },
    };
    return { schedule, execution };
  }

  it("throw undefined reads as what it is in orbit schedule get and orbit status", () => {
    const { schedule, execution } = failedWith(undefined);
    expect(scheduleBlock(schedule)).toContain("\n  error:      (the code threw undefined)\n");
    expect(statusBlock(execution, 0)).toContain("\n  error: (the code threw undefined)\n");
  });

  it("throw null too; a thrown string 'undefined' is shown as it is", () => {
    expect(statusBlock(failedWith(null).execution, 0)).toContain("\n  error: (the code threw null)\n");
    expect(scheduleBlock(failedWith(null).schedule)).toContain("\n  error:      (the code threw null)\n");
    expect(statusBlock(failedWith("undefined").execution, 0)).toContain("\n  error: undefined\n");
  });
});
