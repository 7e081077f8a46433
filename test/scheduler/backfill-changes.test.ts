/**
 * A backfill runs in batches of 100, each its own transaction (docs/scheduling.md § Backfill). A
 * change to the schedule between two batches (a PATCH, another backfill) is waited for and built
 * on: the backfill goes on and starts every occurrence, where each later batch's compare-and-set
 * failed on PostgreSQL with 409 "changed meanwhile" after keeping its first batches. A delete
 * between batches stops it with NOT_FOUND saying how many started. Both dialects.
 */
import { expect, it } from "vitest";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { makeHarness } from "./harness.js";

const range = { start_at: "2026-11-14T00:00:00Z", end_at: "2026-11-14T00:04:59Z" }; // 300 occurrences

describeEachDialect("scheduler: a backfill while the schedule changes", (dialect) => {
  const db = useStore(dialect);

  it("goes on through PATCHes between its batches and starts every occurrence once", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00.500Z" });
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "1s", paused: true });
    const backfill = h.scheduler.actions.backfill("s", range);
    let done = false;
    const end = (): void => {
      done = true;
    };
    void backfill.then(end, end);
    let patches = 0;
    while (!done) {
      await h.scheduler.schedules.update("s", { description: `change ${patches}` });
      patches++;
    }
    expect(await backfill).toMatchObject({ occurrences: 300, started: 300, already_existed: 0 });
    expect(patches).toBeGreaterThan(1);
    const s = await h.scheduler.schedules.get("s");
    expect(s).toMatchObject({ fired: 300, description: `change ${patches - 1}` });
  });

  it("two backfills of one range at once start each occurrence once between them", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00.500Z" });
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "1s", paused: true });
    const [a, b] = await Promise.all([
      h.scheduler.actions.backfill("s", range),
      h.scheduler.actions.backfill("s", range),
    ]);
    expect(a.started + b.started).toBe(300);
    expect(a.started + a.already_existed).toBe(300);
    expect(b.started + b.already_existed).toBe(300);
    expect((await h.scheduler.schedules.get("s")).fired).toBe(300);
  });

  /**
   * A backfill of `range` on a 1 s schedule with `change` made after its first batch: its refusal
   * (with `code`, and `message` where `N` stands for how many started), and the executions it left.
   */
  async function stoppedBy(
    change: (h: Awaited<ReturnType<typeof makeHarness>>) => Promise<unknown>,
    code: string,
    message: string,
  ) {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00.500Z" });
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "1s", paused: true });
    // Its refusal is taken at once: it may come while the change is awaited.
    const backfill = h.scheduler.actions.backfill("s", range).then(
      () => null,
      (e: unknown) => e,
    );
    // The first batch commits before the backfill yields its turn; the change lands after it.
    await new Promise((resolve) => setImmediate(resolve));
    await change(h);
    const err = await backfill;
    expect(err).toMatchObject({ code });
    const started = Number(/after (\d+)/.exec((err as Error).message)?.[1]);
    expect((err as Error).message).toBe(message.replace("N", String(started)));
    expect(started).toBeLessThan(300);
    const executions = await db.store.listExecutions({ scheduleId: "s", limit: 1000 });
    expect(executions).toHaveLength(started);
    return executions;
  }

  it("stops with NOT_FOUND when the schedule is deleted between its batches; what started stays", async () => {
    await stoppedBy(
      (h) => h.scheduler.schedules.delete("s"),
      "NOT_FOUND",
      "schedule s was deleted during the backfill, after N of its 300 occurrences started (they stay)",
    );
  });

  it("stops with CONFLICT when the timing changes between its batches; what started stays, all of the old timing", async () => {
    // Going on, the rest started the per-second occurrences with the new settings (a tester).
    const executions = await stoppedBy(
      (h) => h.scheduler.schedules.update("s", { interval: "1m", input: { order_id: "new" } }),
      "CONFLICT",
      "schedule s's timing changed during the backfill, after N of its 300 occurrences started (they stay); backfill the rest again under the new timing",
    );
    expect(executions.filter((e) => JSON.stringify(e.input).includes("new"))).toEqual([]);
  });
});
