/**
 * Retention's statements (docs/operations.md § Retention): one batch of ended executions, oldest
 * first, with their events, step results and worker tasks. Portable SQL over the SqlExecutor.
 * Run inside a transaction so an execution and its rows go together.
 */
import type { DialectName, PruneBatch, PruneQuery } from "../store.js";
import type { SqlExecutor, SqlParam } from "./executor.js";

/** Ended statuses only: a RUNNING or COMPENSATING execution is never pruned, whatever its age. */
const ENDED_STATUSES = new Set(["COMPLETED", "FAILED", "CANCELLED"]);
/**
 * The DELETE's re-check of the same, written so that no planner takes the status index for it:
 * SQLite did, reading every ended execution for each batch's DELETE (680 ms per batch of 20 at 1M,
 * the write lock held and the event loop blocked), instead of the primary key for the batch's ids.
 */
const ENDED = "status || '' IN ('COMPLETED', 'FAILED', 'CANCELLED') AND ended_ms IS NOT NULL";

/**
 * The SELECT of one batch: the oldest executions that ended before the instant (and after the
 * cursor), at most `limit`. Only ended executions have an ended_ms (a retry clears it), and the
 * status is checked again on each row read and in the DELETE; the SELECT names no status, so that
 * no planner takes the status index: with it, SQLite (and PostgreSQL before autovacuum has analyzed
 * a bulk load) read every ended execution and sorted them all for each batch, 1.8 s per batch at 1M
 * on SQLite, holding the write lock (docs/benchmarks.md § Retention). (An earlier `status || ''`
 * kept the index out too, but left PostgreSQL estimating 1.5 % of the rows and sorting a
 * workflow's executions.)
 *
 * The cursor is a row-value comparison on (ended_ms, execution_id): both planners start the scan of
 * the `ended_ms` index (orbit_executions_ended, or orbit_executions_workflow_ended for a workflow's
 * own retention) at the cursor's ended_ms instead of at the oldest row again. Without it, every
 * batch stepped over the index entries of the rows earlier batches deleted, which on PostgreSQL
 * stay until vacuumed: the pass slowed from 4,053 to ~220 executions/s over 1M.
 */
export function pruneBatchSql(q: PruneQuery): { sql: string; params: SqlParam[] } {
  const params: SqlParam[] = [];
  let where = "ended_ms IS NOT NULL";
  if (q.workflow !== undefined) {
    where += " AND workflow = ?";
    params.push(q.workflow);
  }
  if (q.after !== undefined) {
    where += " AND (ended_ms, execution_id) > (?, ?)";
    params.push(q.after.endedMs, q.after.executionId);
  }
  where += " AND ended_ms < ?";
  params.push(q.endedBeforeMs);
  if (q.exceptWorkflows !== undefined && q.exceptWorkflows.length > 0) {
    where += ` AND workflow NOT IN (${q.exceptWorkflows.map(() => "?").join(", ")})`;
    params.push(...q.exceptWorkflows);
  }
  // A schedule's last execution stays: overlap, buffers and outcomes read it (docs/design.md § Overlap).
  where += " AND NOT EXISTS (SELECT 1 FROM orbit_schedules s WHERE s.last_execution_id = e.execution_id)";
  params.push(q.limit);
  return {
    sql: `SELECT execution_id, ended_ms, status FROM orbit_executions e WHERE ${where} ORDER BY ended_ms, execution_id LIMIT ?`,
    params,
  };
}

