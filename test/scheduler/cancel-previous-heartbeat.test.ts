/**
 * A fire batch that replaces the running executions of several `cancel_previous` schedules locks
 * those executions and their tasks in id order before it cancels them, the order a heartbeat (and a
 * batched complete) takes tasks in (docs/storage.md § Locking). It took each execution and its
 * task schedule by schedule: a heartbeat of a worker running two of them, holding the task with the
 * smaller id while it waited for the other, deadlocked with it (40P01 in a tester's soak: the batch
 * rolled back and its 31 schedules were fired again one by one).
 */
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TaskWakeups } from "../../src/engine/task-wakeups.js";
import { WorkerTasks } from "../../src/engine/tasks.js";
import type { Store } from "../../src/store/store.js";
import { PG_URL, postgresDialect, type TestLocation } from "../helpers/db.js";
import { makeHarness, ORDER_INPUT } from "./harness.js";

if (!postgresDialect.enabled) {
  console.warn(`skipped: "cancel_previous and a heartbeat [postgres]": ${postgresDialect.skipReason}`);
}

describe.skipIf(!postgresDialect.enabled)("cancel_previous and a heartbeat [postgres]", () => {
  let location: TestLocation;
  let store: Store;
  let session: pg.Client;

  beforeEach(async () => {
    location = await postgresDialect.createLocation();
    store = await location.open();
    session = new pg.Client({ connectionString: PG_URL });
    await session.connect();
    await session.query(`SET search_path TO ${location.env.ORBIT_TEST_PG_SCHEMA}`);
  });
  afterEach(async () => {
    await session.end();
    await location.destroy();
  });

  it("a fire replacing two leased runs and a heartbeat holding one of their tasks: no deadlock, both commit", async () => {
    const logged: string[] = [];
    const log = { warn: (_: object, msg: string) => void logged.push(msg), error: () => undefined };
    const h = await makeHarness(store, { now: "2026-11-15T00:00:30Z", log });
    const tasks = new WorkerTasks({
      store,
      clock: h.clock,
      executions: h.executions,
      workflows: h.workflows,
      wakeups: new TaskWakeups(h.clock),
    });
    for (const id of ["a", "b"]) {
      await h.scheduler.schedules.create({
        schedule_id: id,
        workflow: "OrderProcessing",
        input: ORDER_INPUT,
        interval: "1m",
        overlap: "cancel_previous",
      });
    }
    expect(await h.fireAt("2026-11-15T00:01:00Z")).toBe(2);
    const offer = [{ name: "OrderProcessing", version: "1.0.0", max_attempts: 1, backoff_ms: 1000 }];
    expect(await tasks.claim({ worker_id: "w", workflows: offer, max_tasks: 2 })).toHaveLength(2);
    // The task of "a", fired first, is given the larger id: the fire reaches it before "b"'s.
    const taskOf = async (id: string) => (await store.getTaskForExecution(`${id}:2026-11-15T00:01:00Z`))!.taskId;
    const [ta, tb] = [await taskOf("a"), await taskOf("b")];
    await session.query("UPDATE orbit_worker_tasks SET task_id = $1 WHERE task_id = $2", [`z${ta}`, ta]);
    const [larger, smaller] = [`z${ta}`, tb];

    // A heartbeat's order: the smaller id first, held while the fire runs.
    await session.query("BEGIN");
    await session.query("SELECT task_id FROM orbit_worker_tasks WHERE task_id = $1 FOR UPDATE", [smaller]);
    const pid = (await session.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    const fired = h.fireAt("2026-11-15T00:02:00Z");
    // Waits (an event, polled) until the fire is blocked by this session.
    const watcher = new pg.Client({ connectionString: PG_URL });
    await watcher.connect();
    try {
      for (;;) {
        const { rows } = await watcher.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))",
          [pid],
        );
        if (rows[0]!.n > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    } finally {
      await watcher.end();
    }
    // Then the larger: a fire holding it while it waits for the smaller was a deadlock.
    await session.query("SELECT task_id FROM orbit_worker_tasks WHERE task_id = $1 FOR UPDATE", [larger]);
    await session.query("COMMIT");
    expect(await fired).toBe(2);
    expect(logged.filter((m) => m.startsWith("fire batch"))).toEqual([]);
    for (const id of ["a", "b"]) {
      const previous = await h.executions.get(`${id}:2026-11-15T00:01:00Z`);
      expect(previous.cancelReason).toMatch(new RegExp(`^schedule \`${id}\`: replaced by the next occurrence`));
    }
  });
});
