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
}

/** The table that records applied migrations (created by the migrator itself, not by a migration). */
export const MIGRATIONS_TABLE = "orbit_migrations";

const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/**
 * The folder of a dialect's migrations. This module sits at src/store/ under tsx/vitest and at
 * dist/store/ after `tsc`; both are two levels below the package root, where migrations/ ships.
 */
export function migrationsDir(dialect: DialectName): string {
  return fileURLToPath(new URL(`../../migrations/${dialect}/`, import.meta.url));
}

/** Reads and orders a dialect's migrations; refuses gaps and duplicate numbers. */
export function loadMigrations(dialect: DialectName, dir = migrationsDir(dialect)): Migration[] {
  const migrations: Migration[] = [];
  for (const file of readdirSync(dir)) {
    const match = FILE_NAME.exec(file);
    if (!match) {
      if (file.endsWith(".sql")) throw new Error(`migration file ${dir}${file} is not named NNNN_name.sql`);
      continue;
    }
    migrations.push({ version: Number(match[1]), name: match[2] ?? "", sql: readFileSync(`${dir}${file}`, "utf8") });
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

/** Which migrations still need applying, given the versions already recorded. */
export function pendingMigrations(all: Migration[], applied: readonly number[], dialect: DialectName): Migration[] {
  const known = all.length;
  const newest = applied.length ? Math.max(...applied) : 0;
  if (newest > known) {
    throw new Error(
      `the ${dialect} database has migration ${newest} applied but this Orbit knows only up to ${known}: it was written by a newer Orbit; upgrade Orbit to open it`,
    );
  }
  const done = new Set(applied);
  return all.filter((m) => !done.has(m.version));
}
