/**
 * What a batch of a herd writes on SQLite stays on neighbouring pages as schedules and their
 * histories grow: the schedules table in schedule id order (migration 0013, docs/storage.md §
 * Schedules in id order), and events and tasks found by their execution's creation (0014, § Events
 * in creation order; 0015, § Tasks in creation order). Counted as the WAL pages one transaction
 * writes.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { execution, schedule, T0, task } from "./fixtures/records.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A store on a new SQLite file in a folder of its own, both gone after the test. */
async function openStore(): Promise<{ dir: string; store: SqliteStore }> {
  const dir = mkdtempSync(join(tmpdir(), "orbit-batch-pages-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const store = new SqliteStore({ dataDir: dir });
  await store.open();
  cleanups.push(() => store.close());
  return { dir, store };
}

/** WAL frames are a 24-byte header and one page; the file starts with a 32-byte header. */
const walPages = (file: string, pageSize: number): number => Math.max(0, (statSync(file).size - 32) / (24 + pageSize));

describe("SQLite writes of a fire batch as schedules and histories grow", () => {
  it("a batch of 200 due schedules created in a shuffled order writes about 20 pages of the table, not one per row", async () => {
    const { dir, store } = await openStore();
    // 2,000 schedules made one by one in an order that is not their ids' (a fixed shuffle).
    const ids = Array.from({ length: 2000 }, (_, i) => `sched-${String(i).padStart(4, "0")}`);
    for (let i = ids.length - 1, seed = 7; i > 0; i--) {
      seed = (seed * 48271) % 2147483647;
      const j = seed % (i + 1);
      [ids[i], ids[j]] = [ids[j] as string, ids[i] as string];
    }
    for (const id of ids) {
      await store.transaction((tx) => tx.insertSchedule(schedule(id, { input: { note: "x".repeat(300) } })));
    }

    const batch = (await store.listDueSchedules({ dueAtOrBeforeMs: T0 + 10_000, limit: 200 })).map((s) => s.scheduleId);
    expect(batch).toEqual([...ids].sort().slice(0, 200));

    const db = new Database(join(dir, "orbit.db"));
    cleanups.push(() => {
      db.close();
    });
    const pageSize = Number(db.pragma("page_size", { simple: true }));
    db.pragma("wal_checkpoint(TRUNCATE)");
    expect(walPages(join(dir, "orbit.db-wal"), pageSize)).toBe(0);
    const advance = db.prepare("UPDATE orbit_schedules SET fired = fired + 1 WHERE schedule_id = ?");
    db.transaction(() => {
      for (const id of batch) advance.run(id);
    })();
    // 200 rows of about 500 bytes lie on 25–30 pages in id order; in creation order they were 143.
    const written = walPages(join(dir, "orbit.db-wal"), pageSize);
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThan(50);
  });

  it("the events of a batch of 200 executions, each with its schedule's long history, write a few pages, not one per execution", async () => {
    const { dir, store } = await openStore();
    // 200 schedules' executions, a minute apart, each with its three events, for 30 minutes.
    const minute = async (k: number) => {
      const at = T0 + k * 60_000;
      const batch = Array.from({ length: 200 }, (_, i) =>
        execution(`s${String(i).padStart(3, "0")}:${new Date(at).toISOString()}`, { createdMs: at }),
      );
      await store.transaction(async (tx) => {
        await tx.insertExecutions(batch);
        await tx.insertCreatedEvents(batch);
      });
      return batch;
    };
    const report = (batch: { executionId: string }[], type: string, atMs: number) =>
      store.transaction((tx) =>
        tx.appendEvents(batch.map((e) => ({ executionId: e.executionId, type, data: {}, atMs }))),
      );
    for (let k = 0; k < 30; k++) {
      const batch = await minute(k);
      await report(batch, "WorkflowTaskStarted", T0 + k * 60_000 + 100);
      await report(batch, "WorkflowCompleted", T0 + k * 60_000 + 200);
    }
    const batch = await minute(30);

    const db = new Database(join(dir, "orbit.db"));
    cleanups.push(() => {
      db.close();
    });
    const pageSize = Number(db.pragma("page_size", { simple: true }));
    db.pragma("wal_checkpoint(TRUNCATE)");
    await report(batch, "WorkflowTaskStarted", T0 + 30 * 60_000 + 100);
    const written = walPages(join(dir, "orbit.db-wal"), pageSize);
    expect(written).toBeGreaterThan(0);
    // Keyed (execution_id, seq), each of the 200 events went to its schedule's own page: 200+.
    expect(written).toBeLessThan(40);
    expect((await store.listEvents(batch[7]!.executionId)).map((e) => e.type)).toEqual([
      "WorkflowCreated",
      "WorkflowTaskStarted",
    ]);
  });

  it("the tasks of a batch of 200 executions, each with its schedule's long history, write a few pages, not one per task", async () => {
    const { dir, store } = await openStore();
    // 200 schedules' executions, a minute apart, each with its task, for 30 minutes; task ids in
    // creation order, as the engine's are.
    const minute = (k: number) => {
      const at = T0 + k * 60_000;
      const executions = Array.from({ length: 200 }, (_, i) =>
        execution(`s${String(i).padStart(3, "0")}:${new Date(at).toISOString()}`, { createdMs: at }),
      );
      const tasks = executions.map((e, i) =>
        task(`t${String(k).padStart(3, "0")}-${String(i).padStart(3, "0")}`, e.executionId, { createdMs: at }),
      );
      return { executions, tasks };
    };
    for (let k = 0; k < 30; k++) {
      const { executions, tasks } = minute(k);
      await store.transaction(async (tx) => {
        await tx.insertExecutions(executions);
        await tx.insertTasks(tasks);
      });
    }
    const { executions, tasks } = minute(30);
    await store.transaction((tx) => tx.insertExecutions(executions));

    const db = new Database(join(dir, "orbit.db"));
    cleanups.push(() => {
      db.close();
    });
    const pageSize = Number(db.pragma("page_size", { simple: true }));
    db.pragma("wal_checkpoint(TRUNCATE)");
    await store.transaction((tx) => tx.insertTasks(tasks));
    const written = walPages(join(dir, "orbit.db-wal"), pageSize);
    expect(written).toBeGreaterThan(0);
    // Indexed by execution_id alone, each of the 200 tasks went to its schedule's own page: 200+.
    expect(written).toBeLessThan(40);
    expect((await store.getTaskForExecution(executions[7]!.executionId))?.taskId).toBe("t030-007");
    expect((await store.getTaskForExecution(executions[7]!.executionId.replace(":", "x"))) ?? null).toBeNull();
  });
});
