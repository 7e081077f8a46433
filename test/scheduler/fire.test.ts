/**
 * Firing on a real store (both dialects) with a manual clock: every policy of docs/design.md § Policies and the
 * seed's own examples.
 */
import { expect, it } from "vitest";
import type { OccurrenceRow } from "../../src/store/rows.js";
import type { Store } from "../../src/store/store.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { makeHarness, ORDER_INPUT } from "./harness.js";

async function ledger(store: Store, id: string): Promise<OccurrenceRow[]> {
  return (await store.listOccurrences(id, { limit: 1000 })).reverse();
}

async function idsOf(store: Store, scheduleId: string): Promise<string[]> {
  const rows = await store.listExecutions({ scheduleId, limit: 1000 });
  return rows.map((e) => e.executionId).sort();
}

describeEachDialect("scheduler: firing", (dialect) => {
  const db = useStore(dialect);

  it("the seed's orders-every-10s: next fire 18:51:10Z, then one execution per occurrence with its trigger", async () => {
    const h = await makeHarness(db.store);
    const created = await h.scheduler.schedules.create({
      schedule_id: "orders-every-10s",
      workflow: "OrderProcessing",
      interval: "10s",
      input: ORDER_INPUT,
    });
    expect(created).toMatchObject({
      next_fire_at: "2026-11-15T18:51:10Z",
      next_fire_times: [
        "2026-11-15T18:51:10Z",
        "2026-11-15T18:51:20Z",
        "2026-11-15T18:51:30Z",
        "2026-11-15T18:51:40Z",
        "2026-11-15T18:51:50Z",
      ],
      fired: 0,
      skipped: 0,
      last_fire_at: null,
      created_at: "2026-11-15T18:51:00.347Z",
    });
    expect(await h.fireAt("2026-11-15T18:51:09.999Z")).toBe(0);
    expect(await h.fireAt("2026-11-15T18:51:10.020Z")).toBe(1);
    const e = await h.executions.get("orders-every-10s:2026-11-15T18:51:10Z");
    expect(e.scheduleId).toBe("orders-every-10s");
    expect(e.trigger).toEqual({
      type: "interval",
      schedule_id: "orders-every-10s",
      occurrence_id: "orders-every-10s:2026-11-15T18:51:10Z",
      scheduled_for: "2026-11-15T18:51:10Z",
      started_at: "2026-11-15T18:51:10.020Z",
      timezone: "UTC",
      attempt: 1,
    });
    const [first] = await h.executions.events(e.executionId);
    expect(first).toMatchObject({ type: "WorkflowCreated", data: { schedule_id: "orders-every-10s" } });
    await h.executions.complete(e.executionId, {});
    await h.fireAt("2026-11-15T18:51:20Z");
    const s = await h.scheduler.schedules.get("orders-every-10s");
    expect(s).toMatchObject({
      fired: 2,
      last_execution_id: "orders-every-10s:2026-11-15T18:51:20Z",
      last_fire_at: "2026-11-15T18:51:20Z",
      next_fire_at: "2026-11-15T18:51:30Z",
    });
    expect(h.reports.map((r) => r.lagsMs)).toEqual([[20], [0]]);
  });

  it("run_once after a server was down from 00:00 to 00:35 starts s:2026-11-15T00:30:00Z", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-14T23:55:00Z" });
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      interval: "10m",
      catchup: "run_once",
    });
    await h.fireAt("2026-11-15T00:00:00Z");
    await h.executions.complete("s:2026-11-15T00:00:00Z", {});
    await h.fireAt("2026-11-15T00:35:00Z");
    expect(await idsOf(db.store, "s")).toEqual(["s:2026-11-15T00:00:00Z", "s:2026-11-15T00:30:00Z"]);
    const rows = await ledger(db.store, "s");
    expect(rows.map((r) => [r.kind, r.reason, r.count])).toEqual([
      ["started", null, 1],
      ["skipped", "missed", 2],
      ["started", null, 1],
    ]);
    expect(await h.scheduler.schedules.get("s")).toMatchObject({
      fired: 2,
      skipped: 2,
      next_fire_at: "2026-11-15T00:40:00Z",
    });
  });

  it("skip_missed starts an occurrence at most 60 s late, and none older", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:05:00Z" });
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "10m" });
    await h.fireAt("2026-11-15T00:11:00Z");
    await h.executions.complete("s:2026-11-15T00:10:00Z", {});
    await h.fireAt("2026-11-15T00:21:00.001Z");
    expect(await idsOf(db.store, "s")).toEqual(["s:2026-11-15T00:10:00Z"]);
    expect(await h.scheduler.schedules.get("s")).toMatchObject({ fired: 1, skipped: 1 });
  });

  it("pausing over three occurrences and resuming starts nothing for them", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z" });
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      interval: "1m",
      catchup: "run_once",
    });
    const paused = await h.scheduler.actions.pause("s", { note: "maintenance" });
    expect(paused).toMatchObject({ paused: true, pause_note: "maintenance", state: "paused", next_fire_at: null });
    expect(await h.fireAt("2026-11-15T00:03:30Z")).toBe(0);
    const resumed = await h.scheduler.actions.resume("s", {});
    expect(resumed).toMatchObject({ paused: false, state: "active", next_fire_at: "2026-11-15T00:04:00Z" });
    await h.fireAt("2026-11-15T00:03:59Z");
    expect(await idsOf(db.store, "s")).toEqual([]);
    await h.fireAt("2026-11-15T00:04:00Z");
    expect(await idsOf(db.store, "s")).toEqual(["s:2026-11-15T00:04:00Z"]);
  });

  it("resume with catch_up applies the catch-up policy to the paused span", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z" });
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      interval: "1m",
      catchup: "run_once",
    });
    await h.scheduler.actions.pause("s", {});
    h.clock.set(Date.parse("2026-11-15T00:03:30Z"));
    await h.scheduler.actions.resume("s", { catch_up: true });
    await h.scheduler.loop.fireDue();
    expect(await idsOf(db.store, "s")).toEqual(["s:2026-11-15T00:03:00Z"]);
    expect(await h.scheduler.schedules.get("s")).toMatchObject({ skipped: 2 });
  });

  it("trigger under skip while the previous execution runs starts nothing, with the seed's message", async () => {
    const h = await makeHarness(db.store);
    await h.scheduler.schedules.create({
      schedule_id: "nightly-orders",
      workflow: "OrderProcessing",
      cron: "0 2 * * *",
      timezone: "Europe/Berlin",
    });
    h.clock.set(Date.parse("2026-11-15T18:52:22.296Z"));
    const first = await h.scheduler.actions.trigger("nightly-orders", {});
    expect(first).toEqual({
      started: true,
      execution_id: "nightly-orders:manual:2026-11-15T18:52:22.296Z",
      overlap: "skip",
    });
    const second = await h.scheduler.actions.trigger("nightly-orders", {});
    expect(second.started).toBe(false);
    expect(second.message).toBe(
      "not started: the previous execution of nightly-orders is still running (overlap: skip)",
    );
    const e = await h.executions.get("nightly-orders:manual:2026-11-15T18:52:22.296Z");
    expect(e.trigger).toMatchObject({ type: "manual", timezone: "Europe/Berlin", schedule_id: "nightly-orders" });
    expect(await h.scheduler.schedules.get("nightly-orders")).toMatchObject({
      next_fire_at: "2026-11-16T01:00:00Z",
      fired: 1,
      skipped: 1,
    });
  });

  it("a paused schedule can still be triggered; input in the trigger overrides for that execution", async () => {
    const h = await makeHarness(db.store);
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      interval: "1h",
      input: ORDER_INPUT,
      paused: true,
    });
    const r = await h.scheduler.actions.trigger("s", { input: { order_id: "X-9" } });
    expect((await h.executions.get(r.execution_id as string)).input).toEqual({ order_id: "X-9" });
  });

  it("cancel_previous cancels the running execution with the exact reason and starts the next at once", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z" });
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      interval: "1m",
      overlap: "cancel_previous",
    });
    await h.fireAt("2026-11-15T00:01:00Z");
    await h.fireAt("2026-11-15T00:02:00Z");
    const previous = await h.executions.get("s:2026-11-15T00:01:00Z");
    expect(previous.status).toBe("CANCELLED");
    expect(previous.cancelReason).toBe("schedule `s`: replaced by the next occurrence (overlap cancel_previous)");
    expect((await h.executions.get("s:2026-11-15T00:02:00Z")).status).toBe("RUNNING");
  });

  it("two schedules sharing a concurrency key never run at once; contenders are skipped for concurrency", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00.5Z" });
    for (const id of ["a", "b"]) {
      await h.scheduler.schedules.create({
        schedule_id: id,
        workflow: "OrderProcessing",
        interval: "10s",
        concurrency_key: "ledger",
      });
    }
    for (let i = 1; i <= 12; i++) {
      await h.fireAt(new Date(Date.parse("2026-11-15T00:00:00Z") + i * 10_000).toISOString());
      const running = (await db.store.listExecutions({ status: "RUNNING", limit: 100 })).filter(
        (e) => e.concurrencyKey === "ledger",
      );
      expect(running.length).toBeLessThanOrEqual(1);
      if (i % 3 === 0) for (const e of running) await h.executions.complete(e.executionId, {});
    }
    const reasons = [...(await ledger(db.store, "a")), ...(await ledger(db.store, "b"))]
      .filter((r) => r.kind === "skipped")
      .map((r) => r.reason);
    expect(reasons).toContain("concurrency");
    expect(reasons.every((r) => r === "concurrency" || r === "overlap")).toBe(true);
  });

  it("a per-second schedule down for a day records one missed row with count 86400", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00.5Z" });
    await h.scheduler.schedules.create({
      schedule_id: "tick",
      workflow: "OrderProcessing",
      interval: "1s",
      overlap: "allow",
    });
    await h.fireAt("2026-11-15T00:00:01Z");
    await h.fireAt("2026-11-16T00:00:02.5Z");
    const rows = await ledger(db.store, "tick");
    const missed = rows.filter((r) => r.reason === "missed");
    expect(missed).toHaveLength(1);
    expect(missed[0]).toMatchObject({
      count: 86400,
      rangeFromMs: Date.parse("2026-11-15T00:00:02Z"),
      rangeToMs: Date.parse("2026-11-16T00:00:01Z"),
    });
    expect(await idsOf(db.store, "tick")).toEqual(["tick:2026-11-15T00:00:01Z", "tick:2026-11-16T00:00:02Z"]);
  });

  it("buffer_one keeps one occurrence and starts it when the previous execution ends", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z" });
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      interval: "1m",
      overlap: "buffer_one",
    });
    await h.fireAt("2026-11-15T00:01:00Z");
    await h.fireAt("2026-11-15T00:02:00Z");
    await h.fireAt("2026-11-15T00:03:00Z");
    expect((await ledger(db.store, "s")).map((r) => [r.kind, r.reason])).toEqual([
      ["started", null],
      ["buffered", null],
      ["skipped", "buffer_full"],
    ]);
    h.clock.set(Date.parse("2026-11-15T00:03:10Z"));
    await h.executions.complete("s:2026-11-15T00:01:00Z", {});
    await h.scheduler.loop.fireDue();
    expect(await idsOf(db.store, "s")).toEqual(["s:2026-11-15T00:01:00Z", "s:2026-11-15T00:02:00Z"]);
    expect(await h.scheduler.schedules.get("s")).toMatchObject({ next_fire_at: "2026-11-15T00:04:00Z", skipped: 1 });
  });

  it("a woken buffer whose blocker still runs leaves the schedule due at its next occurrence, and the loop never spins", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z" });
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      interval: "1m",
      overlap: "allow",
    });
    await h.fireAt("2026-11-15T00:01:00Z");
    await h.fireAt("2026-11-15T00:02:00Z");
    await h.scheduler.schedules.update("s", { overlap: "buffer_one" });
    await h.fireAt("2026-11-15T00:03:00Z");
    h.scheduler.start();
    try {
      h.clock.set(Date.parse("2026-11-15T00:03:30Z"));
      // Not the last execution: the buffer is woken, but 00:02 still runs, so nothing can start.
      await h.executions.complete("s:2026-11-15T00:01:00Z", {});
      await new Promise((resolve) => setTimeout(resolve, 50)); // the event loop still turns
      await h.scheduler.loop.fireDue();
      expect(await h.scheduler.schedules.get("s")).toMatchObject({ next_fire_at: "2026-11-15T00:04:00Z" });
      expect(await idsOf(db.store, "s")).toEqual(["s:2026-11-15T00:01:00Z", "s:2026-11-15T00:02:00Z"]);
    } finally {
      await h.scheduler.close();
    }
  });

  it("buffer_all runs buffered occurrences one after another, oldest first", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z" });
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      interval: "1m",
      overlap: "buffer_all",
    });
    for (const t of ["00:01", "00:02", "00:03"]) await h.fireAt(`2026-11-15T${t}:00Z`);
    for (const [done, next] of [
      ["00:01", "00:02"],
      ["00:02", "00:03"],
    ] as const) {
      await h.executions.complete(`s:2026-11-15T${done}:00Z`, {});
      await h.scheduler.loop.fireDue();
      expect((await h.executions.get(`s:2026-11-15T${next}:00Z`)).status).toBe("RUNNING");
    }
  });

  it("a start refused for max-active-executions keeps the occurrence, shows last_error and retries 5 s later", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z", maxActiveExecutions: 1 });
    await h.executions.start({ executionId: "blocker", workflow: "OrderProcessing", input: { order_id: "b" } });
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "1m" });
    await h.fireAt("2026-11-15T00:01:00Z");
    expect(await h.scheduler.schedules.get("s")).toMatchObject({ next_fire_at: "2026-11-15T00:01:05Z", fired: 0 });
    expect((await h.scheduler.schedules.get("s")).last_error).toContain("--max-active-executions");
    await h.executions.complete("blocker", {});
    await h.fireAt("2026-11-15T00:01:05Z");
    expect(await idsOf(db.store, "s")).toEqual(["s:2026-11-15T00:01:00Z"]);
    expect(await h.scheduler.schedules.get("s")).toMatchObject({ last_error: null, fired: 1 });
  });

  it("with a misfire grace under 5 s, a refused start is tried again before the grace ends, not after", async () => {
    // Retried 5 s later whatever the grace: with a grace of 2 s the retry always came too late, and
    // a 429 was a dead letter without a second try.
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z", maxActiveExecutions: 1, graceMs: 2000 });
    await h.executions.start({ executionId: "blocker", workflow: "OrderProcessing", input: { order_id: "b" } });
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "1m" });
    await h.fireAt("2026-11-15T00:01:00.500Z");
    expect(await h.scheduler.schedules.get("s")).toMatchObject({ next_fire_at: "2026-11-15T00:01:02Z", fired: 0 });
    await h.executions.complete("blocker", {});
    await h.fireAt("2026-11-15T00:01:02Z");
    expect(await idsOf(db.store, "s")).toEqual(["s:2026-11-15T00:01:00Z"]);
    expect(await h.scheduler.schedules.get("s")).toMatchObject({ last_error: null, fired: 1, skipped: 0 });
  });

  it("an occurrence blocked past the grace becomes a dead letter and the schedule moves on", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z", maxActiveExecutions: 1 });
    await h.executions.start({ executionId: "blocker", workflow: "OrderProcessing", input: { order_id: "b" } });
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "10m" });
    await h.fireAt("2026-11-15T00:10:00Z");
    await h.fireAt("2026-11-15T00:11:05Z");
    const s = await h.scheduler.schedules.get("s");
    expect(s).toMatchObject({ next_fire_at: "2026-11-15T00:20:00Z", skipped: 1 });
    expect((s.dead_letters as Array<{ occurrence: string }>)[0]?.occurrence).toBe("2026-11-15T00:10:00Z");
  });

  it("a clock that jumps backwards never fires an occurrence twice", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z" });
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      interval: "1m",
      overlap: "allow",
    });
    await h.fireAt("2026-11-15T00:01:00Z");
    await h.fireAt("2026-11-15T00:02:00Z");
    expect(await h.fireAt("2026-11-15T00:00:40Z")).toBe(0);
    expect(await h.fireAt("2026-11-15T00:01:30Z")).toBe(0);
    await h.fireAt("2026-11-15T00:03:00Z");
    expect(await idsOf(db.store, "s")).toEqual([
      "s:2026-11-15T00:01:00Z",
      "s:2026-11-15T00:02:00Z",
      "s:2026-11-15T00:03:00Z",
    ]);
  });

  it("an update recomputes the next occurrence from now and keeps counters and the last execution", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z" });
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "1m" });
    await h.fireAt("2026-11-15T00:01:00Z");
    h.clock.set(Date.parse("2026-11-15T00:01:10Z"));
    const updated = await h.scheduler.schedules.update("s", { cron: "*/5 * * * *" });
    expect(updated).toMatchObject({
      cron: "*/5 * * * *",
      fired: 1,
      last_execution_id: "s:2026-11-15T00:01:00Z",
      next_fire_at: "2026-11-15T00:05:00Z",
    });
    expect(updated).not.toHaveProperty("interval");
    expect(updated.revision).toBeGreaterThan(2);
  });

  it("end_at ends the schedule: state ended, next_fire_at null", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z" });
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      interval: "1m",
      end_at: "2026-11-15T00:02:00Z",
      overlap: "allow",
    });
    await h.fireAt("2026-11-15T00:01:00Z");
    await h.fireAt("2026-11-15T00:02:00Z");
    expect(await h.scheduler.schedules.get("s")).toMatchObject({
      state: "ended",
      next_fire_at: null,
      next_fire_times: [],
      fired: 2,
    });
  });

  it("jitter delays the fire deterministically; the id and scheduled_for keep the nominal time", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T18:30:00Z" });
    const s = await h.scheduler.schedules.create({
      schedule_id: "hourly-check",
      workflow: "OrderProcessing",
      interval: "1h",
      jitter: "30s",
    });
    const due = Date.parse(s.next_fire_at as string);
    expect(due).toBeGreaterThanOrEqual(Date.parse("2026-11-15T19:00:00Z"));
    expect(due).toBeLessThan(Date.parse("2026-11-15T19:00:30Z"));
    expect(s.next_fire_times).toContain("2026-11-15T19:00:00Z");
    h.clock.set(due - 1);
    expect(await h.scheduler.loop.fireDue()).toBe(0);
    h.clock.set(due);
    expect(await h.scheduler.loop.fireDue()).toBe(1);
    expect((await h.executions.get("hourly-check:2026-11-15T19:00:00Z")).trigger).toMatchObject({
      scheduled_for: "2026-11-15T19:00:00Z",
    });
  });

  it("backfill starts a past range under nominal ids, and a repeat starts nothing twice", async () => {
    const h = await makeHarness(db.store);
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "1h" });
    const first = await h.scheduler.actions.backfill("s", {
      start_at: "2026-11-15T00:00:00Z",
      end_at: "2026-11-15T03:00:00Z",
    });
    expect(first).toMatchObject({ occurrences: 4, started: 4, already_existed: 0 });
    const again = await h.scheduler.actions.backfill("s", {
      start_at: "2026-11-15T02:00:00Z",
      end_at: "2026-11-15T04:00:00Z",
    });
    expect(again).toMatchObject({ occurrences: 3, started: 1, already_existed: 2 });
    expect((await h.executions.get("s:2026-11-15T00:00:00Z")).trigger).toMatchObject({ type: "backfill" });
  });

  it("the loop wakes at the due instant by itself, with no polling in between", async () => {
    const h = await makeHarness(db.store);
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "10s" });
    h.scheduler.start();
    try {
      while (h.clock.pendingSleeps === 0) await new Promise((r) => setTimeout(r, 5));
      h.clock.set(Date.parse("2026-11-15T18:51:10Z"));
      for (let i = 0; i < 400 && (await idsOf(db.store, "s")).length === 0; i++)
        await new Promise((r) => setTimeout(r, 5));
      expect(await idsOf(db.store, "s")).toEqual(["s:2026-11-15T18:51:10Z"]);
    } finally {
      await h.scheduler.close();
    }
  });
});
