/**
 * The batched fire (fireSchedules, the only firing path): starts, ledger rows and schedule rows are
 * written with multi-row statements, and the outcome is what firing one by one gives, on both
 * dialects.
 */
import { expect, it } from "vitest";
import type { Store } from "../../src/store/store.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { makeHarness, ORDER_INPUT } from "./harness.js";

async function kinds(store: Store, id: string): Promise<string[]> {
  return (await store.listOccurrences(id, { limit: 1000 })).reverse().map((o) => o.kind);
}

describeEachDialect("scheduler: batched firing", (dialect) => {
  const db = useStore(dialect);

  it("starts plain fires like start() does: execution, WorkflowCreated with the trigger, pending task, ledger, row", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z" });
    for (const id of ["a", "b", "c"]) {
      await h.scheduler.schedules.create({
        schedule_id: id,
        workflow: "OrderProcessing",
        interval: "1m",
        input: ORDER_INPUT,
      });
    }
    expect(await h.fireAt("2026-11-15T00:01:00.250Z")).toBe(3);
    for (const id of ["a", "b", "c"]) {
      const executionId = `${id}:2026-11-15T00:01:00Z`;
      const execution = await h.executions.get(executionId);
      expect(execution).toMatchObject({
        status: "RUNNING",
        workflow: "OrderProcessing",
        version: "1.0.0",
        input: ORDER_INPUT,
        scheduleId: id,
        run: 1,
        attempt: 1,
        createdMs: Date.parse("2026-11-15T00:01:00.250Z"),
      });
      const trigger = {
        type: "interval",
        schedule_id: id,
        occurrence_id: executionId,
        scheduled_for: "2026-11-15T00:01:00Z",
        started_at: "2026-11-15T00:01:00.250Z",
        timezone: "UTC",
        attempt: 1,
      };
      expect(execution.trigger).toEqual(trigger);
      expect(await h.executions.events(executionId)).toEqual([
        {
          executionId,
          seq: 1,
          type: "WorkflowCreated",
          data: { workflow: "OrderProcessing", version: "1.0.0", input: ORDER_INPUT, schedule_id: id, trigger },
          atMs: Date.parse("2026-11-15T00:01:00.250Z"),
        },
      ]);
      expect(await db.store.getTaskForExecution(executionId)).toMatchObject({ state: "pending", run: 1, attempt: 1 });
      expect(await kinds(db.store, id)).toEqual(["started"]);
      expect(await h.scheduler.schedules.get(id)).toMatchObject({
        next_fire_at: "2026-11-15T00:02:00Z",
        fired: 1,
        last_execution_id: executionId,
        last_fire_at: "2026-11-15T00:01:00.250Z",
        revision: 2,
      });
    }
    expect(h.reports.map((r) => [r.scheduleId, r.started, r.advanced, r.lagsMs])).toEqual([
      ["a", 1, true, [250]],
      ["b", 1, true, [250]],
      ["c", 1, true, [250]],
    ]);
    // The second fire sees the first executions running (overlap skip), from one status read.
    await h.executions.complete("b:2026-11-15T00:01:00Z", {});
    expect(await h.fireAt("2026-11-15T00:02:00Z")).toBe(3);
    expect(await kinds(db.store, "a")).toEqual(["started", "skipped"]);
    expect(await kinds(db.store, "b")).toEqual(["started", "started"]);
    expect(await h.scheduler.schedules.get("a")).toMatchObject({ fired: 1, skipped: 1 });
  });

  it("an execution id that exists is not started again: counted as this schedule's start, the others fire", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z" });
    for (const id of ["a", "b"]) {
      await h.scheduler.schedules.create({ schedule_id: id, workflow: "OrderProcessing", interval: "1m" });
    }
    // Started ahead of its fire (e.g. by a backfill).
    await h.executions.start({ executionId: "a:2026-11-15T00:01:00Z", workflow: "OrderProcessing", scheduleId: "a" });
    expect(await h.fireAt("2026-11-15T00:01:00Z")).toBe(2);
    expect(h.reports.map((r) => [r.scheduleId, r.started])).toEqual([
      ["a", 0],
      ["b", 1],
    ]);
    expect(await h.scheduler.schedules.get("a")).toMatchObject({
      fired: 0,
      last_execution_id: "a:2026-11-15T00:01:00Z",
    });
    expect(await h.executions.events("a:2026-11-15T00:01:00Z")).toHaveLength(1);
    expect(await kinds(db.store, "a")).toEqual(["started"]);
    expect(await kinds(db.store, "b")).toEqual(["started"]);
  });

  it("a start that would fail holds back nothing: it retries in 5 s, the others fire", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z" });
    await h.scheduler.schedules.create({ schedule_id: "ok", workflow: "OrderProcessing", interval: "1m" });
    await h.scheduler.schedules.create({ schedule_id: "bad", workflow: "OrderProcessing", interval: "1m" });
    // A new latest version whose schema the schedules' input ({}) no longer satisfies, for "bad"
    // only: "ok" pins 1.0.0.
    await h.scheduler.schedules.update("ok", { version: "1.0.0" });
    await h.workflows.register({
      name: "OrderProcessing",
      version: "2.0.0",
      input_schema: { type: "object", required: ["order_id"] },
    });
    // Both advance: "ok" starts, "bad" records its retry in the same fire.
    expect(await h.fireAt("2026-11-15T00:01:00Z")).toBe(2);
    expect(await h.scheduler.schedules.get("ok")).toMatchObject({ fired: 1, next_fire_at: "2026-11-15T00:02:00Z" });
    const bad = await h.scheduler.schedules.get("bad");
    expect(bad).toMatchObject({ fired: 0, next_fire_at: "2026-11-15T00:01:05Z" });
    expect(bad.last_error).toContain("order_id");
  });

  it("a cancel_previous wakes a buffer that an earlier fire of the same batch filled, as one by one would", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z" });
    // "b-cancel" starts first and holds the key; "a-buf" (first in the batch) then buffers behind
    // it, and "b-cancel"'s cancel of its previous execution must find that buffer and wake it.
    await h.scheduler.schedules.create({
      schedule_id: "b-cancel",
      workflow: "OrderProcessing",
      interval: "1m",
      overlap: "cancel_previous",
      concurrency_key: "k",
    });
    expect(await h.fireAt("2026-11-15T00:01:00Z")).toBe(1);
    await h.scheduler.schedules.create({
      schedule_id: "a-buf",
      workflow: "OrderProcessing",
      interval: "1m",
      overlap: "buffer_one",
      concurrency_key: "k",
    });
    const t = Date.parse("2026-11-15T00:02:00Z");
    h.clock.set(t);
    await h.scheduler.loop.fireDue();
    expect((await h.executions.get("b-cancel:2026-11-15T00:01:00Z")).status).toBe("CANCELLED");
    expect((await h.executions.get("b-cancel:2026-11-15T00:02:00Z")).status).toBe("RUNNING");
    const buffered = await db.store.getSchedule("a-buf");
    expect(buffered).toMatchObject({ buffered: [t], dueMs: t });
    expect(await kinds(db.store, "a-buf")).toEqual(["buffered"]);
  });

  it("logs the outcomes worth a look: a retried start and each dead letter, with the occurrence and why", async () => {
    const log: Array<{ obj: object; msg: string }> = [];
    const record = (obj: object, msg: string): void => {
      log.push({ obj, msg });
    };
    const h = await makeHarness(db.store, {
      now: "2026-11-15T00:00:30Z",
      graceMs: 1000,
      log: { warn: record, error: record },
    });
    await h.scheduler.schedules.create({
      schedule_id: "bad",
      workflow: "OrderProcessing",
      interval: "1m",
      catchup: "run_once",
    });
    // The latest version refuses the schedule's input ({}).
    await h.workflows.register({
      name: "OrderProcessing",
      version: "2.0.0",
      input_schema: { type: "object", required: ["order_id"] },
    });
    const at = (time: string): number => Date.parse(time);
    const why = expect.stringContaining("order_id");
    await h.fireAt("2026-11-15T00:01:00.500Z");
    expect(log).toEqual([
      {
        obj: { schedule_id: "bad", occurrence: at("2026-11-15T00:01:00Z"), error: why },
        // At the grace's end, 0.5 s on (5 s, past a grace of 1 s, retried too late to start).
        msg: "start failed; retrying the occurrence in 0.5 s",
      },
    ]);
    log.length = 0;
    // Past the grace: run_once tries 00:03 (a dead letter), and the retried 00:01 is left behind.
    await h.fireAt("2026-11-15T00:03:30Z");
    expect(log).toEqual([
      {
        obj: { schedule_id: "bad", occurrence: at("2026-11-15T00:03:00Z"), error: why },
        msg: "occurrence dead-lettered",
      },
      {
        obj: { schedule_id: "bad", occurrence: at("2026-11-15T00:01:00Z"), error: why },
        msg: "occurrence dead-lettered",
      },
    ]);
    expect(await kinds(db.store, "bad")).toEqual(["dead_letter", "dead_letter", "skipped"]);
  });
});
