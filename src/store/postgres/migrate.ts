/**
 * Applies pending PostgreSQL migrations under a session advisory lock on a fixed key, so that
 * servers starting together take turns: the second finds the work done.
 */
import type pg from "pg";
import { loadMigrations, MIGRATIONS_TABLE, pendingMigrations } from "../migrations.js";
import { ADVISORY_LOCK_KEYS, postgresDialect } from "./dialect.js";

/** Returns the versions applied by this call. */
export async function migratePostgres(pool: pg.Pool): Promise<number[]> {
  const all = loadMigrations("postgres");
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query(`SELECT pg_advisory_lock(${ADVISORY_LOCK_KEYS.migrations})`);
    try {
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_ms BIGINT NOT NULL)`,
      );
      const applied = (await client.query<{ version: number }>(`SELECT version FROM ${MIGRATIONS_TABLE}`)).rows;
      const pending = pendingMigrations(
        all,
        applied.map((r) => r.version),
        "postgres",
      );
      if (pending.length) {
        await client.query("BEGIN");
        try {
          for (const migration of pending) {
            await client.query(migration.sql);
            await client.query(
              `INSERT INTO ${MIGRATIONS_TABLE} (version, name, applied_ms) VALUES ($1, $2, ${postgresDialect.nowMs})`,
              [migration.version, migration.name],
            );
          }
          await client.query("COMMIT");
        } catch (error) {
          await client.query("ROLLBACK");
          throw error;
        }
      }
      return pending.map((m) => m.version);
    } finally {
      await client.query(`SELECT pg_advisory_unlock(${ADVISORY_LOCK_KEYS.migrations})`);
    }
  } catch (error) {
    broken = true;
    throw error;
  } finally {
    // A connection that failed mid-migration is discarded rather than returned with unknown state.
    client.release(broken);
  }
}
