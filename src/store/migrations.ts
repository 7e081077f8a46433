/**
 * Numbered SQL migrations shipped with the package in migrations/<dialect>/NNNN_name.sql.
 * Append-only: a shipped file never changes; a new schema change is the next number, in both dialects.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { DialectName } from "./store.js";

export interface Migration {
  version: number;
  name: string;
  sql: string;
  /**
   * Declared by the file's `-- orbit: additive` line: servers that do not know this migration keep
   * working on a database that has it, so they may start on it during a rolling upgrade
   * (docs/operations.md § Upgrade). Without the line a migration counts as breaking.
   */
  additive: boolean;
}

/** A row of {@link MIGRATIONS_TABLE}. `additive` is null where it was not recorded (before 0010). */
export interface AppliedMigration {
  version: number;
  name: string;
  additive: boolean | null;
}

/** What a migrator did when it opened a database (both dialects). */
/** What opening a store applied: nothing, a new database's migrations, or an upgrade's. */
export interface MigrationLog {
  applied: readonly string[];
  /** No migration was recorded before: a new database (or a new PostgreSQL schema). */
  created: boolean;
}

export interface MigrateResult {
  /** The versions applied by this call. */
  applied: number[];
  /** Labels (`0020_deleted_failures`) of the migrations this call applied, and whether the database had none before. */
  log: MigrationLog;
  /** Migrations of a newer release, all additive, that this one runs beside (docs/operations.md § Upgrade). */
  newer: AppliedMigration[];
}

/** The table that records applied migrations (created by the migrator itself, not by a migration). */
export const MIGRATIONS_TABLE = "orbit_migrations";

const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.sql$/;
/** The declaration line: `-- orbit: additive` or `-- orbit: breaking`. */
const DECLARATION = /^--\s*orbit:\s*(\S+)\s*$/m;

/**
 * The folder of a dialect's migrations. This module sits at src/store/ under tsx/vitest and at
 * dist/store/ after `tsc`; both are two levels below the package root, where migrations/ ships.
 */
export function migrationsDir(dialect: DialectName): string {
  return fileURLToPath(new URL(`../../migrations/${dialect}/`, import.meta.url));
}

/**
 * Reads and orders a dialect's migrations; refuses gaps, duplicate numbers, an unknown declaration
 * and a migration declared additive whose SQL is not ({@link additiveViolations}).
 */
export function loadMigrations(dialect: DialectName, dir = migrationsDir(dialect)): Migration[] {
  const migrations: Migration[] = [];
  for (const file of readdirSync(dir)) {
    const match = FILE_NAME.exec(file);
    if (!match) {
      if (file.endsWith(".sql")) throw new Error(`migration file ${dir}${file} is not named NNNN_name.sql`);
      continue;
    }
    const sql = readFileSync(`${dir}${file}`, "utf8");
    const declared = DECLARATION.exec(sql)?.[1];
    if (declared !== undefined && declared !== "additive" && declared !== "breaking") {
      throw new Error(
        `migration file ${dir}${file} declares "orbit: ${declared}"; write "-- orbit: additive" or "-- orbit: breaking"`,
      );
    }
    const additive = declared === "additive";
    if (additive) {
      const wrong = additiveViolations(sql);
      if (wrong.length > 0) {
        throw new Error(
          `migration file ${dir}${file} is declared "-- orbit: additive" but ${wrong.join("; ")}: declare it "-- orbit: breaking" or split it (docs/operations.md § Upgrade)`,
        );
      }
    }
    migrations.push({ version: Number(match[1]), name: match[2] ?? "", sql, additive });
  }
  migrations.sort((a, b) => a.version - b.version);
  migrations.forEach((m, i) => {
    if (m.version !== i + 1)
      throw new Error(
        `${dialect} migrations must be numbered 0001, 0002, … without gaps; found ${m.version} at position ${i + 1}`,
      );
  });
  return migrations;
}

/**
 * What keeps a migration additive, that is, harmless to a server that runs the previous release's
 * code on the migrated schema: it only adds tables, indexes and columns such a server's statements
 * never have to name (nullable, or NOT NULL with a DEFAULT). Returns what breaks the rule, one
 * phrase per statement; a syntactic check, so the author still answers for the meaning (a column
 * older servers leave at its default must be a value the new code accepts).
 */
