/**
 * Retention (docs/operations.md § Retention) on both dialects: ended executions past the retention
 * go with their events, step results and tasks; a running execution never does, whatever its age;
 * a schedule's last execution stays (its overlap decision reads it); a workflow's own retention
 * replaces the default; a count limit keeps the newest; small batches drain everything; each batch
 * resumes after the last execution the previous one read (ties on ended_ms included); no batch
 * starts while a fire is due within its window; the batch queries walk an index in order.
 */
import Database from "better-sqlite3";
import pg from "pg";
import { describe, expect, it, vi } from "vitest";
import { Retention, TARGET_BATCH_MS } from "../../src/engine/retention.js";
import { MAX_ROUNDS_WAITED } from "../../src/scheduler/loop.js";
import { toPostgresPlaceholders } from "../../src/store/postgres/dialect.js";
import { pruneBatchSql, pruneDeleteSql } from "../../src/store/sql/retention-ops.js";
import { migrateSqlite } from "../../src/store/sqlite/migrate.js";
import type { PruneQuery, Store, StoreOps } from "../../src/store/store.js";
import { describeEachDialect, dialects, PG_URL, postgresDialect, useStore } from "../helpers/db.js";
import { makeHarness, ORDER_INPUT } from "../scheduler/harness.js";

/**
 * The store, with every retention batch's query recorded (and `onBatch` called) before it runs, and
 * the transactions begun counted the moment they are asked for.
 */
