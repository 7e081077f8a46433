/**
 * Applies pending PostgreSQL migrations under a session advisory lock of the schema, so that
 * servers starting together take turns: the second finds the work done.
 */
import type pg from "pg";
import {
  appliedMigration,
  loadMigrations,
  MIGRATIONS_TABLE,
  type MigrateResult,
  type MigrationsUnderWay,
  migrationLabel,
  planMigrations,
} from "../migrations.js";
import { checkOut } from "./check-out.js";
import { ADVISORY_LOCKS, postgresDialect } from "./dialect.js";

export type { MigrationsUnderWay } from "../migrations.js";

/** Sessions of other Orbit processes in this database (any schema): servers of an older release, perhaps. */
const OTHER_ORBIT_SESSIONS = `SELECT count(*)::int AS n FROM pg_stat_activity
  WHERE datname = current_database() AND application_name = 'orbit' AND pid <> pg_backend_pid()`;

export async function migratePostgres(
  pool: pg.Pool,
  dir?: string,
  onMigrating?: (underWay: MigrationsUnderWay) => void,
): Promise<MigrateResult> {
  const all = loadMigrations("postgres", dir);
  let broken = false;
  const onError = () => {
    broken = true; // the query in flight fails on its own
  };
  const client = await checkOut(pool, onError);
  try {
    await client.query(`SELECT pg_advisory_lock(${ADVISORY_LOCKS.migrations})`);
    try {
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_ms BIGINT NOT NULL)`,
      );
      const records = (await client.query(`SELECT * FROM ${MIGRATIONS_TABLE}`)).rows.map(appliedMigration);
      const { pending, newer } = planMigrations(all, records, "postgres");
      if (pending.length) {
        const breaking = records.length > 0 ? pending.filter((m) => !m.additive).map(migrationLabel) : [];
        const otherSessions =
          breaking.length > 0 ? Number((await client.query(OTHER_ORBIT_SESSIONS)).rows[0]?.n ?? 0) : 0;
        onMigrating?.({ pending: pending.map(migrationLabel), breaking, otherSessions });
        await client.query("BEGIN");
        try {
          for (const migration of pending) {
            await client.query(migration.sql);
            await client.query(
              `INSERT INTO ${MIGRATIONS_TABLE} (version, name, applied_ms) VALUES ($1, $2, ${postgresDialect.nowMs})`,
              [migration.version, migration.name],
            );
          }
          // From migration 0010 on, the table records whether each migration is additive.
          const column = await client.query(
            `SELECT 1 FROM information_schema.columns
             WHERE table_schema = current_schema() AND table_name = $1 AND column_name = 'additive'`,
            [MIGRATIONS_TABLE],
          );
          if (column.rowCount) {
            await client.query(
              `UPDATE ${MIGRATIONS_TABLE} m SET additive = u.additive
               FROM unnest($1::int[], $2::int[]) AS u(version, additive) WHERE m.version = u.version`,
              [pending.map((m) => m.version), pending.map((m) => (m.additive ? 1 : 0))],
            );
          }
          await client.query("COMMIT");
        } catch (error) {
          await client.query("ROLLBACK");
          throw error;
        }
      }
      return {
        applied: pending.map((m) => m.version),
        newer,
        log: { applied: pending.map(migrationLabel), created: records.length === 0 },
      };
    } finally {
      await client.query(`SELECT pg_advisory_unlock(${ADVISORY_LOCKS.migrations})`);
    }
  } catch (error) {
    broken = true;
    throw error;
  } finally {
    // A connection that failed mid-migration is discarded rather than returned with unknown state.
    client.removeListener("error", onError);
    client.release(broken);
  }
}
