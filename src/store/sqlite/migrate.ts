/** Applies pending SQLite migrations inside one BEGIN IMMEDIATE, so concurrent openers take turns. */
import type Database from "better-sqlite3";
import {
  appliedMigration,
  loadMigrations,
  MIGRATIONS_TABLE,
  type MigrateResult,
  type MigrationsUnderWay,
  migrationLabel,
  planMigrations,
} from "../migrations.js";
import { sqliteDialect } from "./dialect.js";

/**
 * `onMigrating`: told before pending migrations are applied (the server logs "upgrading the
 * database" with their names, as on PostgreSQL: a 171 MB file took 4 s with nothing said first; a
 * tester). SQLite runs one server, so no other sessions are counted.
 */
export function migrateSqlite(
  db: Database.Database,
  dir?: string,
  onMigrating?: (underWay: MigrationsUnderWay) => void,
): MigrateResult {
  const all = loadMigrations("sqlite", dir);
  db.exec("BEGIN IMMEDIATE");
  try {
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_ms INTEGER NOT NULL)`,
    );
    const records = db
      .prepare<[], Record<string, unknown>>(`SELECT * FROM ${MIGRATIONS_TABLE}`)
      .all()
      .map(appliedMigration);
    const { pending, newer } = planMigrations(all, records, "sqlite");
    const record = db.prepare<[number, string]>(
      `INSERT INTO ${MIGRATIONS_TABLE} (version, name, applied_ms) VALUES (?, ?, ${sqliteDialect.nowMs})`,
    );
    if (pending.length > 0 && records.length > 0) {
      const breaking = pending.filter((m) => !m.additive).map(migrationLabel);
      onMigrating?.({ pending: pending.map(migrationLabel), breaking, otherSessions: 0 });
    }
    for (const migration of pending) {
      db.exec(migration.sql);
      record.run(migration.version, migration.name);
    }
    // From migration 0010 on, the table records whether each migration is additive.
    const recordsAdditive = db
      .prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('${MIGRATIONS_TABLE}')`)
      .all()
      .some((c) => c.name === "additive");
    if (recordsAdditive) {
      const mark = db.prepare<[number, number]>(`UPDATE ${MIGRATIONS_TABLE} SET additive = ? WHERE version = ?`);
      for (const migration of pending) mark.run(migration.additive ? 1 : 0, migration.version);
    }
    db.exec("COMMIT");
    return {
      applied: pending.map((m) => m.version),
      newer,
      log: { applied: pending.map(migrationLabel), created: records.length === 0 },
    };
  } catch (error) {
    if (db.inTransaction) db.exec("ROLLBACK");
    throw error;
  }
}
