/**
 * bench:e2e's breakdown of Orbit's lag, read from the server's database after the measured minutes:
 * fire lag (the ledger's `started` row recorded − the occurrence's nominal instant: how late the
 * firing loop was, which shows whether the worker routes starve it) and lease lag (the execution's
 * `WorkflowTaskStarted` event − nominal: when a worker's poll got the task). A task handed to a poll
 * that was already waiting is leased inside the start transaction with the fire's own `now`
 * (src/engine/start-batch.ts, flush → writeLeases), so for it the lease lag is the fire's clock
 * reading, not when the worker received it; the handler lag the worker reports is that measure.
 */
import Database from "better-sqlite3";
import pg from "pg";

export interface Phases {
  fire: number[];
  lease: number[];
}

const FIRE = `SELECT recorded_ms - occurrence_ms AS lag FROM orbit_occurrences
  WHERE kind = 'started' AND occurrence_ms IN (__IN__)`;
const LEASE = `SELECT MIN(e.at_ms) - o.occurrence_ms AS lag FROM orbit_occurrences o
  JOIN orbit_execution_events e ON e.execution_id = o.execution_id AND e.type = 'WorkflowTaskStarted'
  WHERE o.kind = 'started' AND o.occurrence_ms IN (__IN__) GROUP BY o.id, o.occurrence_ms`;

/** The lags (ms) of the measured occurrences, from a SQLite data folder or a PostgreSQL schema. */
export async function readPhases(
  target: { sqliteFile: string } | { url: string; schema: string },
  nominals: readonly number[],
): Promise<Phases> {
  const inList = nominals.map((n) => String(Math.trunc(n))).join(",");
  const fireSql = FIRE.replace("__IN__", inList);
  const leaseSql = LEASE.replace("__IN__", inList);
  if ("sqliteFile" in target) {
    const db = new Database(target.sqliteFile, { readonly: true, fileMustExist: true });
    try {
      const col = (sql: string) => (db.prepare(sql).all() as { lag: number }[]).map((r) => Number(r.lag));
      return { fire: col(fireSql), lease: col(leaseSql) };
    } finally {
      db.close();
    }
  }
  const c = new pg.Client({ connectionString: target.url });
  await c.connect();
  try {
    await c.query(`SET search_path TO ${target.schema}`);
    const col = async (sql: string) => (await c.query<{ lag: string }>(sql)).rows.map((r) => Number(r.lag));
    return { fire: await col(fireSql), lease: await col(leaseSql) };
  } finally {
    await c.end();
  }
}
