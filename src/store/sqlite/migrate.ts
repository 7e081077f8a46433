/** Applies pending SQLite migrations inside one BEGIN IMMEDIATE, so concurrent openers take turns. */
import type Database from "better-sqlite3";
import { loadMigrations, MIGRATIONS_TABLE, pendingMigrations } from "../migrations.js";
import { sqliteDialect } from "./dialect.js";

/** Returns the versions applied by this call. */
export function migrateSqlite(db: Database.Database): number[] {
  const all = loadMigrations("sqlite");
  db.exec("BEGIN IMMEDIATE");
  try {
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_ms INTEGER NOT NULL)`,
    );
    const applied = db.prepare<[], number>(`SELECT version FROM ${MIGRATIONS_TABLE}`).pluck().all();
    const pending = pendingMigrations(all, applied, "sqlite");
    const record = db.prepare<[number, string]>(
      `INSERT INTO ${MIGRATIONS_TABLE} (version, name, applied_ms) VALUES (?, ?, ${sqliteDialect.nowMs})`,
    );
    for (const migration of pending) {
      db.exec(migration.sql);
      record.run(migration.version, migration.name);
    }
    db.exec("COMMIT");
    return pending.map((m) => m.version);
  } catch (error) {
    if (db.inTransaction) db.exec("ROLLBACK");
    throw error;
  }
}
