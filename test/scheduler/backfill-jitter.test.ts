/**
 * Backfill and jitter (docs/scheduling.md § Decisions, Backfill): an occurrence whose nominal time
 * is past but whose due time (occurrence + jitter) is not is still to come, so a backfill reaching
 * it is refused; once its own fire started it, a backfill counts it as existing. Found by the
 * reference model (model.test.ts) with jitter.
 */
import { expect, it } from "vitest";
import { jitterDelay } from "../../src/time/jitter.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { makeHarness } from "./harness.js";

describeEachDialect("scheduler: backfill with jitter", (dialect) => {
  const db = useStore(dialect);

  it("refuses an occurrence past but not due yet; its own fire starts it once", async () => {
    const o = Date.parse("2026-11-15T00:01:00Z");
    const delay = jitterDelay("s", o, 30_000);
    expect(delay).toBeGreaterThan(1000); // the test needs a due time well after the occurrence
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z" });
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      interval: "1m",
      jitter: "30s",
    });
    h.clock.set(o + 1);
    const range = { start_at: "2026-11-15T00:00:00Z", end_at: "2026-11-15T00:01:00Z" };
    await expect(h.scheduler.actions.backfill("s", range)).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message: expect.stringContaining("2026-11-15T00:01:00Z is still to come"),
    });
    expect(await db.store.listExecutions({ scheduleId: "s", limit: 10 })).toEqual([]);
    // The range before it is past: 00:00 starts.
    const before = await h.scheduler.actions.backfill("s", { ...range, end_at: "2026-11-15T00:00:59Z" });
    expect(before).toMatchObject({ occurrences: 1, started: 1 });
    h.clock.set(o + delay);
    await h.scheduler.loop.fireDue();
    const after = await h.scheduler.actions.backfill("s", range);
    expect(after).toMatchObject({ occurrences: 2, started: 0, already_existed: 2 });
    const started = (await db.store.listOccurrences("s", { limit: 10 })).filter((r) => r.kind === "started");
    expect(started.map((r) => new Date(r.occurrenceMs ?? 0).toISOString()).sort()).toEqual([
      "2026-11-15T00:00:00.000Z",
      "2026-11-15T00:01:00.000Z",
    ]);
    expect(await db.store.getSchedule("s")).toMatchObject({ fired: 2 });
  });
});
