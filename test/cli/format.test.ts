import { describe, expect, it } from "vitest";
import {
  latestVersions,
  noWorkerCandidates,
  polledWorkflows,
  registeredVersions,
  scheduleBlock,
  scheduleTable,
} from "../../src/cli/schedule-format.js";
import type { ScheduleJson } from "../../src/client/types.js";
import { parseJsonText } from "../../src/domain/json-text.js";
import { hourlyCheck, nightlyOrders } from "./fixtures/api.js";

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

  it("says a schedule whose latest occurrence was missed in the lists and the block", () => {
    // Its only occurrence missed (the server down past the catch-up window): `-` everywhere, as a
    // schedule that never came due, and `get` said only `skipped: 1` (a tester).
    const missed = {
      ...nightlyOrders,
      skipped: 1,
      last_tick: {
        id: 1,
        kind: "skipped",
        occurrence: "2026-11-15T01:00:00Z",
        reason: "missed",
        count: 1,
        range_from: "2026-11-15T01:00:00Z",
        range_to: "2026-11-15T01:00:00Z",
        recorded_at: "2026-11-15T01:03:00.120Z",
      },
    };
    expect(scheduleTable([missed])).toContain("   2026-11-16T01:00:00Z   - (MISSED)\n");
    expect(scheduleTable([missed], { wide: true })).toContain("   active   MISSED        2026-11-16");
    expect(scheduleBlock(missed)).toContain(
      "\n  last run:   -\n  not started: 2026-11-15T01:00:00Z missed (orbit schedule occurrences nightly-orders)\n",
    );
    const range = { ...missed.last_tick, occurrence: null, count: 3, range_to: "2026-11-17T01:00:00Z" };
    expect(scheduleBlock({ ...missed, last_tick: range })).toContain(
      "  not started: 3 occurrences from 2026-11-15T01:00:00Z to 2026-11-17T01:00:00Z missed (",
    );
    // A skip for overlap is the policy at work, the run it waits on shown already: not said again.
    const overlap = { ...missed.last_tick, reason: "overlap" };
    expect(scheduleTable([{ ...missed, last_tick: overlap }])).toContain("   2026-11-16T01:00:00Z   -\n");
    expect(scheduleBlock({ ...missed, last_tick: overlap })).not.toContain("not started");
    const full = { ...missed.last_tick, reason: "buffer_full" };
    expect(scheduleBlock({ ...missed, last_tick: full })).toContain(
      "  not started: 2026-11-15T01:00:00Z buffer_full (",
    );
    // The seed's block, of a schedule with no ledger row, is unchanged.
    expect(scheduleBlock(nightlyOrders)).not.toContain("not started");
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
    // Its next fire is the jittered occurrence as the server computes it (the seed's 12.359 s is an
    // illustration): not a refused start's retry, which the list says too (schedule-notes.test.ts).
    const jittered = { ...hourlyCheck, next_fire_at: "2026-11-15T19:00:03.583Z" };
    const refused = { ...jittered, last_error: "input does not match Reports@2.0.0: /region is required" };
    expect(scheduleTable([refused], { wide: true })).toBe(
      lines(
        "SCHEDULE                 WORKFLOW             TIMING                           STATE    OUTCOME       NEXT FIRE              LAST EXECUTION",
        "hourly-check             OrderProcessing      every 1h                         active   START FAILED  2026-11-15T19:00:03.583Z -",
      ),
    );
    // The seed's columns, the refusal said after the last execution.
    expect(scheduleTable([refused])).toBe(scheduleTable([jittered]).replace(/ -\n$/, " - (START FAILED)\n"));
  });

  it("--wide shows NO WORKER while the last run waits and no live worker polls its workflow", () => {
    const waiting = { ...hourlyCheck, last_execution_id: "hourly-check:2026-11-15T18:00:00Z" };
    const row = (outcome: string) =>
      lines(
        "SCHEDULE                 WORKFLOW             TIMING                           STATE    OUTCOME       NEXT FIRE              LAST EXECUTION",
        `hourly-check             OrderProcessing      every 1h                         active   ${outcome.padEnd(14)}2026-11-15T19:00:12.359Z hourly-check:2026-11-15T18:00:00Z`,
      );
    const waits = new Map([["hourly-check", "1.0.0"]]);
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
    const runs = new Set(["OrderProcessing", "OrderProcessing@1.0.0"]);
    expect(scheduleTable([waiting], { wide: true, polled: runs, waits })).toBe(row("-"));
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

  it("--wide shows NO WORKER when the live workers run the workflow but not the version its last run is on", () => {
    const waiting = { ...hourlyCheck, last_execution_id: "hourly-check:2026-11-15T18:00:00Z" };
    // The last execution is RUNNING on this version.
    const on = (version: string) => new Map([["hourly-check", version]]);
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
    const waits = on("2.0.0");
    expect(outcome(scheduleTable([waiting], { wide: true, polled, latest, waits }))).toBe("NO WORKER");
    const versions = registeredVersions([workflow("2.0.0", false), workflow("1.0.0", false)]);
    expect(noWorkerCandidates([waiting], polled, latest, versions)).toHaveLength(1);
    // Pinned to the version a worker runs, or 2.0.0 deprecated (latest skips it): no claim.
    const pinned = { ...waiting, version: "1.0.0" };
    expect(outcome(scheduleTable([pinned], { wide: true, polled, latest, waits: on("1.0.0") }))).toBe("-");
    const skipped = latestVersions([workflow("2.0.0", true), workflow("1.0.0", false)]);
    expect(outcome(scheduleTable([waiting], { wide: true, polled, latest: skipped, waits: on("1.0.0") }))).toBe("-");
    // Pinned to a version no live worker runs; the versions unknown (not listed): the run's own.
    expect(
      outcome(scheduleTable([{ ...waiting, version: "2.0.0" }], { wide: true, polled, latest: null, waits })),
    ).toBe("NO WORKER");
    expect(outcome(scheduleTable([waiting], { wide: true, polled, latest: null, waits: on("1.0.0") }))).toBe("-");
    // The workers moved to 2.0.0 while a run started on 1.0.0 waits: it waits for a 1.0.0 worker
    // that will not come, and the schedule's starts (2.0.0) are polled. The list called it healthy.
    const moved = polledWorkflows(
      [{ worker_id: "c", status: "live", workflows: [{ name: "OrderProcessing", version: "2.0.0" }] }].map((w) => ({
        ...w,
        first_seen_at: "",
        last_seen_at: "",
        running_tasks: 0,
      })),
    );
    expect(noWorkerCandidates([waiting], moved, latest, versions)).toHaveLength(1);
    expect(noWorkerCandidates([waiting], moved, latest, null)).toHaveLength(0);
    expect(outcome(scheduleTable([waiting], { wide: true, polled: moved, latest, waits: on("1.0.0") }))).toBe(
      "NO WORKER",
    );
    expect(outcome(scheduleTable([waiting], { wide: true, polled: moved, latest, waits: on("2.0.0") }))).toBe("-");
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
