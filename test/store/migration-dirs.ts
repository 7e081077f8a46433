/**
 * Migration folders that play another release (docs/operations.md § Upgrade): the shipped
 * migrations of a dialect plus extra files a "newer release" would add, in a temporary folder.
 */
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadMigrations, migrationsDir } from "../../src/store/migrations.js";
import type { DialectName } from "../../src/store/store.js";

export interface MigrationDir {
  /** The folder, with a trailing slash (as loadMigrations wants it). */
  dir: string;
  remove(): void;
}

/** The next migration number after the shipped ones, as a file name prefix. */
export function nextNumber(dialect: DialectName): string {
  return String(loadMigrations(dialect).length + 1).padStart(4, "0");
}

/** The shipped migrations plus `extra` (file name → SQL). */
export function migrationDirWith(dialect: DialectName, extra: Record<string, string>): MigrationDir {
  const dir = `${mkdtempSync(join(tmpdir(), `orbit-migrations-${dialect}-`))}/`;
  const shipped = migrationsDir(dialect);
  for (const file of readdirSync(shipped)) copyFileSync(join(shipped, file), join(dir, file));
  for (const [file, sql] of Object.entries(extra)) writeFileSync(join(dir, file), sql);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * An additive migration of a "newer release" that touches what every fire and start writes: a
 * NOT NULL column with a default on the schedules, executions, tasks and ledger, a nullable one, a
 * new table and an index. Older servers' inserts and updates must keep working on it.
 */
export const ADDITIVE_NEXT = `-- orbit: additive
-- A test migration of a newer release (test/store/migration-dirs.ts).
ALTER TABLE orbit_schedules ADD COLUMN roll_note TEXT;
ALTER TABLE orbit_schedules ADD COLUMN roll_weight INTEGER NOT NULL DEFAULT 1;
ALTER TABLE orbit_executions ADD COLUMN roll_origin TEXT NOT NULL DEFAULT 'old';
ALTER TABLE orbit_worker_tasks ADD COLUMN roll_hint TEXT;
ALTER TABLE orbit_occurrences ADD COLUMN roll_seen INTEGER NOT NULL DEFAULT 0;
CREATE TABLE orbit_roll_marks (id TEXT PRIMARY KEY, at_ms BIGINT NOT NULL);
CREATE INDEX orbit_executions_roll_origin ON orbit_executions (roll_origin);
`;

/** A breaking migration of a "newer release": older servers' statements name the column it renames. */
export const BREAKING_NEXT = `-- orbit: breaking
-- A test migration of a newer release (test/store/migration-dirs.ts).
ALTER TABLE orbit_executions RENAME COLUMN cancel_reason TO cancel_note;
`;
