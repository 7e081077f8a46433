/**
 * A schedule whose alerts fail says so where it is shown (docs/outcomes.md § Notifications): the
 * newest tried delivery, retrying after an error or given up, is the schedule read's
 * `notify_failure`, and a delivery given up counts in orbit_notifications_failed_total (the
 * notifier's onGiveUp). A later delivery to the same URL that lands clears it: the channel works again.
 */
import { expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { MAX_ATTEMPTS, Notifier } from "../../src/engine/notifier.js";
import { notifyFailure } from "../../src/scheduler/notify-failure.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { closedPort } from "../helpers/ports.js";
import { makeHarness, ORDER_INPUT } from "../scheduler/harness.js";

describeEachDialect("failing webhook deliveries", (dialect) => {
  const db = useStore(dialect);

  it("show on the schedule while retrying and once given up, and count when given up", async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 15, 19, 0, 0));
    const url = `http://127.0.0.1:${await closedPort()}/hook`;
    const payload = { event: "failure", schedule_id: "nightly" };
    const stored = { scheduleId: "nightly", workflow: "Report", event: "failure", url, payload };
    await db.store.insertNotifications([{ ...stored, createdMs: clock.now() }], clock.now());
    let givenUp = 0;
    const quiet = { error: () => undefined, warn: () => undefined };
    const notifier = new Notifier({ store: db.store, clock, secret: null, log: quiet, onGiveUp: () => givenUp++ });
    const failure = async () => notifyFailure(await db.store.listNotifications("nightly", { limit: 20 }));
    try {
      expect(await failure()).toBeNull(); // not tried yet
      await notifier.deliverDue();
      expect(await failure()).toMatchObject({ event: "failure", url, state: "retrying", attempts: 1 });
      // fetch's cause says why: its own message is only "fetch failed".
      expect((await failure())?.error).toMatch(/^fetch failed: .*ECONNREFUSED/);
      for (let attempt = 2; attempt <= MAX_ATTEMPTS; attempt++) {
        clock.advance(10 * 60_000); // past the longest back-off
        expect(await notifier.deliverDue()).toBe(1);
      }
      expect(await failure()).toMatchObject({ state: "failed", attempts: MAX_ATTEMPTS, error: expect.any(String) });
      expect(givenUp).toBe(1);
    } finally {
      await notifier.close();
    }
  });

  it("is cleared by a newer delivery that landed, and says nothing before any was tried", () => {
    const row = (
      id: number,
      state: "pending" | "delivered" | "failed",
      attempts: number,
      lastError: string | null,
    ) => ({
      id,
      scheduleId: "nightly",
      workflow: "Report",
      event: "failure",
      url: "https://hooks.example/x",
      payload: {},
      createdMs: Date.UTC(2026, 10, 15, 19, id),
      state,
      attempts,
      nextAttemptMs: null,
      lastError,
      deliveredMs: state === "delivered" ? Date.UTC(2026, 10, 15, 19, id) : null,
    });
    expect(
      notifyFailure([row(3, "pending", 0, null), row(2, "delivered", 1, null), row(1, "failed", 8, "HTTP 500")]),
    ).toBeNull();
    expect(notifyFailure([row(3, "pending", 0, null), row(2, "failed", 8, "HTTP 500")])).toMatchObject({
      state: "failed",
      error: "HTTP 500",
      created_at: "2026-11-15T19:02:00Z",
    });
    expect(notifyFailure([])).toBeNull();
    // Per URL: another hook's delivery that landed does not hide a dead one.
    const other = { ...row(4, "delivered", 1, null), url: "https://other.example/y" };
    expect(notifyFailure([other, row(2, "failed", 8, "HTTP 500")])).toMatchObject({ url: "https://hooks.example/x" });
    // A webhook the schedule no longer calls (its notify changed) says nothing any more.
    expect(notifyFailure([other, row(2, "failed", 8, "HTTP 500")], new Set(["https://other.example/y"]))).toBeNull();
    expect(notifyFailure([row(2, "failed", 8, "HTTP 500")], new Set(["https://hooks.example/x"]))).not.toBeNull();
  });

  it("on the schedule's read, only for the webhooks it still calls", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T19:00:00Z" });
    const dead = "https://hooks.example/dead";
    await h.scheduler.schedules.create({
      schedule_id: "nightly",
      workflow: "OrderProcessing",
      interval: "1h",
      input: ORDER_INPUT,
      notify: dead,
    });
    const payload = { event: "failure", schedule_id: "nightly" };
    await db.store.insertNotifications(
      [
        {
          scheduleId: "nightly",
          workflow: "OrderProcessing",
          event: "failure",
          url: dead,
          payload,
          createdMs: h.clock.now(),
        },
      ],
      h.clock.now(),
    );
    const [stored] = await db.store.listNotifications("nightly", { limit: 1 });
    await db.store.updateNotification(stored!.id, {
      state: "failed",
      attempts: MAX_ATTEMPTS,
      nextAttemptMs: null,
      lastError: "HTTP 500",
      deliveredMs: null,
    });
    expect((await h.scheduler.schedules.get("nightly")).notify_failure).toMatchObject({ url: dead, state: "failed" });
    await h.scheduler.schedules.update("nightly", { notify: "https://hooks.example/new" });
    expect((await h.scheduler.schedules.get("nightly")).notify_failure).toBeUndefined();
    // Deleted and made again with the dead URL: the old schedule's failed delivery is not the new
    // one's (it said "notify failing" before the new schedule had run at all; a tester).
    await h.scheduler.schedules.delete("nightly");
    h.clock.advance(1000);
    const again = { schedule_id: "nightly", workflow: "OrderProcessing", interval: "1h", input: ORDER_INPUT };
    await h.scheduler.schedules.create({ ...again, notify: dead });
    expect((await h.scheduler.schedules.get("nightly")).notify_failure).toBeUndefined();
  });
});
