/**
 * Doctor's `schedules` check on both stores, with the injected clock and no running loop:
 * overdue by the one rule of orbit_schedules_overdue and the overdue=true search (`isOverdue`, so a
 * schedule woken for its oldest buffered occurrence is not overdue), and schedules their
 * concurrency key holds off (src/scheduler/doctor-held.ts): a tester's schedule behind an `allow`
 * schedule on its key fired 0 and skipped 1,008 while doctor said ok.
 */
import { expect, it } from "vitest";
import { runDoctor } from "../../src/scheduler/doctor.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { makeHarness, ORDER_INPUT } from "./harness.js";

const base = { workflow: "OrderProcessing", interval: "1m", input: ORDER_INPUT };

describeEachDialect("orbit doctor: overdue by one rule, schedules held off by their key", (dialect) => {
  const db = useStore(dialect);

  async function schedulesCheck(h: Awaited<ReturnType<typeof makeHarness>>) {
    return (await runDoctor(db.store, h.clock)).checks.find((c) => c.name === "schedules");
  }

  it("does not call a schedule woken for its oldest buffered occurrence overdue; a plain late one is", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z" });
    await h.scheduler.schedules.create({ ...base, schedule_id: "woken", overlap: "buffer_one" });
    await h.fireAt("2026-11-15T00:01:00Z"); // starts; no worker, so it runs on
    await h.fireAt("2026-11-15T00:02:00Z"); // buffered behind its own run
    await h.fireAt("2026-11-15T00:03:00Z"); // buffer_full
    h.clock.set(Date.parse("2026-11-15T00:05:00Z"));
    const last = (await db.store.getSchedule("woken"))?.lastExecutionId;
    await h.executions.cancel(String(last), { reason: "test" });
    const woken = await db.store.getSchedule("woken");
    // Due at its oldest buffered occurrence, three minutes old: the loop decides it next round.
    expect(woken?.buffered).toEqual([Date.parse("2026-11-15T00:02:00Z")]);
    expect(woken?.dueMs).toBe(Date.parse("2026-11-15T00:02:00Z"));
    expect(await schedulesCheck(h)).toMatchObject({ status: "ok", message: "1 active, none overdue" });

    // A schedule the loop left behind is overdue, and only it.
    const late = await h.scheduler.schedules.create({ ...base, schedule_id: "late" });
    expect(late.schedule_id).toBe("late");
    h.clock.set(Date.parse("2026-11-15T00:08:00Z"));
    const c = await schedulesCheck(h);
    expect(c?.status).toBe("fail");
    expect(c?.message).toBe("1 schedule(s) overdue (due over 60 s ago and not fired): late; the oldest is 120 s late");
  });

  it("warns of a schedule skipped for its key every occurrence while another schedule keeps it", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z" });
    await h.scheduler.schedules.create({ ...base, schedule_id: "hog", overlap: "allow", concurrency_key: "k1" });
    await h.fireAt("2026-11-15T00:01:00Z"); // hog's run holds k1 (no worker: it runs on)
    h.clock.set(Date.parse("2026-11-15T00:01:30Z"));
    await h.scheduler.schedules.create({ ...base, schedule_id: "starved", overlap: "skip", concurrency_key: "k1" });
    await h.fireAt("2026-11-15T00:02:00Z");
    // Within the grace: nothing said.
    h.clock.set(Date.parse("2026-11-15T00:02:20Z"));
    expect(await schedulesCheck(h)).toMatchObject({ status: "ok", message: "2 active, none overdue" });
    await h.fireAt("2026-11-15T00:03:00Z");
    await h.fireAt("2026-11-15T00:04:00Z");
    const ledger = (await db.store.listOccurrences("starved", { limit: 10 })).map((r) => [r.kind, r.reason]);
    expect(ledger).toEqual([
      ["skipped", "concurrency"],
      ["skipped", "concurrency"],
      ["skipped", "concurrency"],
    ]);
    const c = await schedulesCheck(h);
    expect(c).toMatchObject({
      status: "warn",
      message:
        "2 active, none overdue; 1 schedule(s) held off by their concurrency key: starved (key k1; nothing started for 150 s, 3 skipped)",
    });
    expect(c?.hint).toContain("overlap allow, or a buffer that never empties");
    expect(c?.hint).toContain("docs/scheduling.md § Decisions, concurrency keys");
  });

  it("warns of a buffer waiting for its key longer than the grace, not of one its own run held", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z" });
    await h.scheduler.schedules.create({ ...base, schedule_id: "hog", overlap: "allow", concurrency_key: "k1" });
    await h.fireAt("2026-11-15T00:01:00Z");
    h.clock.set(Date.parse("2026-11-15T00:01:30Z"));
    await h.scheduler.schedules.create({ ...base, schedule_id: "queue", overlap: "buffer_all", concurrency_key: "k1" });
    // Held by its own run: it started at 00:01:00 and its buffer waits for that run.
    await h.scheduler.schedules.create({ ...base, schedule_id: "own", overlap: "buffer_all", concurrency_key: "k2" });
    for (const t of ["00:02:00", "00:03:00", "00:04:00"]) await h.fireAt(`2026-11-15T${t}Z`);
    expect((await db.store.getSchedule("queue"))?.buffered.length).toBe(3);
    expect((await db.store.getSchedule("own"))?.buffered.length).toBe(2);
    const said =
      "1 schedule(s) held off by their concurrency key: queue (key k1; nothing started for 150 s, 3 buffered, the oldest due 120 s ago)";
    expect((await schedulesCheck(h))?.message).toBe(`3 active, none overdue; ${said}`);

    // Its own run just ended: the buffer is woken, and the loop starts it at its next round.
    const ownLast = (await db.store.getSchedule("own"))?.lastExecutionId;
    await h.executions.cancel(String(ownLast), { reason: "test" });
    expect((await schedulesCheck(h))?.message).toBe(`3 active, none overdue; ${said}`);

    // Something started lately, but the oldest buffered occurrence has waited past the grace.
    const queue = await db.store.getSchedule("queue");
    if (queue === null) throw new Error("no schedule");
    await db.store.updateSchedule(
      { ...queue, lastFireMs: h.clock.now() - 10_000 },
      { expectedRevision: queue.revision },
    );
    expect((await schedulesCheck(h))?.message).toBe(
      "3 active, none overdue; 1 schedule(s) held off by their concurrency key: queue (key k1; 3 buffered, the oldest due 120 s ago)",
    );
  });
});