export function additiveViolations(sql: string): string[] {
  const statements = sql
    .replace(/--[^\n]*/g, "")
    .split(";")
    .map((s) => s.replace(/\s+/g, " ").trim())
    .filter((s) => s.length > 0);
  const wrong: string[] = [];
  for (const statement of statements) {
    const upper = statement.toUpperCase();
    const shown = statement.length > 60 ? `${statement.slice(0, 57)}...` : statement;
    if (/^CREATE TABLE (IF NOT EXISTS )?\w+ ?\(/.test(upper)) continue;
    if (/^CREATE INDEX (IF NOT EXISTS )?\w+ ON \w+/.test(upper)) continue;
    const column = /^ALTER TABLE \w+ ADD COLUMN (IF NOT EXISTS )?\w+ (.*)$/.exec(upper);
    if (column !== null) {
      const definition = column[2] ?? "";
      if (/,\s*ADD\b/.test(definition))
        wrong.push(`"${shown}" adds several columns in one statement (one per ALTER TABLE)`);
      else if (/\b(PRIMARY KEY|UNIQUE|REFERENCES|GENERATED)\b/.test(definition))
        wrong.push(`"${shown}" adds a key, a reference or a generated column`);
      else if (/\bNOT NULL\b/.test(definition) && !/\bDEFAULT\b/.test(definition))
        wrong.push(`"${shown}" is NOT NULL without a DEFAULT (older servers' inserts would fail)`);
      continue;
    }
    wrong.push(`"${shown}" is not CREATE TABLE, CREATE INDEX or ALTER TABLE … ADD COLUMN`);
  }
  return wrong;
}

/** Reads a {@link MIGRATIONS_TABLE} row, whether or not the table has the `additive` column yet. */
export function appliedMigration(row: Record<string, unknown>): AppliedMigration {
  const additive = row.additive;
  return {
    version: Number(row.version),
    name: String(row.name ?? ""),
    additive: additive === undefined || additive === null ? null : additive === true || Number(additive) === 1,
  };
}

/** `0010_migration_compat`, or `0010` when the name is not known. */
export const migrationLabel = (m: { version: number; name: string }): string =>
  m.name === "" ? String(m.version).padStart(4, "0") : `${String(m.version).padStart(4, "0")}_${m.name}`;

/**
 * The applied migrations this Orbit does not know (a newer release's), when it may still run on
 * the database: its own migrations are a prefix of the applied ones (same numbers, same names) and
 * every unknown one is recorded additive (docs/operations.md § Upgrade). Otherwise throws, naming
 * the migration that stops it. Empty when the database is not ahead.
 */
export function newerMigrations(
  all: Migration[],
  applied: readonly (number | AppliedMigration)[],
  dialect: DialectName,
): AppliedMigration[] {
  const records = applied.map((a) => (typeof a === "number" ? { version: a, name: "", additive: null } : a));
  const known = all.length;
  const newer = records.filter((r) => r.version > known).sort((a, b) => a.version - b.version);
  if (newer.length === 0) return [];
  const newest = newer[newer.length - 1] as AppliedMigration;
  const refuse = (why: string): never => {
    throw new Error(
      `the ${dialect} database has migration ${migrationLabel(newest)} applied but this Orbit knows only up to ${known}: it was written by a newer Orbit; upgrade Orbit to open it (${why}, so this release cannot run on it: docs/operations.md § Upgrade)`,
    );
  };
  for (const m of all) {
    const r = records.find((x) => x.version === m.version);
    if (r === undefined) refuse(`this Orbit's migration ${migrationLabel(m)} is not applied there`);
    else if (r.name !== "" && r.name !== m.name)
      refuse(`its migration ${migrationLabel(r)} is not this Orbit's ${migrationLabel(m)}`);
  }
  const breaking = newer.filter((r) => r.additive !== true);
  if (breaking.length > 0) {
    refuse(
      `${breaking.map(migrationLabel).join(", ")} ${breaking.length === 1 ? "is" : "are"} not recorded as additive (compatible with older servers)`,
    );
  }
  return newer;
}

/**
 * Which migrations still need applying, given the ones already recorded. Throws when the database
 * is ahead of this Orbit in a way it cannot run on ({@link newerMigrations}).
 */
export function pendingMigrations(
  all: Migration[],
  applied: readonly (number | AppliedMigration)[],
  dialect: DialectName,
): Migration[] {
  return planMigrations(all, applied, dialect).pending;
}

/** What a migrator does on opening: the migrations to apply, and the newer ones it runs beside. */
export function planMigrations(
  all: Migration[],
  applied: readonly (number | AppliedMigration)[],
  dialect: DialectName,
): { pending: Migration[]; newer: AppliedMigration[] } {
  const newer = newerMigrations(all, applied, dialect);
  const done = new Set(applied.map((a) => (typeof a === "number" ? a : a.version)));
  return { pending: all.filter((m) => !done.has(m.version)), newer };
}

/** Said before a start applies migrations (they can take a while, and hold the schema's lock). */
export interface MigrationsUnderWay {
  /** Labels of the migrations about to be applied. */
  pending: string[];
  /** Those not additive, on a database that had migrations before: older servers cannot run beside them. */
  breaking: string[];
  /** Other sessions named `orbit` in this database (pg_stat_activity), counted when `breaking` is not empty; 0 on SQLite. */
  otherSessions: number;
}
