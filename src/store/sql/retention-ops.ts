/**
 * Retention's statements (docs/operations.md § Retention): one batch of ended executions, oldest
 * first, with their events, step results and worker tasks. Portable SQL over the SqlExecutor.
 * Run inside a transaction so an execution and its rows go together.
 */
import type { PruneQuery } from "../store.js";
import type { SqlExecutor, SqlParam } from "./executor.js";

/** Ended statuses only: a RUNNING or COMPENSATING execution is never pruned, whatever its age. */
const ENDED = "status IN ('COMPLETED', 'FAILED', 'CANCELLED') AND ended_ms IS NOT NULL";

/**
 * The same condition for the batch's SELECT, written so that no planner can use the status index:
 * with it, SQLite (and PostgreSQL before autovacuum has analyzed a bulk load) read every ended
 * execution and sorted them all for each batch, 1.8 s per batch at 1M on SQLite, holding the write
 * lock. `status || ''` leaves the `ended_ms` index, which hands them over oldest first and stops at
 * the batch size (docs/benchmarks.md § Retention).
 */
const ENDED_BY_AGE = "status || '' IN ('COMPLETED', 'FAILED', 'CANCELLED') AND ended_ms IS NOT NULL";

/** The SELECT of one batch: the oldest ended executions the query allows, at most `limit`. */
export function pruneBatchSql(q: PruneQuery): { sql: string; params: SqlParam[] } {
  const params: SqlParam[] = [q.endedBeforeMs];
  let where = `${ENDED_BY_AGE} AND ended_ms < ?`;
  if (q.workflow !== undefined) {
    where += " AND workflow = ?";
    params.push(q.workflow);
  }
  if (q.exceptWorkflows !== undefined && q.exceptWorkflows.length > 0) {
    where += ` AND workflow NOT IN (${q.exceptWorkflows.map(() => "?").join(", ")})`;
    params.push(...q.exceptWorkflows);
  }
  // A schedule's last execution stays: overlap, buffers and outcomes read it (docs/design.md § Overlap).
  where += " AND NOT EXISTS (SELECT 1 FROM orbit_schedules s WHERE s.last_execution_id = e.execution_id)";
  params.push(q.limit);
  return {
    sql: `SELECT execution_id FROM orbit_executions e WHERE ${where} ORDER BY ended_ms, execution_id LIMIT ?`,
    params,
  };
}

export async function pruneExecutionsBatch(exec: SqlExecutor, q: PruneQuery): Promise<number> {
  const batch = pruneBatchSql(q);
  const rows = await exec.all(batch.sql, batch.params);
  const ids = rows.map((r) => String(r.execution_id));
  if (ids.length === 0) return 0;
  const marks = ids.map(() => "?").join(", ");
  for (const table of ["orbit_execution_events", "orbit_step_results", "orbit_worker_tasks"]) {
    await exec.run(`DELETE FROM ${table} WHERE execution_id IN (${marks})`, ids);
  }
  // Re-checks the status: nothing can restart an ended execution, but the guard costs nothing.
  return exec.run(`DELETE FROM orbit_executions WHERE execution_id IN (${marks}) AND ${ENDED}`, ids);
}

/**
 * The ended_ms of the `keep`-th newest ended execution (count-based retention), or null when there
 * are not that many: executions that ended before it are beyond the limit (ties at it all stay).
 */
export async function endedCutoffKeeping(exec: SqlExecutor, keep: number): Promise<number | null> {
  const rows = await exec.all(
    `SELECT ended_ms FROM orbit_executions WHERE ${ENDED_BY_AGE} ORDER BY ended_ms DESC LIMIT 1 OFFSET ?`,
    [Math.max(0, keep - 1)],
  );
  return rows[0] ? Number(rows[0].ended_ms) : null;
}
