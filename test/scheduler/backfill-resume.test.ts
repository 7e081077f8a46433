/**
 * A backfill of occurrences a fire has not decided yet (a paused span, or an outage's), then the
 * fire that decides them (docs/scheduling.md § Backfill): an occurrence whose execution exists is
 * accounted as that execution (a `started` row naming it), never skipped or buffered, and only an
 * execution still running occupies the overlap slot. Before, each existing execution counted as a
 * start that runs: a resume `{"catch_up": true}` after a backfill of the paused span whose runs had
 * all completed skipped every occurrence after the first for `overlap` and started nothing.
 */
import { expect, it } from "vitest";
import type { OverlapPolicy } from "../../src/domain/schedule.js";
import { formatInstant, parseInstant } from "../../src/time/format.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { accountsOf } from "./audit.js";
import { type Harness, makeHarness, ORDER_INPUT } from "./harness.js";

const at = (hms: string): number => parseInstant(`2026-12-05T03:${hms}Z`);
const idOf = (hms: string): string => `rb:${formatInstant(at(hms))}`;
/** 46:10-46:25: backfilled. 46:30-46:40: due at the resume, no execution yet (46:40 the fresh one). */
const BACKFILLED = ["46:10", "46:15", "46:20", "46:25"];
const NEW = ["46:30", "46:35", "46:40"];

/** What the fire makes of 46:30, 46:35 and 46:40 when nothing runs before them, per overlap policy. */
const NEW_ACCOUNTS: Record<OverlapPolicy, string[]> = {
  skip: ["started", "skipped:overlap", "skipped:overlap"],
  allow: ["started", "started", "started"],
  buffer_one: ["started", "buffered", "skipped:buffer_full"],
  buffer_all: ["started", "buffered", "buffered"],
  cancel_previous: ["started", "started", "started"],
};

