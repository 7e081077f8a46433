/**
 * A concurrency key held at once by another schedule's execution and by one of the schedule's own
 * that is not its last (here: from before a delete and create under the same id). Another schedule
 * holds the key, so `cancel_previous` skips for `concurrency` (docs/scheduling.md: Orbit never
 * cancels another schedule's execution, nor starts beside it), whichever holder the database
 * happens to return first. Found by the reference model (model.test.ts) on PostgreSQL.
 */
import { expect, it } from "vitest";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { makeHarness } from "./harness.js";

describeEachDialect("scheduler: a key held by the schedule's old execution and another schedule's", (dialect) => {
  const db = useStore(dialect);

  it("skips for concurrency and starts nothing beside the other schedule's holder", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z" });
    const a = { schedule_id: "a", workflow: "OrderProcessing", interval: "1m", concurrency_key: "k" };
    await h.scheduler.schedules.create({ ...a, overlap: "skip" });
    await h.scheduler.schedules.create({ ...a, schedule_id: "b", overlap: "allow" });
    await h.fireAt("2026-11-15T00:01:00Z"); // a starts; b starts beside it (allow)
    await h.scheduler.schedules.delete("a");
    await h.scheduler.schedules.create({ ...a, overlap: "cancel_previous" });
    await h.fireAt("2026-11-15T00:02:00Z");
    const ledger = (await db.store.listOccurrences("a", { limit: 10 })).map((r) => [r.kind, r.reason]);
    expect(ledger).toEqual([["skipped", "concurrency"]]);
    const running = (await db.store.listExecutions({ scheduleId: "a", limit: 10 })).map((e) => e.executionId);
    expect(running).toEqual(["a:2026-11-15T00:01:00Z"]);
  });

  it("cancel_previous whose own last execution runs beside another schedule's holder skips for concurrency", async () => {
    // Its own run answered first, so it cancelled that and started again, beside the other
    // schedule's execution holding the key, every occurrence (found by a concurrent run on three servers).
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z" });
    const base = { workflow: "OrderProcessing", interval: "1m", concurrency_key: "k" };
    await h.scheduler.schedules.create({ ...base, schedule_id: "cp", overlap: "cancel_previous" });
    await h.scheduler.schedules.create({ ...base, schedule_id: "other", overlap: "allow" });
    await h.fireAt("2026-11-15T00:01:00Z"); // cp starts; other starts beside it (allow)
    expect(await h.scheduler.actions.trigger("cp", {})).toMatchObject({
      started: false,
      message: "not started: another schedule's execution holds concurrency key k",
    });
    await h.fireAt("2026-11-15T00:02:00Z");
    const ledger = (await db.store.listOccurrences("cp", { limit: 10 })).map((r) => [r.kind, r.reason]);
    expect(ledger).toEqual([
      ["skipped", "concurrency"],
      ["skipped", "concurrency"],
      ["started", null],
    ]);
    const cp = await db.store.listExecutions({ scheduleId: "cp", limit: 10 });
    expect(cp.map((e) => [e.executionId, e.status])).toEqual([["cp:2026-11-15T00:01:00Z", "RUNNING"]]);
  });
});
