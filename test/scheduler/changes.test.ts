/** Revision fences, refusals that change nothing, delete and list (docs/design.md § Changes), on both dialects. */
import { expect, it } from "vitest";
import { OrbitError } from "../../src/domain/errors.js";
import { LEDGER_RETENTION } from "../../src/scheduler/fire.js";
import { parseInstant } from "../../src/time/format.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { makeHarness } from "./harness.js";

async function refused(p: Promise<unknown>): Promise<OrbitError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof OrbitError) return e;
    throw e;
  }
  throw new Error("expected a refusal");
}

describeEachDialect("scheduler: changes", (dialect) => {
  const db = useStore(dialect);

  it("If-Match and expected_revision fence writes; every change moves the revision", async () => {
    const h = await makeHarness(db.store);
    const s = await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "1h" });
    expect(s.revision).toBe(1);
    const stale = await refused(h.scheduler.schedules.update("s", { jitter: "5s" }, { ifMatch: 7 }));
    expect(stale.code).toBe("PRECONDITION_FAILED");
    const conflict = await refused(h.scheduler.actions.pause("s", {}, { expectedRevision: 0 }));
    expect(conflict.code).toBe("CONFLICT");
    const paused = await h.scheduler.actions.pause("s", {}, { expectedRevision: 1 });
    expect(paused.revision).toBe(2);
    const resumed = await h.scheduler.actions.resume("s", {}, { ifMatch: 2 });
    expect(resumed.revision).toBe(3);
    await refused(h.scheduler.schedules.delete("s", { expectedRevision: 2 }));
    await h.scheduler.schedules.delete("s", { expectedRevision: 3 });
    expect((await refused(h.scheduler.schedules.get("s"))).code).toBe("NOT_FOUND");
    // Created again, it continues past the deleted one's revision: a fence read from that one
    // cannot pass for this one (both started at 1, so a stale If-Match: "3" matched again).
    const again = await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "1h" });
    expect(again.revision).toBe(4);
    await h.scheduler.actions.pause("s", {});
    await h.scheduler.actions.resume("s", {});
    expect((await refused(h.scheduler.schedules.update("s", { jitter: "5s" }, { ifMatch: 3 }))).code).toBe(
      "PRECONDITION_FAILED",
    );
    expect((await h.scheduler.schedules.get("s")).revision).toBe(6);
    await h.scheduler.schedules.delete("s");
    const batch = await h.scheduler.schedules.createMany([
      { body: { schedule_id: "s", workflow: "OrderProcessing", interval: "1h" } },
      { body: { schedule_id: "t", workflow: "OrderProcessing", interval: "1h" } },
    ]);
    expect(batch).toEqual(["s", "t"]);
    expect([(await h.scheduler.schedules.get("s")).revision, (await h.scheduler.schedules.get("t")).revision]).toEqual([
      7, 1,
    ]);
  });

  it("a refused create or update changes nothing", async () => {
    const h = await makeHarness(db.store);
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "1h" });
    expect(
      (await refused(h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "1h" })))
        .code,
    ).toBe("ALREADY_EXISTS");
    expect(
      (await refused(h.scheduler.schedules.create({ schedule_id: "t", workflow: "Missing", interval: "1h" }))).code,
    ).toBe("NOT_FOUND");
    // An existing id is named before the workflow's problem (it said the workflow was not registered).
    expect(
      (await refused(h.scheduler.schedules.create({ schedule_id: "s", workflow: "Missing", interval: "1h" }))).message,
    ).toBe("schedule s already exists");
    expect((await refused(h.scheduler.schedules.update("s", { cron: "0 25 * * *" }))).message).toBe(
      "cron `0 25 * * *`: `25` is out of range for the hour field (0-23)",
    );
    const after = await h.scheduler.schedules.get("s");
    expect(after).toMatchObject({ interval: "1h", revision: 1 });
    expect((await h.scheduler.schedules.list()).schedules.map((x) => x.schedule_id)).toEqual(["s"]);
  });

  it("a trigger whose input override is invalid is refused while the previous execution runs, counting nothing", async () => {
    // The overlap skip answered 200 "not started" and counted a skip for an input that could never
    // start (docs/design.md § Changes: bad input is refused and changes nothing).
    const h = await makeHarness(db.store);
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "1h" });
    expect((await h.scheduler.actions.trigger("s", {})).started).toBe(true);
    const before = await h.scheduler.schedules.get("s");
    const err = await refused(h.scheduler.actions.trigger("s", { input: { amount: "a lot" } }));
    expect(err.code).toBe("INVALID_ARGUMENT");
    expect(err.message).toContain("input does not match OrderProcessing@1.0.0");
    const after = await h.scheduler.schedules.get("s");
    expect(after).toMatchObject({ skipped: before.skipped, revision: before.revision });
    const ledger = await h.scheduler.schedules.occurrences("s", {});
    expect(ledger.occurrences.map((o) => o.kind)).toEqual(["started"]);
  });

  it("a write while the loop is behind leaves the due occurrences to the fire, which accounts for each", async () => {
    // Before, the update and the resume of a schedule that was not paused both restarted its timing
    // from now: 00:02-00:05 were due and not fired yet, and went without a ledger row or a count.
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00.5Z" });
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "1s" });
    await h.fireAt("2026-11-15T00:00:01Z");
    h.clock.set(parseInstant("2026-11-15T00:00:05.5Z"));
    const updated = await h.scheduler.schedules.update("s", { description: "only words", overlap: "allow" });
    expect(updated.next_fire_at).toBe("2026-11-15T00:00:02Z");
    await h.scheduler.actions.resume("s", {});
    await h.fireAt("2026-11-15T00:00:05.5Z");
    const ledger = (await h.scheduler.schedules.occurrences("s", {})).occurrences;
    expect(ledger.map((o) => [o.occurrence ?? o.range_from, o.kind, o.reason ?? null, o.count ?? 1])).toEqual([
      ["2026-11-15T00:00:05Z", "started", null, 1],
      ["2026-11-15T00:00:02Z", "skipped", "missed", 3],
      ["2026-11-15T00:00:01Z", "started", null, 1],
    ]);
    expect(await h.scheduler.schedules.get("s")).toMatchObject({ fired: 2, skipped: 3 });
    // A change of timing still starts it again from now (docs/design.md § Changes).
    h.clock.set(parseInstant("2026-11-15T00:00:09.5Z"));
    const retimed = await h.scheduler.schedules.update("s", { interval: "10s" });
    expect(retimed.next_fire_at).toBe("2026-11-15T00:00:10Z");
  });

  it("a trigger whose transaction the database aborted (a deadlock) runs again instead of answering 503", async () => {
    const h = await makeHarness(db.store);
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "1h" });
    const store = db.store as { transaction: typeof db.store.transaction };
    const transaction = store.transaction;
    let aborts = 2;
    store.transaction = ((fn: never) => {
      if (aborts-- > 0) {
        return Promise.reject(new OrbitError("UNAVAILABLE", "the database aborted the transaction", { aborted: true }));
      }
      return transaction.call(db.store, fn);
    }) as typeof db.store.transaction;
    try {
      expect((await h.scheduler.actions.trigger("s", {})).started).toBe(true);
    } finally {
      store.transaction = transaction;
    }
    expect(aborts).toBe(-1);
    expect((await h.scheduler.schedules.get("s")).fired).toBe(1);
  });

  it("a backfill and triggers keep the ledger within its bound, as a fire does", async () => {
    // Only the fire pruned: a paused schedule's backfill of 1,100 occurrences kept 1,100 rows.
    const h = await makeHarness(db.store);
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "1m", paused: true });
    const r = await h.scheduler.actions.backfill("s", {
      start_at: "2026-11-14T00:00:00Z",
      end_at: "2026-11-14T18:19:00Z",
    });
    expect(r).toMatchObject({ occurrences: 1100, started: 1100 });
    const count = async () => (await db.store.listOccurrences("s", { limit: 5000 })).length;
    expect(await count()).toBe(LEDGER_RETENTION);
    await h.scheduler.actions.trigger("s", {});
    expect(await count()).toBe(LEDGER_RETENTION);
  }, 60_000);

  it("--ledger-retention bounds the ledger of fires, triggers and backfills alike", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-14T00:00:00.500Z", ledgerRetention: 10 });
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      interval: "1s",
      overlap: "allow",
    });
    const count = async () => (await db.store.listOccurrences("s", { limit: 5000 })).length;
    // A fire prunes every 64th decision: 200 fires leave between 10 and 10 + 63 rows.
    for (let i = 1; i <= 200; i++) await h.fireAt(new Date(Date.UTC(2026, 10, 14, 0, 0, i)).toISOString());
    expect((await h.scheduler.schedules.get("s")).fired).toBe(200);
    expect(await count()).toBeGreaterThanOrEqual(10);
    expect(await count()).toBeLessThan(10 + 64);
    await h.scheduler.actions.trigger("s", {});
    expect(await count()).toBe(10);
    await h.scheduler.actions.pause("s", {});
    await h.scheduler.actions.backfill("s", { start_at: "2026-11-13T00:00:00Z", end_at: "2026-11-13T00:00:30Z" });
    expect(await count()).toBe(10);
  });

  it("the last outcome is the execution that ended last, whatever order the ends commit in", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T18:51:00Z" });
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      interval: "1h",
      overlap: "allow",
    });
    const older = (await h.scheduler.actions.trigger("s", {})).execution_id as string;
    h.clock.advance(1);
    const newer = (await h.scheduler.actions.trigger("s", {})).execution_id as string;
    h.clock.set(parseInstant("2026-11-15T18:51:10Z"));
    await h.executions.cancel(newer, { reason: "ended at :10" });
    // The older one's end carries an earlier time but commits after (a slower transaction).
    h.clock.set(parseInstant("2026-11-15T18:51:05Z"));
    await h.executions.cancel(older, { reason: "ended at :05" });
    expect((await h.scheduler.schedules.get("s")).last_outcome).toMatchObject({ execution_id: newer });
  });

  it("a delete keeps the executions the schedule started", async () => {
    const h = await makeHarness(db.store);
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "10s" });
    await h.fireAt("2026-11-15T18:51:10Z");
    await h.scheduler.schedules.delete("s");
    expect((await h.executions.get("s:2026-11-15T18:51:10Z")).scheduleId).toBe("s");
  });

  it("a schedule created again under the same id gets no outcome from the deleted one's executions", async () => {
    // The old run's end wrote its outcome on the new schedule (and could pause it on failure).
    const h = await makeHarness(db.store);
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "1h" });
    const old = await h.scheduler.actions.trigger("s", {});
    await h.scheduler.schedules.delete("s");
    h.clock.advance(1000);
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "1h" });
    await h.executions.cancel(old.execution_id as string, { reason: "old" });
    expect((await h.executions.get(old.execution_id as string)).status).toBe("CANCELLED");
    const fresh = await h.scheduler.schedules.get("s");
    expect(fresh.last_outcome ?? null).toBeNull();
    // Its own executions still count.
    const own = await h.scheduler.actions.trigger("s", {});
    await h.executions.cancel(own.execution_id as string, { reason: "own" });
    expect((await h.scheduler.schedules.get("s")).last_outcome).toMatchObject({ execution_id: own.execution_id });
  });

  it("list pages by id and filters by workflow and state", async () => {
    const h = await makeHarness(db.store);
    await h.workflows.register({ name: "Other", version: "1.0.0" });
    for (let i = 0; i < 5; i++) {
      await h.scheduler.schedules.create({
        schedule_id: `s${i}`,
        workflow: i < 3 ? "OrderProcessing" : "Other",
        interval: "1h",
        paused: i === 0,
      });
    }
    const first = await h.scheduler.schedules.list({ limit: 2 });
    expect(first.schedules.map((x) => x.schedule_id)).toEqual(["s0", "s1"]);
    const second = await h.scheduler.schedules.list({ limit: 2, cursor: first.next_cursor as string });
    expect(second.schedules.map((x) => x.schedule_id)).toEqual(["s2", "s3"]);
    expect((await h.scheduler.schedules.list({ workflow: "Other" })).schedules.map((x) => x.schedule_id)).toEqual([
      "s3",
      "s4",
    ]);
    expect((await h.scheduler.schedules.list({ state: "paused" })).schedules.map((x) => x.schedule_id)).toEqual(["s0"]);
  });

  it("occurrences page newest first", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00.5Z" });
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      interval: "1s",
      overlap: "allow",
    });
    for (let i = 1; i <= 5; i++) await h.fireAt(`2026-11-15T00:00:0${i}Z`);
    const page = await h.scheduler.schedules.occurrences("s", { limit: 3 });
    expect(page.occurrences.map((o) => o.occurrence)).toEqual([
      "2026-11-15T00:00:05Z",
      "2026-11-15T00:00:04Z",
      "2026-11-15T00:00:03Z",
    ]);
    const rest = await h.scheduler.schedules.occurrences("s", { limit: 3, cursor: page.next_cursor as string });
    expect(rest.occurrences.map((o) => o.occurrence)).toEqual(["2026-11-15T00:00:02Z", "2026-11-15T00:00:01Z"]);
    expect(rest.next_cursor).toBeNull();
  });
});
