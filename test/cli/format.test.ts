import { describe, expect, it } from "vitest";
import { shortDuration } from "../../src/cli/durations.js";
import { executionTable, statusBlock, workflowTable } from "../../src/cli/execution-format.js";
import { workerTable } from "../../src/cli/outcomes.js";
import {
  latestVersions,
  noWorkerCandidates,
  occurrenceTable,
  polledWorkflows,
  scheduleBlock,
  scheduleTable,
} from "../../src/cli/schedule-format.js";
import type { ExecutionJson, ScheduleJson } from "../../src/client/types.js";
import { parseJsonText } from "../../src/domain/json-text.js";
import { everyTenSeconds, hourlyCheck, manualRun, nightlyOrders, PS_NOW } from "./fixtures/api.js";

const lines = (...l: string[]): string => `${l.join("\n")}\n`;

describe("the schedule block (create, get, update)", () => {
  it("prints the seed's block, the input's numbers as written (120.0)", () => {
    const input = parseJsonText(
      '{"order_id":"N-1","customer_id":"cust-1","amount":120.0,"items":[{"sku":"BOOK-1","quantity":1}]}',
    ) as ScheduleJson["input"];
    expect(scheduleBlock({ ...nightlyOrders, input })).toBe(
      lines(
        'active nightly-orders  cron "0 2 * * *" Europe/Berlin',
        "  workflow:   OrderProcessing (latest version)",
        '  input:      {"order_id":"N-1","customer_id":"cust-1","amount":120.0,"items":[{"sku":"BOOK-1","quantity":1}]}',
        "  overlap:    skip   catchup: skip_missed",
        "  description: Nightly reconciliation order",
        "  fired:      0   skipped: 0",
        "  last fire:  -",
        "  last run:   -",
        "  next fires:",
        "    2026-11-16T01:00:00Z",
        "    2026-11-17T01:00:00Z",
        "    2026-11-18T01:00:00Z",
        "    2026-11-19T01:00:00Z",
        "    2026-11-20T01:00:00Z",
      ),
    );
  });

  it("shows a pinned version, optional settings after the description, and the last run", () => {
    const block = scheduleBlock({
      ...nightlyOrders,
      version: "1.0.0",
      state: "paused",
      paused: true,
      pause_note: "inventory freeze",
      dst: "wall_clock",
      jitter: "30s",
      concurrency_key: "orders",
      last_error: "workflow OrderProcessing is not registered",
      fired: 3,
      skipped: 1,
      last_fire_at: "2026-11-15T01:00:00Z",
      last_execution_id: "nightly-orders:2026-11-15T01:00:00Z",
      next_fire_at: null,
    });
    expect(block.split("\n").slice(0, 14)).toEqual([
      'paused nightly-orders  cron "0 2 * * *" Europe/Berlin',
      "  workflow:   OrderProcessing@1.0.0",
      expect.stringMatching(/^ {2}input: {6}\{/),
      "  overlap:    skip   catchup: skip_missed",
      "  description: Nightly reconciliation order",
      "  dst:        wall_clock",
      "  concurrency key: orders",
      "  jitter:     30s",
      "  paused:     inventory freeze",
      "  last error: workflow OrderProcessing is not registered",
      "  fired:      3   skipped: 1",
      "  last fire:  2026-11-15T01:00:00Z",
      "  last run:   nightly-orders:2026-11-15T01:00:00Z",
      "  next fires (after a resume now):",
    ]);
  });

  it("shows what an overlap buffer holds: the one occurrence, or how many and the oldest", () => {
    const when = "(starts when the running execution ends)";
    const one = scheduleBlock({
      ...nightlyOrders,
      paused: false,
      overlap: "buffer_one",
      buffered: ["2026-11-16T01:00:00Z"],
    });
    expect(one).toContain(`  buffered:   2026-11-16T01:00:00Z ${when}\n`);
    const two = scheduleBlock({
      ...nightlyOrders,
      paused: false,
      overlap: "buffer_all",
      buffered: ["2026-11-16T01:00:00Z", "2026-11-17T01:00:00Z"],
    });
    expect(two).toContain(`  buffered:   2, oldest 2026-11-16T01:00:00Z ${when}\n`);
    expect(scheduleBlock(nightlyOrders)).not.toContain("buffered:");
    // Paused, it waits for the resume, not for the running execution (docs/scheduling.md § Pause and the buffer).
    const held = scheduleBlock({
      ...nightlyOrders,
      paused: true,
      overlap: "buffer_one",
      buffered: ["2026-11-16T01:00:00Z"],
    });
    expect(held).toContain(
      "  buffered:   2026-11-16T01:00:00Z (held while paused; starts after a resume once nothing runs)\n",
    );
    const last = scheduleBlock({
      ...nightlyOrders,
      paused: true,
      overlap: "buffer_one",
      buffered: ["2026-11-16T01:00:00Z"],
      max_runs: 2,
      remaining_runs: 0,
    });
    expect(last).toContain("(none left: the last is buffered, held while paused)");
  });

  it("says when the schedule's alerts fail (notify_failure)", () => {
    const block = scheduleBlock({
      ...hourlyCheck,
      notify: [{ url: "https://hooks.example/orbit" }],
      notify_failure: {
        event: "failure",
        url: "https://hooks.example/orbit",
        state: "failed",
        attempts: 8,
        error: "HTTP 500",
        created_at: "2026-11-15T19:00:00Z",
      },
    });
    expect(block).toContain(
      "  notify failing: the failure alert to https://hooks.example/orbit failed 8 time(s), given up: HTTP 500\n",
    );
  });

  it("prints an interval and an ended schedule", () => {
    const block = scheduleBlock({ ...hourlyCheck, state: "ended", next_fire_at: null, next_fire_times: [] });
    expect(block.split("\n")[0]).toBe("ended hourly-check  every 1h");
    expect(block).toContain("  jitter:     30s\n");
    expect(block.endsWith("  next fires: -\n")).toBe(true);
  });

  it("counts dead letters as the schedule lists them: five means five or more", () => {
    const letter = (i: number) => ({
      id: i,
      kind: "dead_letter",
      occurrence: `2026-11-15T0${i}:00:00Z`,
      error: "input does not match",
      recorded_at: "2026-11-15T10:00:00Z",
    });
    const two = scheduleBlock({ ...nightlyOrders, dead_letters: [letter(2), letter(1)] });
    expect(two).toContain("  dead letters: 2, latest: input does not match\n");
    const five = scheduleBlock({ ...nightlyOrders, dead_letters: [5, 4, 3, 2, 1].map(letter) });
    expect(five).toContain("  dead letters: 5 or more, latest: input does not match\n");
  });

  it("heads a paused schedule's next fires as what a resume now would fire", () => {
    const times = ["2026-11-16T01:00:00Z", "2026-11-17T01:00:00Z"];
    const block = scheduleBlock({
      ...nightlyOrders,
      state: "paused",
      paused: true,
      next_fire_at: null,
      next_fire_times: times,
    });
    expect(block.split("\n")[0]).toBe(`paused nightly-orders  cron "0 2 * * *" Europe/Berlin`);
    expect(block.endsWith(`  next fires (after a resume now):\n    ${times[0]}\n    ${times[1]}\n`)).toBe(true);
  });
});

describe("orbit schedule list", () => {
  it("prints the seed's table, to the character", () => {
    expect(scheduleTable([hourlyCheck, nightlyOrders])).toBe(
      lines(
        "SCHEDULE                 WORKFLOW             TIMING                           STATE    NEXT FIRE              LAST EXECUTION",
        "hourly-check             OrderProcessing      every 1h                         active   2026-11-15T19:00:12.359Z -",
        'nightly-orders           OrderProcessing      cron "0 2 * * *" Europe/Berlin   active   2026-11-16T01:00:00Z   -',
      ),
    );
  });

  it("keeps the seed's columns once runs ended, a failure said after its id; --wide adds OUTCOME after STATE", () => {
    const failed = {
      ...nightlyOrders,
      last_execution_id: "nightly-orders:2026-11-15T01:00:00Z",
      last_outcome: {
        status: "FAILED" as const,
        execution_id: "nightly-orders:2026-11-15T01:00:00Z",
        ended_at: "2026-11-15T01:00:02.120Z",
        error: "card declined",
      },
      consecutive_failures: 2,
    };
    expect(scheduleTable([failed])).toBe(
      lines(
        "SCHEDULE                 WORKFLOW             TIMING                           STATE    NEXT FIRE              LAST EXECUTION",
        'nightly-orders           OrderProcessing      cron "0 2 * * *" Europe/Berlin   active   2026-11-16T01:00:00Z   nightly-orders:2026-11-15T01:00:00Z (FAILED x2)',
      ),
    );
    // A completed or cancelled last run is the seed's row.
    const completed = {
      ...failed,
      last_outcome: { ...failed.last_outcome, status: "COMPLETED" as const, error: null },
    };
    expect(scheduleTable([completed])).toContain("   nightly-orders:2026-11-15T01:00:00Z\n");
    // A cancelled run does not end a streak of failures (it counts neither way): a cancel_previous
    // schedule whose every run failed read CANCELLED, its replaced run having ended last (a tester).
    const cancelled = {
      ...failed,
      last_outcome: { ...failed.last_outcome, status: "CANCELLED" as const, error: "replaced by the next occurrence" },
    };
    expect(scheduleTable([cancelled])).toContain("   nightly-orders:2026-11-15T01:00:00Z (FAILED x2)\n");
    expect(scheduleTable([cancelled], { wide: true })).toContain("   active   FAILED x2     2026-11-16");
    expect(scheduleTable([{ ...cancelled, consecutive_failures: 0 }], { wide: true })).toContain(" CANCELLED     ");
    expect(scheduleBlock(cancelled)).toContain(
      "\n  outcome:    CANCELLED  nightly-orders:2026-11-15T01:00:00Z at 2026-11-15T01:00:02.120Z\n  reason:     replaced by the next occurrence\n  failing:    2 run(s) in a row failed before it; a cancelled run counts neither way\n",
    );
    expect(scheduleTable([hourlyCheck, failed], { wide: true })).toBe(
      lines(
        "SCHEDULE                 WORKFLOW             TIMING                           STATE    OUTCOME       NEXT FIRE              LAST EXECUTION",
        "hourly-check             OrderProcessing      every 1h                         active   -             2026-11-15T19:00:12.359Z -",
        'nightly-orders           OrderProcessing      cron "0 2 * * *" Europe/Berlin   active   FAILED x2     2026-11-16T01:00:00Z   nightly-orders:2026-11-15T01:00:00Z',
      ),
    );
  });

  it("--wide shows START FAILED while a schedule's occurrences cannot start, whatever its last run", () => {
    const refused = { ...hourlyCheck, last_error: "input does not match Reports@2.0.0: /region is required" };
    expect(scheduleTable([refused], { wide: true })).toBe(
      lines(
        "SCHEDULE                 WORKFLOW             TIMING                           STATE    OUTCOME       NEXT FIRE              LAST EXECUTION",
        "hourly-check             OrderProcessing      every 1h                         active   START FAILED  2026-11-15T19:00:12.359Z -",
      ),
    );
    // The seed's columns, the refusal said after the last execution.
    expect(scheduleTable([refused])).toBe(scheduleTable([hourlyCheck]).replace(/ -\n$/, " - (START FAILED)\n"));
  });

  it("--wide shows NO WORKER while the last run waits and no live worker polls its workflow", () => {
    const waiting = { ...hourlyCheck, last_execution_id: "hourly-check:2026-11-15T18:00:00Z" };
    const row = (outcome: string) =>
      lines(
        "SCHEDULE                 WORKFLOW             TIMING                           STATE    OUTCOME       NEXT FIRE              LAST EXECUTION",
        `hourly-check             OrderProcessing      every 1h                         active   ${outcome.padEnd(14)}2026-11-15T19:00:12.359Z hourly-check:2026-11-15T18:00:00Z`,
      );
    const waits = new Set(["hourly-check"]);
    expect(scheduleTable([waiting], { wide: true, polled: new Set(["Reports"]), waits })).toBe(row("NO WORKER"));
    expect(noWorkerCandidates([waiting], new Set(["Reports"]), null).map((s) => s.schedule_id)).toEqual([
      "hourly-check",
    ]);
    // The last execution ended, though the outcome names an earlier run that ended after it
    // (allow, cancel_previous, a backfill): not NO WORKER, which hid four failures (a tester).
    const failedEarlier = {
      ...waiting,
      consecutive_failures: 4,
      last_outcome: {
        status: "FAILED" as const,
        execution_id: "hourly-check:2026-11-15T17:00:00Z",
        ended_at: "2026-11-15T18:00:02.000Z",
        error: "boom",
      },
    };
    expect(scheduleTable([failedEarlier], { wide: true, polled: new Set(["Reports"]) })).toBe(row("FAILED x4"));
    // A worker polls it (the run is simply running), or the workers could not be listed: no claim.
    expect(scheduleTable([waiting], { wide: true, polled: new Set(["OrderProcessing"]), waits })).toBe(row("-"));
    expect(scheduleTable([waiting], { wide: true, polled: null, waits })).toBe(row("-"));
    // The last run ended: its outcome, whoever polls now.
    const ended = {
      ...waiting,
      last_outcome: {
        status: "COMPLETED" as const,
        execution_id: "hourly-check:2026-11-15T18:00:00Z",
        ended_at: "2026-11-15T18:00:01.000Z",
        error: null,
      },
    };
    expect(scheduleTable([ended], { wide: true, polled: new Set() })).toBe(row("COMPLETED"));
    const workers = [
      { worker_id: "a", status: "gone", workflows: [{ name: "OrderProcessing", version: "1.0.0" }] },
      { worker_id: "b", status: "live", workflows: [{ name: "Reports", version: "2.0.0" }] },
    ].map((w) => ({ ...w, first_seen_at: "", last_seen_at: "", running_tasks: 0 }));
    expect([...polledWorkflows(workers)]).toEqual(["Reports", "Reports@2.0.0"]);
  });

  it("--wide shows NO WORKER when the live workers run the workflow but not the version its starts take", () => {
    const waiting = { ...hourlyCheck, last_execution_id: "hourly-check:2026-11-15T18:00:00Z" };
    const waits = new Set(["hourly-check"]);
    const outcome = (table: string) => / (NO WORKER|-) +2026-/.exec(table.split("\n")[1] ?? "")?.[1];
    const polled = polledWorkflows(
      [
        { worker_id: "a", status: "live", workflows: [{ name: "OrderProcessing", version: "1.0.0" }] },
        { worker_id: "b", status: "gone", workflows: [{ name: "OrderProcessing", version: "2.0.0" }] },
      ].map((w) => ({ ...w, first_seen_at: "", last_seen_at: "", running_tasks: 0 })),
    );
    const workflow = (version: string, deprecated: boolean) => ({
      name: "OrderProcessing",
      version,
      input_schema: null,
      description: null,
      created_at: "2026-11-15T00:00:00.000Z",
      deprecated_at: deprecated ? "2026-11-15T00:00:00.000Z" : null,
    });
    // 2.0.0 registered before any worker runs it: the unpinned schedule's starts take it and wait.
    const latest = latestVersions([workflow("2.0.0", false), workflow("1.0.0", false)]);
    expect([...latest]).toEqual([["OrderProcessing", "2.0.0"]]);
    expect(outcome(scheduleTable([waiting], { wide: true, polled, latest, waits }))).toBe("NO WORKER");
    // Pinned to the version a worker runs, or 2.0.0 deprecated (latest skips it): no claim.
    expect(outcome(scheduleTable([{ ...waiting, version: "1.0.0" }], { wide: true, polled, latest, waits }))).toBe("-");
    const skipped = latestVersions([workflow("2.0.0", true), workflow("1.0.0", false)]);
    expect(outcome(scheduleTable([waiting], { wide: true, polled, latest: skipped, waits }))).toBe("-");
    // Pinned to a version no live worker runs; the versions unknown (not listed): by name only.
    expect(
      outcome(scheduleTable([{ ...waiting, version: "2.0.0" }], { wide: true, polled, latest: null, waits })),
    ).toBe("NO WORKER");
    expect(outcome(scheduleTable([waiting], { wide: true, polled, latest: null, waits }))).toBe("-");
    // Every version deprecated: the highest is what starts take.
    expect([...latestVersions([workflow("2.0.0", true), workflow("1.0.0", true)])]).toEqual([
      ["OrderProcessing", "2.0.0"],
    ]);
  });

  it("pushes a long value on with one space and shows a paused schedule's missing fire as -", () => {
    const long = {
      ...nightlyOrders,
      schedule_id: "a-very-long-schedule-id-over-25",
      state: "paused" as const,
      next_fire_at: null,
    };
    expect(scheduleTable([long]).split("\n")[1]).toBe(
      'a-very-long-schedule-id-over-25 OrderProcessing      cron "0 2 * * *" Europe/Berlin   paused   -                      -',
    );
  });
});

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
        recorded_at: "2026-11-15T18:51:30.1Z",
      },
    ]);
    expect(text).toBe(
      lines(
        "RECORDED                  KIND         OCCURRENCE                DETAIL",
        "2026-11-15T18:52:00.001Z  skipped      2026-11-15T18:51:40Z      missed  count 12 (from 2026-11-15T18:50:00Z to 2026-11-15T18:51:50Z)",
        "2026-11-15T18:51:40Z      skipped      2026-11-15T18:49:50Z      missed",
        "2026-11-15T18:51:31.5Z    skipped      -                         overlap",
        "2026-11-15T18:51:30.1Z    started      2026-11-15T18:51:30Z      orders-every-10s:2026-11-15T18:51:30Z",
      ),
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
