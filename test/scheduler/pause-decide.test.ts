/**
 * A pause decides first what came due before it (src/scheduler/pause-decide.ts, docs/scheduling.md
 * § Pause): only the occurrences inside a pause are skipped without a record by a resume without
 * catch_up. Before, a pause written a few ms after an instant that the loop had not fired yet, and
 * a refused start waiting for its retry, lost their occurrences with no ledger row (found by a
 * model-driven run against a real server: 4 of 25 pauses on SQLite, 12 of 60 on PostgreSQL).
 */
import { expect, it } from "vitest";
import { dueTime } from "../../src/scheduler/decide.js";
import { formatInstant, parseInstant } from "../../src/time/format.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { accountsOf, settled } from "./audit.js";
import { makeHarness } from "./harness.js";

const t = parseInstant;

describeEachDialect("a pause decides what came due before it", (dialect) => {
  const db = useStore(dialect);

  /** A harness at 00:00:00.500 whose one slot (`--max-active-executions 1`) a blocker holds. */
  async function blockedHarness() {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00.500Z", maxActiveExecutions: 1 });
    await h.executions.start({ executionId: "blocker", workflow: "OrderProcessing", input: { order_id: "b" } });
    return h;
  }

  /**
   * A 1 s schedule `id` (overlap allow, and `extra`) whose 00:00:01 has fired; with `blocked`, a
   * blocker held the one slot `--max-active-executions` allows, so that start was refused.
   */
  async function firedOnce(id: string, blocked = false, extra: Record<string, unknown> = {}) {
    const h = blocked ? await blockedHarness() : await makeHarness(db.store, { now: "2026-11-15T00:00:00.500Z" });
    await h.scheduler.schedules.create({
      schedule_id: id,
      workflow: "OrderProcessing",
      interval: "1s",
      overlap: "allow",
      ...extra,
    });
    await h.fireAt("2026-11-15T00:00:01Z");
    return h;
  }

  for (const how of ["pause", "patch"] as const) {
    it(`an occurrence due a few ms before a ${how}, not fired yet, starts; the pause's span is skipped`, async () => {
      const h = await firedOnce("s");
      // 00:00:02 is due; the loop has not fired it when the pause is written 3 ms later.
      h.clock.set(t("2026-11-15T00:00:02.003Z"));
      if (how === "pause") await h.scheduler.actions.pause("s", {});
      else await h.scheduler.schedules.update("s", { paused: true });
      await h.fireAt("2026-11-15T00:00:05.400Z");
      await h.scheduler.actions.resume("s", {});
      await h.fireAt("2026-11-15T00:00:06Z");
      const accounts = settled(await accountsOf(db.store, "s"));
      // 00:00:03–05 are inside the pause: no record, as documented; 02 came due before it.
      expect([...accounts].map(([o, a]) => [new Date(o).toISOString(), a])).toEqual([
        ["2026-11-15T00:00:01.000Z", "started"],
        ["2026-11-15T00:00:02.000Z", "started"],
        ["2026-11-15T00:00:06.000Z", "started"],
      ]);
      expect(await h.scheduler.schedules.get("s")).toMatchObject({ fired: 3, skipped: 0 });
    });
  }

  /**
   * A 1 s schedule `id` whose start at 00:00:01 is refused (a blocker holds the one slot) and waits
   * for its retry at 00:00:06, with 02 and 03 due behind it; the clock at 00:00:03.300.
   */
  async function refusedAndWaiting(id: string) {
    const h = await firedOnce(id, true);
    h.clock.set(t("2026-11-15T00:00:03.300Z"));
    return h;
  }

  it("a refused start waiting for its retry becomes a dead letter at the pause, those due after it missed", async () => {
    const h = await refusedAndWaiting("y");
    const before = await h.scheduler.schedules.get("y");
    expect(before.last_error).toContain("--max-active-executions");
    await h.scheduler.actions.pause("y", {});
    await h.executions.complete("blocker", {});
    await h.fireAt("2026-11-15T00:00:07.300Z");
    await h.scheduler.actions.resume("y", {});
    await h.fireAt("2026-11-15T00:00:08Z");
    const accounts = settled(await accountsOf(db.store, "y"));
    expect([...accounts].map(([o, a]) => [new Date(o).toISOString(), a])).toEqual([
      ["2026-11-15T00:00:01.000Z", "dead_letter"],
      ["2026-11-15T00:00:02.000Z", "skipped:missed"],
      ["2026-11-15T00:00:03.000Z", "skipped:missed"],
      ["2026-11-15T00:00:08.000Z", "started"],
    ]);
    const after = await h.scheduler.schedules.get("y");
    expect(after).toMatchObject({ fired: 1, skipped: 3 });
    expect((after.dead_letters as { error: string }[])[0]?.error).toContain("--max-active-executions");
  });

  it("a new max_runs keeps a refused start waiting for its retry, and the occurrences due behind it", async () => {
    const h = await refusedAndWaiting("m");
    // Recomputed from now, this update dropped 01 (refused, waiting) and 02-03 without a record.
    await h.scheduler.schedules.update("m", { max_runs: 1000 });
    await h.executions.complete("blocker", {});
    await h.fireAt("2026-11-15T00:00:04Z");
    const accounts = settled(await accountsOf(db.store, "m"));
    expect([...accounts.keys()].map((o) => new Date(o).toISOString())).toEqual([
      "2026-11-15T00:00:01.000Z",
      "2026-11-15T00:00:02.000Z",
      "2026-11-15T00:00:03.000Z",
      "2026-11-15T00:00:04.000Z",
    ]);
    // skip_missed starts the latest due one; the update cleared the retry, so 01 is missed like 02-03.
    expect([...accounts.values()]).toEqual(["skipped:missed", "skipped:missed", "skipped:missed", "started"]);
  });

  // The cron has the interval's occurrences, so that the ledger's missed rows count under either.
  for (const change of [{ interval: "7s" }, { cron: "* * * * * *", interval: null }]) {
    it(`a refused start waiting for its retry becomes a dead letter at an update of ${Object.keys(change)[0]}`, async () => {
      const h = await refusedAndWaiting("r");
      // Recomputed from now, this update dropped 01 (refused, waiting) and 02-03 without a record
      // (a tester's model-driven run against a real server, on SQLite and PostgreSQL).
      await h.scheduler.schedules.update("r", change);
      await h.executions.complete("blocker", {});
      await h.fireAt("2026-11-15T00:00:03.400Z");
      const accounts = settled(await accountsOf(db.store, "r"));
      expect([...accounts].map(([o, a]) => [new Date(o).toISOString(), a])).toEqual([
        ["2026-11-15T00:00:01.000Z", "dead_letter"],
        ["2026-11-15T00:00:02.000Z", "skipped:missed"],
        ["2026-11-15T00:00:03.000Z", "skipped:missed"],
      ]);
      const after = await h.scheduler.schedules.get("r");
      expect(after).toMatchObject({ fired: 0, skipped: 3, state: "active" });
    });
  }

  it("a refused start waiting for its retry becomes a dead letter at a max_runs that ends the schedule", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00.500Z", maxActiveExecutions: 2 });
    await h.scheduler.schedules.create({
      schedule_id: "m",
      workflow: "OrderProcessing",
      interval: "1s",
      overlap: "allow",
    });
    await h.fireAt("2026-11-15T00:00:01Z");
    await h.executions.start({ executionId: "blocker", workflow: "OrderProcessing", input: { order_id: "b" } });
    await h.fireAt("2026-11-15T00:00:02Z");
    expect((await h.scheduler.schedules.get("m")).last_error).toContain("--max-active-executions");
    h.clock.set(t("2026-11-15T00:00:03.300Z"));
    // One run made: a limit of one ends it, and 02 (refused, waiting) and 03 had no record.
    await h.scheduler.schedules.update("m", { max_runs: 1 });
    const accounts = settled(await accountsOf(db.store, "m"));
    expect([...accounts].map(([o, a]) => [new Date(o).toISOString(), a])).toEqual([
      ["2026-11-15T00:00:01.000Z", "started"],
      ["2026-11-15T00:00:02.000Z", "dead_letter"],
      ["2026-11-15T00:00:03.000Z", "skipped:missed"],
    ]);
    expect(await h.scheduler.schedules.get("m")).toMatchObject({ state: "ended", fired: 1, skipped: 2 });
  });

  it("an occurrence due under the old timing but not fired yet starts before an update of the timing", async () => {
    const h = await firedOnce("t");
    h.clock.set(t("2026-11-15T00:00:02.003Z"));
    await h.scheduler.schedules.update("t", { interval: "10s" });
    await h.fireAt("2026-11-15T00:00:10Z");
    const accounts = settled(await accountsOf(db.store, "t"));
    expect([...accounts].map(([o, a]) => [new Date(o).toISOString(), a])).toEqual([
      ["2026-11-15T00:00:01.000Z", "started"],
      ["2026-11-15T00:00:02.000Z", "started"],
      ["2026-11-15T00:00:10.000Z", "started"],
    ]);
  });

  for (const [what, patch] of [
    ["a new timing", { interval: "12s" }],
    ["the same timing spelled otherwise", { interval: "10000ms" }],
  ] as const) {
    it(`${what} between an occurrence and its jittered due time starts it`, async () => {
      const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00Z" });
      await h.scheduler.schedules.create({
        schedule_id: "r",
        workflow: "OrderProcessing",
        interval: "10s",
        jitter: "9s",
        overlap: "allow",
      });
      const first = t("2026-11-15T00:00:10Z");
      expect(dueTime("r", first, 9000)).toBeGreaterThan(first + 1);
      h.clock.set(first + 1);
      // Recomputed from now, 00:00:10 belonged to neither timing: no row, no execution (a tester).
      await h.scheduler.schedules.update("r", patch);
      await h.fireAt(formatInstant(dueTime("r", first, 9000)));
      const accounts = settled(await accountsOf(db.store, "r"));
      expect(accounts.get(first)).toBe("started");
      expect(await h.executions.get(`r:${formatInstant(first)}`)).toMatchObject({ status: "RUNNING" });
    });
  }

  for (const how of ["pause", "patch"] as const) {
    it(`a ${how} between an occurrence and its jittered due time keeps it for a catch-up resume`, async () => {
      const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00Z" });
      await h.scheduler.schedules.create({
        schedule_id: "j",
        workflow: "OrderProcessing",
        interval: "10s",
        jitter: "9s",
        overlap: "allow",
        catchup: "catch_up",
        max_catch_up: 1000,
      });
      // Between the occurrence (00:00:10) and its due time (00:00:10 plus this id's jitter).
      const first = t("2026-11-15T00:00:10Z");
      const due = t((await h.scheduler.schedules.get("j")).next_fire_at as string);
      expect(due).toBeGreaterThan(first + 1);
      h.clock.set(first + 1);
      if (how === "pause") await h.scheduler.actions.pause("j", {});
      else await h.scheduler.schedules.update("j", { paused: true });
      h.clock.set(t("2026-11-15T00:00:25Z"));
      await h.scheduler.actions.resume("j", { catch_up: true });
      await h.fireAt("2026-11-15T00:00:25Z");
      const accounts = settled(await accountsOf(db.store, "j"));
      // Recomputed from now by the PATCH, 00:00:10 had no record at all (00:00:20 starts when its
      // own jittered due time comes).
      expect(accounts.get(first)).toBe("started");
    });
  }

  for (const how of ["update", "pause"] as const) {
    it(`the occurrences due behind a refused buffered start are missed at a ${how}, the buffer kept`, async () => {
      const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00.500Z", maxActiveExecutions: 2 });
      await h.scheduler.schedules.create({
        schedule_id: "b",
        workflow: "OrderProcessing",
        interval: "1s",
        overlap: "buffer_all",
      });
      await h.fireAt("2026-11-15T00:00:01Z");
      await h.fireAt("2026-11-15T00:00:02Z"); // buffered behind 01
      const filler = (id: string) =>
        h.executions.start({ executionId: id, workflow: "OrderProcessing", input: { order_id: id } });
      await filler("f1");
      await h.executions.cancel("b:2026-11-15T00:00:01Z", { reason: "done" });
      await filler("f2");
      // The buffer's start is refused (two running, the most allowed) and waits for its retry.
      await h.fireAt("2026-11-15T00:00:02.500Z");
      expect((await h.scheduler.schedules.get("b")).last_error).toContain("--max-active-executions");
      h.clock.set(t("2026-11-15T00:00:05.300Z"));
      // 03-05 came due behind it, undecided; this dropped them with no record (a tester, both stores).
      // (The cron has the interval's occurrences, so that the ledger's missed row counts under either.)
      if (how === "update") await h.scheduler.schedules.update("b", { cron: "* * * * * *", interval: null });
      else await h.scheduler.actions.pause("b", {});
      const accounts = settled(await accountsOf(db.store, "b"));
      expect([...accounts].map(([o, a]) => [new Date(o).toISOString(), a])).toEqual([
        ["2026-11-15T00:00:01.000Z", "started"],
        ["2026-11-15T00:00:02.000Z", "buffered"],
        ["2026-11-15T00:00:03.000Z", "skipped:missed"],
        ["2026-11-15T00:00:04.000Z", "skipped:missed"],
        ["2026-11-15T00:00:05.000Z", "skipped:missed"],
      ]);
      expect(await h.scheduler.schedules.get("b")).toMatchObject({
        buffered: ["2026-11-15T00:00:02Z"],
        skipped: 3,
      });
    });
  }

  it("after a refused start, a pause leaves a jittered occurrence not due yet inside the pause, for a catch-up resume", async () => {
    const h = await blockedHarness();
    await h.scheduler.schedules.create({
      schedule_id: "rj",
      workflow: "OrderProcessing",
      interval: "10s",
      jitter: "9s",
      overlap: "allow",
      catchup: "catch_up",
      max_catch_up: 1000,
    });
    const first = t((await h.scheduler.schedules.get("rj")).next_fire_at as string);
    await h.fireAt(formatInstant(first)); // 00:00:10 refused: the blocker holds the one slot
    expect((await h.scheduler.schedules.get("rj")).last_error).toContain("--max-active-executions");
    // Just after 00:00:20, before its jittered due time: inside the pause, not missed (it was).
    const second = t("2026-11-15T00:00:20Z");
    expect(dueTime("rj", second, 9000)).toBeGreaterThan(second + 1);
    h.clock.set(second + 1);
    await h.scheduler.actions.pause("rj", {});
    await h.executions.complete("blocker", {});
    h.clock.set(t("2026-11-15T00:00:35Z"));
    await h.scheduler.actions.resume("rj", { catch_up: true });
    await h.fireAt("2026-11-15T00:00:35Z");
    const accounts = settled(await accountsOf(db.store, "rj"));
    expect(accounts.get(t("2026-11-15T00:00:10Z"))).toBe("dead_letter");
    expect(accounts.get(second)).toBe("started");
  });

  for (const how of ["pause", "retime"] as const) {
    it(`the dead letter a ${how} writes for a refused start is not a turn of max_runs`, async () => {
      // 00:00:01 refused inside the grace: not decided yet.
      const h = await firedOnce("mr", true, { max_runs: 3 });
      h.clock.set(t("2026-11-15T00:00:01.300Z"));
      if (how === "pause") await h.scheduler.actions.pause("mr", {});
      else await h.scheduler.schedules.update("mr", { cron: "* * * * * *", interval: null });
      const accounts = settled(await accountsOf(db.store, "mr"));
      expect(accounts.get(t("2026-11-15T00:00:01Z"))).toBe("dead_letter");
      // Counted, the schedule then ended after 2 starts of its 3 (a tester's report).
      expect(await h.scheduler.schedules.get("mr")).toMatchObject({ remaining_runs: 3 });
    });
  }

  it("an ended schedule that is paused stays ended through an update", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00.500Z" });
    await h.scheduler.schedules.create({
      schedule_id: "e",
      workflow: "OrderProcessing",
      interval: "1s",
      overlap: "allow",
      max_runs: 1,
    });
    await h.fireAt("2026-11-15T00:00:01Z");
    await h.scheduler.actions.pause("e", {});
    expect(await h.scheduler.schedules.get("e")).toMatchObject({ state: "ended", paused: true });
    // It read "paused" after this, though nothing can fire.
    await h.scheduler.schedules.update("e", { overlap: "skip" });
    expect(await h.scheduler.schedules.get("e")).toMatchObject({ state: "ended", paused: true });
  });

  for (const change of [{ catchup_window: "30s" }, { jitter: "500ms" }]) {
    it(`a change of only ${Object.keys(change)[0]} while paused keeps the span a catch-up resume starts`, async () => {
      const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00.500Z" });
      await h.scheduler.schedules.create({
        schedule_id: "c",
        workflow: "OrderProcessing",
        interval: "1s",
        overlap: "allow",
        catchup: "catch_up",
        max_catch_up: 1000,
      });
      await h.fireAt("2026-11-15T00:00:01Z");
      await h.scheduler.actions.pause("c", {});
      h.clock.set(t("2026-11-15T00:00:04.500Z"));
      await h.scheduler.schedules.update("c", change);
      await h.scheduler.actions.resume("c", { catch_up: true });
      await h.fireAt("2026-11-15T00:00:06Z");
      const accounts = settled(await accountsOf(db.store, "c"));
      // Recomputed from now, the update dropped 02–04, and the catch-up resume started from 05.
      const started = [...accounts].filter(([, a]) => a === "started").map(([o]) => new Date(o).toISOString());
      expect(started).toEqual([
        "2026-11-15T00:00:01.000Z",
        "2026-11-15T00:00:02.000Z",
        "2026-11-15T00:00:03.000Z",
        "2026-11-15T00:00:04.000Z",
        "2026-11-15T00:00:05.000Z",
        "2026-11-15T00:00:06.000Z",
      ]);
    });
  }
});