describeEachDialect("scheduler: backfill of undecided occurrences, then the fire that decides them", (dialect) => {
  const db = useStore(dialect);

  /** rb at 46:01: every 5 s under `overlap`, catch_up, with `extra`. */
  async function created(overlap: OverlapPolicy, extra: Record<string, unknown>): Promise<Harness> {
    const h = await makeHarness(db.store, { now: "2026-12-05T03:46:01Z" });
    await h.scheduler.schedules.create({
      schedule_id: "rb",
      workflow: "OrderProcessing",
      input: ORDER_INPUT,
      interval: "5s",
      overlap,
      catchup: "catch_up",
      ...extra,
    });
    return h;
  }

  /**
   * rb fires 46:05 (it completes), then, paused or with its loop down, 46:05-46:29 is backfilled
   * at 46:29 (46:05 exists: 4 start); the runs of `ended` complete. The fire comes at 46:42.
   */
  async function backfilled(
    overlap: OverlapPolicy,
    how: "pause" | "outage",
    ended: readonly string[],
    extra: Record<string, unknown> = {},
  ): Promise<Harness> {
    const h = await created(overlap, { max_catch_up: 100, ...extra });
    await h.fireAt("2026-12-05T03:46:05Z");
    await h.executions.complete(idOf("46:05"), {});
    if (how === "pause") await h.scheduler.actions.pause("rb", {});
    h.clock.set(at("46:29"));
    const range = { start_at: "2026-12-05T03:46:05Z", end_at: "2026-12-05T03:46:29Z" };
    expect(await h.scheduler.actions.backfill("rb", range)).toMatchObject({
      occurrences: 5,
      started: 4,
      already_existed: 1,
    });
    for (const hms of ended) await h.executions.complete(idOf(hms), {});
    h.clock.set(at("46:42"));
    if (how === "pause") await h.scheduler.actions.resume("rb", { catch_up: true });
    await h.scheduler.loop.fireDue();
    return h;
  }

  const accounts = async (hms: string[]): Promise<string[]> => {
    const all = await accountsOf(db.store, "rb");
    return hms.map((o) => (all.get(at(o)) ?? []).join("+"));
  };
  const status = async (hms: string): Promise<string | undefined> => (await db.store.getExecution(idOf(hms)))?.status;
  /**
   * After the fire of `next` while `first` still ran: one execution runs, `next` under
   * cancel_previous (it replaced `first`), else `first`; and `next`'s account by the policy.
   */
  const onlyOneRuns = async (overlap: OverlapPolicy, first: string, next: string): Promise<void> => {
    const running = (await db.store.listExecutions({ scheduleId: "rb", status: "RUNNING", limit: 100 })).map(
      (e) => e.executionId,
    );
    expect(running).toEqual([overlap === "cancel_previous" ? idOf(next) : idOf(first)]);
    expect(await accounts([next])).toEqual([
      overlap === "skip" ? "skipped:overlap" : overlap === "cancel_previous" ? "started" : "buffered",
    ]);
  };

  for (const overlap of Object.keys(NEW_ACCOUNTS) as OverlapPolicy[]) {
    for (const how of ["pause", "outage"] as const) {
      it(`${overlap}, ${how}: the backfill's ended runs are accounted as themselves and block nothing`, async () => {
        const h = await backfilled(overlap, how, BACKFILLED);
        // Each backfilled occurrence: the backfill's started row and the fire's, one execution.
        expect(await accounts(BACKFILLED)).toEqual(BACKFILLED.map(() => "started+started"));
        for (const hms of BACKFILLED) {
          const named = (await db.store.listOccurrences("rb", { limit: 100 }))
            .filter((r) => r.occurrenceMs === at(hms))
            .map((r) => r.executionId);
          expect(named, hms).toEqual([idOf(hms), idOf(hms)]);
          expect(await status(hms), hms).toBe("COMPLETED"); // cancel_previous cancels no ended run
        }
        expect(await accounts(NEW)).toEqual(NEW_ACCOUNTS[overlap]);
        const starts = NEW_ACCOUNTS[overlap].filter((a) => a === "started").length;
        const skips = NEW_ACCOUNTS[overlap].filter((a) => a.startsWith("skipped")).length;
        // fired: 46:05, the backfill's 4, and the fire's new starts; skipped: only the new ones.
        expect(await db.store.getSchedule("rb")).toMatchObject({ fired: 5 + starts, skipped: skips });
        expect(h.reports.at(-1)).toMatchObject({ started: starts });
        // The fire-lag histogram hears of the fire's own starts, not of the backfill's runs.
        expect(h.reports.at(-1)?.lagsMs.length).toBeLessThanOrEqual(starts);
        if (overlap === "cancel_previous") {
          expect([await status("46:30"), await status("46:35"), await status("46:40")]).toEqual([
            "CANCELLED",
            "CANCELLED",
            "RUNNING",
          ]);
        }
        if (overlap.startsWith("buffer")) {
          // The buffer waits behind 46:30 (running), not behind an ended run: 46:30 ends, 46:35 starts.
          await h.executions.complete(idOf("46:30"), {});
          await h.scheduler.loop.fireDue();
          expect(await status("46:35")).toBe("RUNNING");
        }
      });
    }
  }

  it("max_runs counts only what the timing starts: the backfilled occurrences use up none of it", async () => {
    // 46:05 is run 1 of 3; the fire accounts 46:10-46:25 as the backfill's and starts 46:30 and
    // 46:35 (runs 2 and 3). Before, the backfilled ones used up the limit and ended the schedule.
    await backfilled("allow", "pause", BACKFILLED, { max_runs: 3 });
    expect(await accounts(BACKFILLED)).toEqual(BACKFILLED.map(() => "started+started"));
    expect(await accounts(NEW)).toEqual(["started", "started", ""]);
    expect(await db.store.getSchedule("rb")).toMatchObject({ runs: 3, state: "ended" });
  });

  for (const catchup of ["skip_missed", "run_once"] as const) {
    it(`${catchup}: the backfilled occurrences are accounted as themselves, not folded into the missed range`, async () => {
      // Before, 46:10-46:35 became one missed range of 6 beside the backfill's started rows, and
      // `skipped` counted the 4 that had run.
      await backfilled("allow", "pause", BACKFILLED, { catchup, max_catch_up: undefined });
      expect(await accounts(BACKFILLED)).toEqual(BACKFILLED.map(() => "started+started"));
      expect(await accounts(NEW)).toEqual(["skipped:missed", "skipped:missed", "started"]);
      expect(await db.store.getSchedule("rb")).toMatchObject({ fired: 6, skipped: 2 });
    });
  }

  it("skip: backfilled runs still running are accounted as themselves and hold the slot", async () => {
    await backfilled("skip", "pause", []);
    expect(await accounts(BACKFILLED)).toEqual(BACKFILLED.map(() => "started+started"));
    expect(await accounts(NEW)).toEqual(NEW.map(() => "skipped:overlap"));
    expect(await db.store.getSchedule("rb")).toMatchObject({ fired: 5, skipped: 3 });
  });

  it("cancel_previous: a new start replaces the backfilled runs still running, not an ended one", async () => {
    // 46:25 ends before the resume: 46:30 replaces 46:10, 46:15 and 46:20, which still run. Before,
    // it replaced 46:20 alone and the other two ran on beside it.
    await backfilled("cancel_previous", "pause", ["46:25"]);
    expect(await accounts(BACKFILLED)).toEqual(BACKFILLED.map(() => "started+started"));
    expect(await Promise.all(["46:10", "46:15", "46:20", "46:25"].map(status))).toEqual([
      "CANCELLED",
      "CANCELLED",
      "CANCELLED",
      "COMPLETED",
    ]);
    expect(await status("46:40")).toBe("RUNNING");
  });

  // A backfill of a later occurrence of the paused span, ended, then a resume that starts an earlier
  // one: the fire accounted the backfilled run as the schedule's last execution, so the next fire
  // read "nothing runs" and started beside the earlier one still running (reported by a user's
  // race test: under buffer_all two of the schedule's executions RUNNING).
  // The timing's own run still running when the paused span is backfilled and resumed: the resume's
  // fire made the backfill's running runs the schedule's last execution in its place, so once they
  // ended the next fire read "nothing runs" and started beside it (a tester's model, buffer_one:
  // two RUNNING; cancel_previous never cancelled it).
  for (const overlap of ["skip", "buffer_one", "buffer_all", "cancel_previous"] as const) {
    it(`${overlap}: the backfill's running runs do not take the place of the timing's run still running`, async () => {
      const h = await created(overlap, { max_catch_up: 10 });
      await h.fireAt("2026-12-05T03:46:05Z");
      await h.scheduler.actions.pause("rb", {});
      h.clock.set(at("46:21"));
      const range = { start_at: "2026-12-05T03:46:10Z", end_at: "2026-12-05T03:46:20Z" };
      expect(await h.scheduler.actions.backfill("rb", range)).toMatchObject({ started: 3 });
      await h.scheduler.actions.resume("rb", { catch_up: true });
      await h.scheduler.loop.fireDue();
      expect(await accounts(["46:10", "46:15", "46:20"])).toEqual([
        "started+started",
        "started+started",
        "started+started",
      ]);
      expect((await db.store.getSchedule("rb"))?.lastExecutionId).toBe(idOf("46:05"));
      for (const hms of ["46:10", "46:15", "46:20"]) await h.executions.complete(idOf(hms), {});
      await h.fireAt("2026-12-05T03:46:25Z");
      await onlyOneRuns(overlap, "46:05", "46:25");
    });
  }

  for (const overlap of ["skip", "buffer_one", "buffer_all", "cancel_previous"] as const) {
    it(`${overlap}: a backfilled run that ended does not hide the run the resume started`, async () => {
      const h = await created(overlap, { max_catch_up: 10, paused: true });
      h.clock.set(at("46:12"));
      expect(
        await h.scheduler.actions.backfill("rb", { start_at: "2026-12-05T03:46:10Z", end_at: "2026-12-05T03:46:10Z" }),
      ).toMatchObject({ started: 1 });
      await h.executions.complete(idOf("46:10"), {});
      await h.scheduler.actions.resume("rb", { catch_up: true });
      await h.scheduler.loop.fireDue();
      // The resume starts 46:05 (the paused span's first), and 46:10 is its backfilled run.
      expect(await status("46:05")).toBe("RUNNING");
      const row = await db.store.getSchedule("rb");
      expect(row?.lastExecutionId).toBe(idOf("46:05"));
      await h.fireAt("2026-12-05T03:46:15Z");
      await onlyOneRuns(overlap, "46:05", "46:15");
    });
  }
});
