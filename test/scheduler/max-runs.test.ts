/**
 * max_runs (docs/outcomes.md § Run-count limit) on a real store, both dialects, with a manual clock:
 * after N occurrences started the schedule ends; later occurrences are neither started nor recorded
 * as missed; skips do not count, catch-up and buffered starts do; triggers still work and do not
 * count; raising the limit with an update resumes from now.
 */
import { expect, it } from "vitest";
import type { OccurrenceRow } from "../../src/store/rows.js";
import type { Store } from "../../src/store/store.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { type Harness, makeHarness } from "./harness.js";

async function ledger(store: Store, id: string): Promise<Array<[string, string | null, number]>> {
  const rows: OccurrenceRow[] = (await store.listOccurrences(id, { limit: 1000 })).reverse();
  return rows.map((r) => [r.kind, r.occurrenceMs === null ? null : new Date(r.occurrenceMs).toISOString(), r.count]);
}

const at = (hhmm: string) => `2026-11-15T${hhmm}:00.000Z`;

/** At 00:00:30, schedule "s" every minute with overlap buffer_one and max_runs `maxRuns`. */
async function everyMinuteBufferOne(store: Store, maxRuns: number): Promise<Harness> {
  const h = await makeHarness(store, { now: "2026-11-15T00:00:30Z" });
  await h.scheduler.schedules.create({
    schedule_id: "s",
    workflow: "OrderProcessing",
    interval: "1m",
    overlap: "buffer_one",
    max_runs: maxRuns,
  });
  return h;
}