export async function pruneExecutionsBatch(
  exec: SqlExecutor,
  q: PruneQuery,
  dialect: DialectName,
): Promise<PruneBatch> {
  if (dialect === "postgres") return pruneInOneStatement(exec, q);
  const batch = pruneBatchSql(q);
  const rows = await exec.all(batch.sql, batch.params);
  const lastRow = rows.at(-1);
  if (lastRow === undefined) return { deleted: 0, read: 0, last: null };
  const last = { endedMs: Number(lastRow.ended_ms), executionId: String(lastRow.execution_id) };
  const ids = rows.filter((r) => ENDED_STATUSES.has(String(r.status))).map((r) => String(r.execution_id));
  if (ids.length === 0) return { deleted: 0, read: rows.length, last };
  const marks = ids.map(() => "?").join(", ");
  // SQLite finds events and tasks by their execution's created instant first (docs/storage.md §
  // Events in creation order, § Tasks in creation order), read from the executions' rows, which go
  // after their children. (A row-value IN over the two columns searched on the first only: every
  // event of a fire batch that shares the instant, for each id.)
  for (const table of ["orbit_execution_events", "orbit_worker_tasks"]) {
    await exec.run(
      `DELETE FROM ${table} WHERE rowid IN (SELECT c.rowid FROM orbit_executions AS x
         JOIN ${table} AS c ON c.execution_created_ms = x.created_ms AND c.execution_id = x.execution_id
         WHERE x.execution_id IN (${marks}))`,
      ids,
    );
  }
  await exec.run(`DELETE FROM orbit_step_results WHERE execution_id IN (${marks})`, ids);
  const deleted = await exec.run(pruneDeleteSql(ids.length), ids);
  return { deleted, read: rows.length, last };
}

/**
 * PostgreSQL: the whole batch in one statement (data-modifying CTEs: the SELECT, the three child
 * deletes and the DELETE, on one snapshot), one round trip instead of five. The batch shares the
 * pool and the WAL with the fires, and every round trip it holds a connection and a transaction
 * open is time a fire may queue behind (docs/benchmarks.md § Retention while firing).
 */
async function pruneInOneStatement(exec: SqlExecutor, q: PruneQuery): Promise<PruneBatch> {
  const batch = pruneBatchSql(q);
  const ended = [...ENDED_STATUSES].map((s) => `'${s}'`).join(", ");
  const children = ["orbit_execution_events", "orbit_step_results", "orbit_worker_tasks"]
    .map((table, i) => `c${i} AS (DELETE FROM ${table} WHERE execution_id IN (SELECT execution_id FROM gone))`)
    .join(", ");
  const rows = await exec.all(
    `WITH batch AS (${batch.sql}),
       gone AS (SELECT execution_id FROM batch WHERE status IN (${ended})),
       ${children},
       removed AS (DELETE FROM orbit_executions WHERE execution_id IN (SELECT execution_id FROM gone) AND ${ENDED}
         RETURNING 1),
       last AS (SELECT ended_ms, execution_id FROM batch ORDER BY ended_ms DESC, execution_id DESC LIMIT 1)
     SELECT (SELECT COUNT(*) FROM batch) AS read, (SELECT COUNT(*) FROM removed) AS deleted,
       (SELECT ended_ms FROM last) AS last_ended_ms, (SELECT execution_id FROM last) AS last_execution_id`,
    batch.params,
  );
  const row = rows[0] ?? {};
  const read = Number(row.read ?? 0);
  const last =
    row.last_execution_id == null
      ? null
      : { endedMs: Number(row.last_ended_ms), executionId: String(row.last_execution_id) };
  return { deleted: Number(row.deleted ?? 0), read, last };
}

/**
 * The DELETE of a batch's `count` executions by id. Re-checks the status in the transaction:
 * nothing restarts an ended execution, but the guard costs nothing, as long as it is not the index
 * the planner picks (see {@link ENDED}).
 */
export function pruneDeleteSql(count: number): string {
  return `DELETE FROM orbit_executions WHERE execution_id IN (${Array.from({ length: count }, () => "?").join(", ")}) AND ${ENDED}`;
}

/**
 * The ended_ms of the `keep`-th newest ended execution (count-based retention), or null when there
 * are not that many: executions that ended before it are beyond the limit (ties at it all stay).
 */
export async function endedCutoffKeeping(exec: SqlExecutor, keep: number): Promise<number | null> {
  const rows = await exec.all(
    `SELECT ended_ms FROM orbit_executions WHERE ended_ms IS NOT NULL ORDER BY ended_ms DESC LIMIT 1 OFFSET ?`,
    [Math.max(0, keep - 1)],
  );
  return rows[0] ? Number(rows[0].ended_ms) : null;
}