function recording(
  store: Store,
  onBatch: (q: PruneQuery) => void = () => {},
): { store: Store; batches: PruneQuery[]; readonly begun: number } {
  const batches: PruneQuery[] = [];
  let begun = 0;
  const wrapTx = (tx: StoreOps): StoreOps =>
    new Proxy(tx, {
      get(target, prop) {
        if (prop === "pruneExecutions")
          return (q: PruneQuery) => {
            batches.push(q);
            onBatch(q);
            return target.pruneExecutions(q);
          };
        const v = Reflect.get(target, prop);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  const wrapped = new Proxy(store, {
    get(target, prop) {
      if (prop === "transaction")
        return (fn: (tx: StoreOps) => Promise<unknown>, o?: unknown) => {
          begun++;
          return (target.transaction as (f: typeof fn, o?: unknown) => Promise<unknown>)((tx) => fn(wrapTx(tx)), o);
        };
      const v = Reflect.get(target, prop);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return {
    store: wrapped,
    batches,
    get begun() {
      return begun;
    },
  };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

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

  /**
   * Starts the firing loop, waits until it sleeps until its next fire, then starts a retention pass
   * that asks it for windows; each batch records how many fires happened before it.
   */
  async function passBesideTheLoop(h: Awaited<ReturnType<typeof setup>>["h"]) {
    const firedBeforeBatch: number[] = [];
    const rec = recording(db.store, () => firedBeforeBatch.push(h.reports.length));
    h.scheduler.loop.start();
    while (h.clock.pendingSleeps === 0) await turn(); // the loop sleeps until the fire
    const retention = new Retention({ store: rec.store, clock: h.clock, maxAgeMs: 30 * DAY, fires: h.scheduler.loop });
    return { rec, firedBeforeBatch, pass: retention.runOnce() };
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
    // No event or task is left behind where listEvents and getTaskForExecution would not look (on
    // SQLite they find them from their execution's row, which is gone: docs/storage.md § Events in
    // creation order, § Tasks in creation order).
    if (dialect.name === "sqlite") {
      const file = db.location.env.ORBIT_TEST_SQLITE_FILE!;
      const raw = new Database(file, { readonly: true });
      const left = (table: string) =>
        raw.prepare(`SELECT DISTINCT execution_id FROM ${table} ORDER BY 1`).pluck().all();
      const events = left("orbit_execution_events");
      const tasks = left("orbit_worker_tasks");
      raw.close();
      expect(events).toEqual(["new-1", "old-running"]);
      expect(tasks).toEqual(["new-1", "old-running"]);
    }
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

  it("a batch resumes after the last execution the previous one read, ties on ended_ms by id", async () => {
    const { h, start } = await setup();
    // a…e end in the same millisecond, f one later.
    for (const id of ["a", "b", "c", "d", "e", "f"]) await start(id);
    for (const id of ["a", "b", "c", "d", "e"]) await h.executions.complete(id, {});
    const tie = h.clock.now();
    h.clock.advance(1);
    await h.executions.complete("f", {});
    h.clock.advance(40 * DAY);
    const endedBeforeMs = h.clock.now() - 30 * DAY;
    const left = async () => (await db.store.listExecutions({ limit: 100 })).map((e) => e.executionId).sort();
    // A cursor in the middle of the tie: what is before it stays, however eligible.
    const batch = await db.store.transaction((tx) =>
      tx.pruneExecutions({ endedBeforeMs, limit: 10, after: { endedMs: tie, executionId: "c" } }),
    );
    expect(batch).toEqual({ deleted: 3, read: 3, last: { endedMs: tie + 1, executionId: "f" } });
    expect(await left()).toEqual(["a", "b", "c"]);
    // The pass hands each batch's last execution to the next as its cursor.
    const rec = recording(db.store);
    const retention = new Retention({ store: rec.store, clock: h.clock, maxAgeMs: 30 * DAY, batchSize: 2 });
    expect(await retention.runOnce()).toBe(3);
    expect(rec.batches.map((q) => q.after)).toEqual([undefined, { endedMs: tie, executionId: "b" }]);
    expect(await left()).toEqual([]);
  });

  it("starts no batch while a fire is due within the batch's window, and starts at once when none is", async () => {
    const { h, start } = await setup();
    await start("old-1");
    await h.executions.complete("old-1", {});
    h.clock.advance(40 * DAY);
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      interval: "10m",
      input: ORDER_INPUT,
    });
    const due = (await db.store.getSchedule("s"))?.nextFireMs ?? 0;
    h.clock.set(due - 5); // the next fire is 5 ms away: inside any batch's window
    const { rec, firedBeforeBatch, pass } = await passBesideTheLoop(h);
    try {
      for (let i = 0; i < 50; i++) await turn();
      expect(rec.begun).toBe(0);
      h.clock.set(due); // the loop fires; then the batch may go
      expect(await pass).toBe(1);
      expect(firedBeforeBatch[0]).toBe(1);
      expect(await db.store.getExecution("old-1")).toBeNull();
      // After the jump the loop catches up and sleeps until the next fire, minutes away: a pass
      // goes at once, without the clock moving.
      await start("old-2");
      await h.executions.complete("old-2", {});
      h.clock.advance(40 * DAY);
      while (h.clock.pendingSleeps === 0) await turn();
      const later = new Retention({ store: db.store, clock: h.clock, maxAgeMs: 30 * DAY, fires: h.scheduler.loop });
      expect(await later.runOnce()).toBe(1);
    } finally {
      await h.scheduler.loop.close();
    }
  });
  it("does not wait for ever when fires come back to back: a batch goes after a bounded number of rounds", async () => {
    const { h, start } = await setup();
    await start("old-1");
    await h.executions.complete("old-1", {});
    h.clock.advance(40 * DAY);
    // 30 one-second schedules 5 ms apart: every round leaves the next fire 5 ms away, inside any
    // batch's window, for 150 ms of fires in a row.
    const base = Math.ceil(h.clock.now() / 1000) * 1000 + 1000;
    for (let i = 0; i < 30; i++)
      await h.scheduler.schedules.create({
        schedule_id: `dense-${i}`,
        workflow: "OrderProcessing",
        interval: "1s",
        start_at: new Date(base + 5 * i).toISOString(),
        input: ORDER_INPUT,
      });
    h.clock.set(base - 5);
    const { rec, firedBeforeBatch, pass } = await passBesideTheLoop(h);
    try {
      for (let i = 0; i < 30 && rec.begun === 0; i++) {
        h.clock.advance(5);
        const fired = h.reports.length;
        while (h.reports.length === fired || h.clock.pendingSleeps === 0) await turn();
      }
      expect(await pass).toBe(1);
      // It waited (the next fire was always 5 ms away), but not for the 30 rounds of the run.
      expect(firedBeforeBatch[0]).toBeGreaterThan(0);
      expect(firedBeforeBatch[0]).toBeLessThan(30);
      expect(firedBeforeBatch[0]).toBeLessThanOrEqual(MAX_ROUNDS_WAITED + 1);
    } finally {
      await h.scheduler.loop.close();
    }
  });
});

/** One batch query of each kind: the default pass (with and without a cursor, with overrides) and a workflow's own. */
const QUERIES: { q: PruneQuery; index: string }[] = [
  { q: { endedBeforeMs: 1, limit: 50 }, index: "orbit_executions_ended" },
  { q: { endedBeforeMs: 1, limit: 50, after: { endedMs: 0, executionId: "x" } }, index: "orbit_executions_ended" },
  {
    q: { endedBeforeMs: 1, limit: 50, exceptWorkflows: ["Audit"], after: { endedMs: 0, executionId: "x" } },
    index: "orbit_executions_ended",
  },
  { q: { endedBeforeMs: 1, limit: 50, workflow: "Audit" }, index: "orbit_executions_workflow_ended" },
  {
    q: { endedBeforeMs: 1, limit: 50, workflow: "Audit", after: { endedMs: 0, executionId: "x" } },
    index: "orbit_executions_workflow_ended",
  },
];

describe("retention's pacing", () => {
  // A batch that took long (a cold cache, a WAL checkpoint) once asked for a window longer than the
  // gaps between fires, and the pass waited forever (at 1M on SQLite it stopped at 600k).
  it("asks the firing loop for a bounded window even after a slow batch", async () => {
    const location = await dialects[0]!.createLocation();
    const store = await location.open();
    const asked: number[] = [];
    let offset = 0;
    const now = performance.now.bind(performance);
    const spy = vi.spyOn(performance, "now").mockImplementation(() => now() + offset);
    try {
      const h = await makeHarness(store);
      for (const id of ["a", "b", "c", "d", "e"]) {
        await h.executions.start({ executionId: id, workflow: "OrderProcessing", input: ORDER_INPUT });
        await h.executions.complete(id, {});
      }
      h.clock.advance(40 * DAY);
      const rec = recording(store, () => {
        offset += 1000; // every batch "takes" a second
      });
      const retention = new Retention({
        store: rec.store,
        clock: h.clock,
        maxAgeMs: 30 * DAY,
        batchSize: 2,
        fires: { clearFor: async (ms) => void asked.push(ms) },
      });
      expect(await retention.runOnce()).toBe(5);
      expect(asked).toHaveLength(3);
      expect(asked[0]).toBe(2 * TARGET_BATCH_MS);
      for (const ms of asked) expect(ms).toBeLessThanOrEqual(8 * TARGET_BATCH_MS);
    } finally {
      spy.mockRestore();
      await location.destroy();
    }
  });
});

describe("retention's batch query [sqlite]", () => {
  // With the status index, SQLite read and sorted every ended execution for each batch: 1.8 s per
  // batch at 1M ended executions, holding the write lock (docs/benchmarks.md § Retention). The
  // cursor must be a range of the index, not a filter over what precedes it.
  it("starts at the cursor in the ended_ms index, without sorting", () => {
    const db = new Database(":memory:");
    try {
      migrateSqlite(db);
      for (const { q, index } of QUERIES) {
        const batch = pruneBatchSql(q);
        const plan = db
          .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${batch.sql}`)
          .all(...batch.params)
          .map((r) => r.detail);
        expect(plan[0]).toMatch(new RegExp(`^SEARCH e USING INDEX ${index} \\(`));
        // (SQLite shows the cursor as the range's start: `ended_ms>?` on the ended_ms index.)
        if (q.after !== undefined && q.workflow !== undefined)
          expect(plan[0]).toContain("(ended_ms,execution_id)>(?,?)");
        expect(plan).not.toContain("USE TEMP B-TREE FOR ORDER BY");
      }
      // The DELETE finds the batch by primary key: with the status index SQLite read every ended
      // execution for each batch (680 ms per batch at 1M).
      const ids = Array.from({ length: 50 }, (_, i) => `e${i}`);
      const del = db
        .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${pruneDeleteSql(ids.length)}`)
        .all(...ids);
      expect(del.map((r) => r.detail)).toEqual([
        "SEARCH orbit_executions USING INDEX sqlite_autoindex_orbit_executions_1 (execution_id=?)",
      ]);
    } finally {
      db.close();
    }
  });
});

describe.skipIf(!postgresDialect.enabled)("retention's batch query [postgres]", () => {
  const db = useStore(postgresDialect);
  // Analyzed, 20,000 ended executions, one in 200 of them an Audit: each batch is an index scan in
  // ended_ms order whose condition starts at the cursor's ended_ms (not at the oldest row, past the
  // dead index entries of the rows earlier batches deleted), a workflow's own retention on that
  // workflow's index; no Sort of all the rows (an Incremental Sort of one ended_ms's ties is fine).
  it("starts at the cursor in the ended_ms index, without sorting", async () => {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      await client.query(`SET search_path TO ${db.location.env.ORBIT_TEST_PG_SCHEMA}`);
      await client.query(
        `INSERT INTO orbit_executions (execution_id, workflow, version, input, status, created_ms, started_ms, ended_ms)
         SELECT 'e' || i, CASE WHEN i % 200 = 0 THEN 'Audit' ELSE 'OrderProcessing' END, '1.0.0', '{}', 'COMPLETED', i, i, i
         FROM generate_series(1, 20000) AS i`,
      );
      await client.query("ANALYZE orbit_executions");
      for (const { q, index } of QUERIES) {
        const cursor = q.after !== undefined ? { after: { endedMs: 5000, executionId: "e5000" } } : {};
        const batch = pruneBatchSql({ ...q, endedBeforeMs: 15_000, ...cursor });
        const explain = await client.query<{ "QUERY PLAN": string }>(
          `EXPLAIN (ANALYZE, TIMING OFF) ${toPostgresPlaceholders(batch.sql)}`,
          batch.params,
        );
        const plan = explain.rows.map((r) => r["QUERY PLAN"]).join("\n");
        expect(plan).toContain(`Index Scan using ${index} on orbit_executions e`);
        if (q.after !== undefined)
          expect(plan).toMatch(/Index Cond: .*(ended_ms >= '5000'|ROW\(ended_ms, execution_id\) >)/);
        // The scan stops soon after the batch's 50 rows: it never reads all of them to sort them.
        const read = /on orbit_executions e .*\(actual rows=(\d+) /.exec(plan)?.[1];
        expect(Number(read), plan).toBeLessThanOrEqual(100);
      }
      const ids = ["e1", "e2", "e3"];
      const del = await client.query<{ "QUERY PLAN": string }>(
        `EXPLAIN ${toPostgresPlaceholders(pruneDeleteSql(ids.length))}`,
        ids,
      );
      expect(del.rows.map((r) => r["QUERY PLAN"]).join("\n")).toContain("Index Scan using orbit_executions_pkey");
    } finally {
      await client.end();
    }
  });
});