describeEachDialect("scheduler: max_runs", (dialect) => {
  const db = useStore(dialect);

  it("ends after N starts: no more fires, nothing recorded as missed, triggers still start and do not count", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z" });
    const created = await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      interval: "1m",
      overlap: "allow",
      max_runs: 2,
    });
    // The next fires listed are the runs left, not the timing's next five.
    expect(created).toMatchObject({ max_runs: 2, remaining_runs: 2, state: "active" });
    expect(created.next_fire_times).toEqual(["2026-11-15T00:01:00Z", "2026-11-15T00:02:00Z"]);
    await h.fireAt(at("00:01"));
    expect(await h.scheduler.schedules.get("s")).toMatchObject({
      remaining_runs: 1,
      state: "active",
      next_fire_times: ["2026-11-15T00:02:00Z"],
    });
    await h.fireAt(at("00:02"));
    const ended = await h.scheduler.schedules.get("s");
    expect(ended).toMatchObject({ remaining_runs: 0, state: "ended", next_fire_at: null, next_fire_times: [] });
    expect(await h.fireAt(at("00:10"))).toBe(0);
    expect(await ledger(db.store, "s")).toEqual([
      ["started", at("00:01"), 1],
      ["started", at("00:02"), 1],
    ]);
    const trigger = await h.scheduler.actions.trigger("s", {});
    expect(trigger.started).toBe(true);
    expect(await h.scheduler.schedules.get("s")).toMatchObject({ remaining_runs: 0, state: "ended", fired: 3 });
    // Resuming an ended schedule leaves it ended; pausing does not revive it either.
    await h.scheduler.actions.pause("s", {});
    expect(await h.scheduler.actions.resume("s", {})).toMatchObject({ state: "ended", next_fire_at: null });
  });

  it("a catch-up stops at the limit: the missed range before it is recorded, nothing after it", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z" });
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      interval: "1m",
      overlap: "allow",
      catchup: "catch_up",
      max_catch_up: 5,
      max_runs: 2,
    });
    // Down until 00:10: catch-up wants 00:05-00:09 and the fresh 00:10; the limit takes two.
    await h.fireAt(at("00:10"));
    expect(await ledger(db.store, "s")).toEqual([
      ["skipped", null, 4], // the missed range 00:01-00:04
      ["started", at("00:05"), 1],
      ["started", at("00:06"), 1],
    ]);
    expect(await h.scheduler.schedules.get("s")).toMatchObject({ state: "ended", remaining_runs: 0, skipped: 4 });
  });

  it("skips do not count; a buffered occurrence counts and starts; raising the limit resumes from now", async () => {
    const h = await everyMinuteBufferOne(db.store, 3);
    await h.fireAt(at("00:01")); // run 1
    await h.fireAt(at("00:02")); // buffered: run 2, reserved
    await h.fireAt(at("00:03")); // buffer full: a skip, not a run
    h.clock.set(Date.parse("2026-11-15T00:03:10Z"));
    await h.executions.complete("s:2026-11-15T00:01:00Z", {});
    await h.scheduler.loop.fireDue(); // the buffer starts 00:02
    await h.executions.complete("s:2026-11-15T00:02:00Z", {});
    await h.fireAt(at("00:04")); // run 3: the last
    expect(await h.scheduler.schedules.get("s")).toMatchObject({ state: "ended", remaining_runs: 0, skipped: 1 });
    expect(await h.fireAt(at("00:05"))).toBe(0);

    h.clock.set(Date.parse("2026-11-15T00:05:30Z"));
    const raised = await h.scheduler.schedules.update("s", { max_runs: 4 });
    expect(raised).toMatchObject({ state: "active", remaining_runs: 1, next_fire_at: "2026-11-15T00:06:00Z" });
    await h.executions.complete("s:2026-11-15T00:04:00Z", {});
    await h.fireAt(at("00:06"));
    expect(await h.scheduler.schedules.get("s")).toMatchObject({ state: "ended", remaining_runs: 0 });
    const unset = await h.scheduler.schedules.update("s", { max_runs: null });
    expect(unset).toMatchObject({ state: "active", next_fire_at: "2026-11-15T00:07:00Z" });
    expect(unset.remaining_runs).toBeUndefined();
    expect((await ledger(db.store, "s")).filter(([kind]) => kind === "started").map(([, o]) => o)).toEqual([
      at("00:01"),
      at("00:02"),
      at("00:04"),
      at("00:06"),
    ]);
  });

  it("reached with an occurrence still buffered: an update or a resume leaves it ended (the model's seed 1466013139)", async () => {
    const h = await everyMinuteBufferOne(db.store, 2);
    await h.fireAt(at("00:01")); // run 1
    await h.fireAt(at("00:02")); // buffered behind it: run 2, the last
    const nextFire = async () => (await db.store.getSchedule("s"))?.nextFireMs;
    expect(await nextFire()).toBeNull();
    // The buffered occurrence is shown, and counts: no run is left to come.
    expect(await h.scheduler.schedules.get("s")).toMatchObject({
      remaining_runs: 0,
      buffered: ["2026-11-15T00:02:00Z"],
    });
    // A policy update does not touch max_runs: the timing stays ended (its buffer still to start).
    await h.scheduler.schedules.update("s", { catchup: "run_once" });
    expect(await nextFire()).toBeNull();
    await h.scheduler.actions.pause("s", {});
    await h.scheduler.actions.resume("s", {});
    expect(await nextFire()).toBeNull();
    h.clock.set(Date.parse("2026-11-15T00:02:30Z"));
    await h.executions.complete("s:2026-11-15T00:01:00Z", {});
    await h.scheduler.loop.fireDue(); // the buffer starts 00:02
    await h.executions.complete("s:2026-11-15T00:02:00Z", {});
    expect(await h.fireAt(at("00:05"))).toBe(0);
    expect(await ledger(db.store, "s")).toEqual([
      ["started", at("00:01"), 1],
      ["buffered", at("00:02"), 1],
      ["started", at("00:02"), 1],
    ]);
    expect(await h.scheduler.schedules.get("s")).toMatchObject({ state: "ended", fired: 2, buffered: [] });
  });

  it("a start retried inside the grace counts once it is decided; a decided start that dead-letters counts", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z", maxActiveExecutions: 1 });
    await h.executions.start({ executionId: "blocker", workflow: "OrderProcessing", input: { order_id: "b" } });
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      interval: "1m",
      overlap: "allow",
      catchup: "catch_up",
      max_catch_up: 1,
      max_runs: 2,
    });
    // Refused inside the grace: retried 5 s later, not counted.
    await h.fireAt(at("00:01"));
    expect(await h.scheduler.schedules.get("s")).toMatchObject({ remaining_runs: 2, state: "active" });
    await h.executions.complete("blocker", {});
    await h.fireAt("2026-11-15T00:01:05Z");
    expect(await h.scheduler.schedules.get("s")).toMatchObject({ remaining_runs: 1, state: "active" });
    // Down until 00:05:30 with the admission full: catch-up decides 00:04 (the limit's last), refused
    // 90 s late (past the grace), a dead letter; it counts, and the schedule ends without 00:05.
    await h.executions.complete("s:2026-11-15T00:01:00Z", {});
    await h.executions.start({ executionId: "blocker-2", workflow: "OrderProcessing", input: { order_id: "c" } });
    await h.fireAt("2026-11-15T00:05:30Z");
    expect(await h.scheduler.schedules.get("s")).toMatchObject({ remaining_runs: 0, state: "ended" });
    expect((await ledger(db.store, "s")).map(([kind, o, n]) => `${kind} ${o} ${n}`)).toEqual([
      `started ${at("00:01")} 1`,
      `dead_letter ${at("00:04")} 1`, // a fire writes its dead letters first
      "skipped null 2",
    ]);
  });
});
