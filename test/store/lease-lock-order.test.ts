/**
 * PostgreSQL: a heartbeat's lease extension locks its tasks in task id order, the order a batched
 * complete locks them (lockTasksAndExecutions), so the two never deadlock. Before, the UPDATE
 * locked rows in the table's physical order, and a complete holding one task while the heartbeat
 * held another ended in `deadlock detected` (40P01): a 500 to the worker, its completion lost.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterEach, expect, it } from "vitest";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { adminQuery } from "../helpers/db.js";

const PG_URL = process.env.ORBIT_TEST_DATABASE_URL;
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

it.skipIf(!PG_URL)("a heartbeat and a batched complete of the same tasks do not deadlock", async () => {
  const url = PG_URL as string;
  const schema = `orbit_t_${randomBytes(6).toString("hex")}`;
  await adminQuery(`CREATE SCHEMA ${schema}`, url);
  cleanup.push(() => adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`, url));
  const store = new PostgresStore({ connectionString: url, searchPath: schema, maxConnections: 5 });
  await store.open();
  cleanup.push(() => store.close());
  const other = new pg.Client({ connectionString: url });
  await other.connect();
  cleanup.push(() => other.end());
  const watcher = new pg.Client({ connectionString: url });
  await watcher.connect();
  cleanup.push(() => watcher.end());
  await other.query(`SET search_path TO ${schema}`);
  // Physical order t2, t1: the reverse of the id order.
  const now = Date.now();
  for (const id of ["t2", "t1"]) {
    await other.query(
      `INSERT INTO orbit_worker_tasks (task_id, execution_id, run, workflow, version, state, attempt, lease_owner,
         lease_until_ms, available_ms, created_ms) VALUES ($1, $1, 1, 'W', '1.0.0', 'leased', 1, 'w', $2, $3, $3)`,
      [id, now + 30_000, now],
    );
  }
  // A complete locks t1, then (after the heartbeat started) t2.
  await other.query("BEGIN");
  await other.query("SELECT task_id FROM orbit_worker_tasks WHERE task_id = 't1' FOR UPDATE");
  const heartbeat = store.extendLeases("w", null, ["t1", "t2"], now + 60_000, now);
  const pid = (await other.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number;
  // Wait (on the database's own report) until the heartbeat waits for a lock held by this transaction.
  for (;;) {
    const waiting = await watcher.query("SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))", [pid]);
    if (waiting.rowCount) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  await other.query("SELECT task_id FROM orbit_worker_tasks WHERE task_id = 't2' FOR UPDATE");
  await other.query("COMMIT");
  expect((await heartbeat).sort()).toEqual(["t1", "t2"]);
});
