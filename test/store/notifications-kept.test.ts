/**
 * A schedule keeps its newest 1,000 webhook deliveries, as its ledger keeps its newest rows
 * (docs/outcomes.md § Notifications): orbit_notifications was never pruned, and grew by 18,400 rows
 * an hour under a tester's failing per-second schedules, most of their executions long deleted.
 * Pending deliveries are never deleted; another schedule's, and a workflow's own, are counted apart.
 */
import { expect, it } from "vitest";
import { queueNotifications } from "../../src/scheduler/outcomes.js";
import { describeEachDialect, useStore } from "../helpers/db.js";

describeEachDialect("webhook deliveries kept", (dialect) => {
  const db = useStore(dialect);

  it("keeps a schedule's newest ended deliveries and every pending one", async () => {
    const row = (scheduleId: string | null, n: number) => ({
      scheduleId,
      workflow: "Report",
      event: "failure",
      url: "http://127.0.0.1:9/hook",
      payload: { n },
      createdMs: n,
    });
    const oldest = (scheduleId: string | null) => Array.from({ length: 6 }, (_, n) => row(scheduleId, n));
    await db.store.insertNotifications([...oldest("a"), ...oldest("b"), ...oldest(null)], 0);
    // The oldest two of each stay pending (a target that has not answered yet); the rest ended.
    for (const scheduleId of ["a", "b"]) {
      const rows = await db.store.listNotifications(scheduleId, { limit: 10 });
      for (const r of rows.slice(0, 4)) {
        await db.store.updateNotification(r.id, {
          state: "delivered",
          attempts: 1,
          nextAttemptMs: null,
          lastError: null,
          deliveredMs: 1,
        });
      }
    }
    expect(await db.store.pruneNotificationsOf("a", "Report", 3)).toBe(1);
    const left = await db.store.listNotifications("a", { limit: 10 });
    expect(left.map((r) => [r.payload.n, r.state])).toEqual([
      [5, "delivered"],
      [4, "delivered"],
      [3, "delivered"],
      [1, "pending"],
      [0, "pending"],
    ]);
    expect(await db.store.listNotifications("b", { limit: 10 })).toHaveLength(6);
    // A workflow's own deliveries (no schedule) are kept apart, by workflow.
    expect(await db.store.pruneNotificationsOf(null, "Other", 0)).toBe(0);
  });

  it("is applied as a failure queues its delivery", async () => {
    const schedule = { scheduleId: "s", spec: { notify: "http://127.0.0.1:9/hook" } } as unknown as Parameters<
      typeof queueNotifications
    >[2];
    const queue = (i: number) =>
      db.store.transaction((tx) => queueNotifications(tx, "failure", schedule, "Report", { i }, i));
    for (let i = 0; i < 1005; i++) await queue(i);
    const all = async () => {
      const rows = [];
      for (let page = await db.store.listNotifications("s", { limit: 1000 }); page.length > 0; ) {
        rows.push(...page);
        page = await db.store.listNotifications("s", { limit: 1000, beforeId: page.at(-1)?.id as number });
      }
      return rows;
    };
    // All pending (not sent yet): none is deleted.
    expect(await all()).toHaveLength(1005);
    for (const r of await all()) {
      await db.store.updateNotification(r.id, {
        state: "failed",
        attempts: 8,
        nextAttemptMs: null,
        lastError: "HTTP 500",
        deliveredMs: null,
      });
    }
    await queue(1005);
    const kept = await all();
    expect(kept).toHaveLength(1000);
    expect(kept[0]?.payload.i).toBe(1005);
    expect(kept.at(-1)?.payload.i).toBe(6);
  });

  it("queues one delivery per URL and event, however many times the schedule and its workflow name it", async () => {
    // Named twice, a URL was called twice per event, with two delivery ids (a tester).
    const hook = "http://127.0.0.1:9/hook";
    const other = "http://127.0.0.1:9/other";
    await db.store.putWorkflowSettings("Report", { notify: [hook, { url: other, events: ["recovery"] }] }, 0);
    const schedule = { scheduleId: "d", spec: { notify: [hook, hook, { url: other }] } } as unknown as Parameters<
      typeof queueNotifications
    >[2];
    expect(await db.store.transaction((tx) => queueNotifications(tx, "failure", schedule, "Report", {}, 1))).toBe(2);
    const rows = await db.store.listNotifications("d", { limit: 10 });
    expect(rows.map((r) => r.url).sort()).toEqual([hook, other]);
  });
});
