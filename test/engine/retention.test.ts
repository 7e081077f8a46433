/**
 * Retention (docs/operations.md § Retention) on both dialects: ended executions past the retention
 * go with their events, step results and tasks; a running execution never does, whatever its age;
 * a schedule's last execution stays (its overlap decision reads it); a workflow's own retention
 * replaces the default; a count limit keeps the newest; small batches drain everything.
 */
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { Retention } from "../../src/engine/retention.js";
import { pruneBatchSql } from "../../src/store/sql/retention-ops.js";
import { migrateSqlite } from "../../src/store/sqlite/migrate.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { makeHarness, ORDER_INPUT } from "../scheduler/harness.js";

const DAY = 86_400_000;

describeEachDialect("retention", (dialect) => {
  const db = useStore(dialect);

  async function setup() {
    const h = await makeHarness(db.store);
    await h.workflows.register({ name: "Audit", version: "1.0.0" });
    const start = async (id: string, workflow = "OrderProcessing") =>
      (await h.executions.start({ executionId: id, workflow, input: workflow === "Audit" ? {} : ORDER_INPUT }))
        .execution;
    return { h, start };
  }

  it("deletes ended executions past the retention with their events, steps and tasks, never a running one", async () => {
    const { h, start } = await setup();
    for (const id of ["old-1", "old-2", "old-running"]) await start(id);
    await h.executions.complete("old-1", { ok: true });
    await h.executions.complete("old-2", { ok: true });
    await db.store.insertStepResult({
      executionId: "old-1",
      run: 1,
      step: "s",
      seq: 1,
      result: 1,
      hasCompensation: false,
      compensatedMs: null,
      completedMs: h.clock.now(),
    });
    h.clock.advance(40 * DAY);
    await start("new-1");
    await h.executions.complete("new-1", {});
    const retention = new Retention({ store: db.store, clock: h.clock, maxAgeMs: 30 * DAY, batchSize: 1 });
    expect(await retention.runOnce()).toBe(2);
    expect(await db.store.getExecution("old-1")).toBeNull();
    expect(await db.store.getExecution("old-2")).toBeNull();
    expect(await db.store.listEvents("old-1")).toEqual([]);
    expect(await db.store.listStepResults("old-1", 1)).toEqual([]);
    expect(await db.store.getTaskForExecution("old-1")).toBeNull();
    expect((await db.store.getExecution("old-running"))?.status).toBe("RUNNING");
    expect((await db.store.getExecution("new-1"))?.status).toBe("COMPLETED");
    expect(await retention.runOnce()).toBe(0);
  });

  it("keeps a schedule's last execution however old, so overlap still decides from it", async () => {
    const { h } = await setup();
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      interval: "10m",
      input: ORDER_INPUT,
    });
    await h.fireAt("2026-11-15T19:00:00.500Z");
    await h.executions.complete("s:2026-11-15T19:00:00Z", {});
    await h.fireAt("2026-11-15T19:10:00.500Z");
    await h.executions.complete("s:2026-11-15T19:10:00Z", {});
    expect(await db.store.listExecutions({ scheduleId: "s", limit: 10 })).toHaveLength(2);
    h.clock.advance(60 * DAY);
    const retention = new Retention({ store: db.store, clock: h.clock, maxAgeMs: DAY });
    expect(await retention.runOnce()).toBe(1);
    const last = (await db.store.getSchedule("s"))?.lastExecutionId;
    expect((await db.store.listExecutions({ scheduleId: "s", limit: 10 })).map((e) => e.executionId)).toEqual([last]);
  });

  it("a workflow's retention replaces the default; a count limit keeps the newest ended executions", async () => {
    const { h, start } = await setup();
    for (let i = 1; i <= 4; i++) {
      await start(`order-${i}`);
      await h.executions.complete(`order-${i}`, {});
      h.clock.advance(1000);
      await start(`audit-${i}`, "Audit");
      await h.executions.complete(`audit-${i}`, {});
      h.clock.advance(DAY);
    }
    // Now order-1/audit-1 ended 4 days ago … order-4/audit-4 1 day ago.
    const byWorkflow = new Retention({
      store: db.store,
      clock: h.clock,
      maxAgeMs: 2 * DAY + 3000,
      byWorkflow: { Audit: 100 * DAY },
    });
    expect(await byWorkflow.runOnce()).toBe(2); // order-1, order-2; every Audit stays
    const left = async () => (await db.store.listExecutions({ limit: 100 })).map((e) => e.executionId).sort();
    expect(await left()).toEqual(["audit-1", "audit-2", "audit-3", "audit-4", "order-3", "order-4"]);
    const byCount = new Retention({ store: db.store, clock: h.clock, maxCount: 3, batchSize: 2 });
    expect(await byCount.runOnce()).toBe(3);
    expect(await left()).toEqual(["audit-3", "audit-4", "order-4"]);
  });
});

describe("retention's batch query [sqlite]", () => {
  // With the status index, SQLite read and sorted every ended execution for each batch: 1.8 s per
  // batch at 1M ended executions, holding the write lock (docs/benchmarks.md § Retention).
  it("reads the oldest ended executions through the ended_ms index, without sorting them all", () => {
    const db = new Database(":memory:");
    try {
      migrateSqlite(db);
      for (const q of [
        { endedBeforeMs: 1, limit: 50 },
        { endedBeforeMs: 1, limit: 50, exceptWorkflows: ["Audit"] },
      ]) {
        const batch = pruneBatchSql(q);
        const plan = db
          .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${batch.sql}`)
          .all(...batch.params)
          .map((r) => r.detail);
        expect(plan[0]).toMatch(/^SEARCH e USING INDEX orbit_executions_ended /);
        expect(plan).not.toContain("USE TEMP B-TREE FOR ORDER BY");
      }
    } finally {
      db.close();
    }
  });
});
