/**
 * Test databases for the store and engine suites: one contract, every dialect.
 * SQLite runs in a temp directory; PostgreSQL in a fresh schema `orbit_t_<random>` of the database
 * named by ORBIT_TEST_DATABASE_URL (suites skip, saying so, when it is unset). Each location is
 * destroyed after use: stores closed, schema dropped, directory removed.
 */

import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterEach, beforeEach, describe, inject } from "vitest";
import { ManualClock as SrcManualClock } from "../../src/clock/manual-clock.js";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { DialectName, Store } from "../../src/store/store.js";

export const PG_URL = process.env.ORBIT_TEST_DATABASE_URL;

/** One database for one test: open as many stores on it as the test needs (servers, reopen after a crash). */
export interface TestLocation {
  readonly dialect: DialectName;
  /** A new, opened store on this database. */
  open(): Promise<Store>;
  /** Environment that lets a child process open the same database with {@link openStoreFromEnv}. */
  readonly env: Record<string, string>;
  /** Closes every store open() made and deletes the database. */
  destroy(): Promise<void>;
}

export interface TestDialect {
  readonly name: DialectName;
  readonly enabled: boolean;
  readonly skipReason: string | null;
  createLocation(): Promise<TestLocation>;
}

/** Opens a store from {@link TestLocation.env} (used by child-process fixtures). */
export function openStoreFromEnv(env: NodeJS.ProcessEnv): Store {
  if (env.ORBIT_TEST_DIALECT === "sqlite")
    return new SqliteStore({ filename: required(env, "ORBIT_TEST_SQLITE_FILE") });
  return new PostgresStore({
    connectionString: required(env, "ORBIT_TEST_PG_URL"),
    searchPath: required(env, "ORBIT_TEST_PG_SCHEMA"),
  });
}

function required(env: NodeJS.ProcessEnv, key: string): string {
  const value = env[key];
  if (!value) throw new Error(`${key} is not set`);
  return value;
}

function tracking(make: () => Store, cleanup: () => Promise<void>, dialect: DialectName, env: Record<string, string>) {
  const stores: Store[] = [];
  return {
    dialect,
    env,
    async open() {
      const store = make();
      stores.push(store);
      await store.open();
      return store;
    },
    async destroy() {
      await Promise.all(stores.map((s) => s.close()));
      await cleanup();
    },
  } satisfies TestLocation;
}

const sqlite: TestDialect = {
  name: "sqlite",
  enabled: true,
  skipReason: null,
  async createLocation() {
    const dir = mkdtempSync(join(tmpdir(), "orbit-test-"));
    const filename = join(dir, "orbit.db");
    return tracking(
      () => new SqliteStore({ filename, busyTimeoutMs: 10_000 }),
      async () => rmSync(dir, { recursive: true, force: true }),
      "sqlite",
      { ORBIT_TEST_DIALECT: "sqlite", ORBIT_TEST_SQLITE_FILE: filename },
    );
  },
};

const postgres: TestDialect = {
  name: "postgres",
  enabled: PG_URL !== undefined && PG_URL !== "",
  skipReason: PG_URL ? null : "ORBIT_TEST_DATABASE_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test)",
  async createLocation() {
    const url = PG_URL!;
    const prefix = poolPrefix();
    const reused = prefix === undefined ? undefined : spareSchemas.pop();
    const schema = reused ?? `${prefix ?? "orbit_t_"}${randomBytes(6).toString("hex")}`;
    if (reused === undefined) await adminQuery(`CREATE SCHEMA ${schema}`, url);
    return tracking(
      () => new PostgresStore({ connectionString: url, searchPath: schema, maxConnections: 5 }),
      async () => {
        if (prefix !== undefined && (await emptiedForReuse(schema, url))) spareSchemas.push(schema);
        else await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`, url);
      },
      "postgres",
      { ORBIT_TEST_DIALECT: "postgres", ORBIT_TEST_PG_URL: url, ORBIT_TEST_PG_SCHEMA: schema },
    );
  },
};

// ---------------------------------------------------------------------------------------------
// Reused PostgreSQL schemas (docs/testing.md § PostgreSQL schemas). Creating, migrating and
// dropping a schema for each test took about 0.4 s of PostgreSQL's DDL, for 280 tests a run; a
// schema whose test left its tables, columns, indexes, triggers, functions and migrations exactly
// as the migrations make them, and that no other session holds a lock in, is emptied (every row
// deleted, its sequences restarted) and given to the next test of this process instead. Anything
// else is dropped as before. The global setup (test/support/pg-schemas.ts) names the run's
// schemas and drops them at its end.
// ---------------------------------------------------------------------------------------------

const spareSchemas: string[] = [];

/** The run's prefix for reusable schemas; undefined (nothing reused) outside a vitest run that set one. */
function poolPrefix(): string | undefined {
  if (process.env.ORBIT_TEST_PG_REUSE === "0") return undefined;
  try {
    return inject("orbitPgSchemaPrefix");
  } catch {
    return undefined;
  }
}

/** What the schema is made of: every relation with its columns, every trigger, function and migration row. */
const SHAPE = `
  SELECT md5(string_agg(x, ',' ORDER BY x)) AS shape FROM (
    SELECT c.relname || ':' || c.relkind::text || ':' || coalesce((
      SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull::text, ';' ORDER BY a.attnum)
      FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '') AS x
    FROM pg_class c WHERE c.relnamespace = $1::text::regnamespace
    UNION ALL SELECT 'trigger:' || t.tgname || ':' || c.relname || ':' || t.tgenabled::text
    FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = $1::text::regnamespace
    UNION ALL SELECT 'function:' || p.proname || ':' || md5(p.prosrc) FROM pg_proc p WHERE p.pronamespace = $1::text::regnamespace
    UNION ALL SELECT 'index:' || replace(indexdef, $1::text || '.', '') FROM pg_indexes WHERE schemaname = $1::text
  ) s`;

/** The shape of a schema the current migrations made, measured once per process on a schema of its own. */
let migratedShape: Promise<string> | null = null;

function shapeOfMigrated(url: string): Promise<string> {
  migratedShape ??= (async () => {
    const schema = `orbit_t_${randomBytes(6).toString("hex")}`;
    await adminQuery(`CREATE SCHEMA ${schema}`, url);
    try {
      const store = new PostgresStore({ connectionString: url, searchPath: schema, maxConnections: 1 });
      await store.open();
      await store.close();
      return await shapeOf(schema, url);
    } finally {
      await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`, url);
    }
  })();
  return migratedShape;
}

async function shapeOf(schema: string, url: string): Promise<string> {
  const [row] = await adminRows<{ shape: string | null }>(
    `SELECT (${SHAPE}) || ':' || (SELECT string_agg(version::text || name, ',' ORDER BY version) FROM ${schema}.orbit_migrations) AS shape`,
    [schema],
    url,
  ).catch(() => [{ shape: null }]);
  return row?.shape ?? "";
}

/** Empties `schema` for the next test when it is as migrated and unheld; false when it must be dropped. */
async function emptiedForReuse(schema: string, url: string): Promise<boolean> {
  const [expected, actual] = await Promise.all([shapeOfMigrated(url), shapeOf(schema, url)]);
  if (actual === "" || actual !== expected) return false;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const held = await client.query(
      `SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
       WHERE c.relnamespace = $1::text::regnamespace AND l.pid <> pg_backend_pid() LIMIT 1`,
      [schema],
    );
    if (held.rowCount) return false;
    const tables = await client.query<{ name: string }>(
      "SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 AND tablename <> 'orbit_migrations'",
      [schema],
    );
    const sequences = await client.query<{ name: string }>(
      "SELECT sequencename AS name FROM pg_sequences WHERE schemaname = $1",
      [schema],
    );
    // Triggers (the schedules' NOTIFY) and foreign keys are off while the rows go.
    await client.query(
      [
        "BEGIN",
        "SET LOCAL session_replication_role = replica",
        ...tables.rows.map((t) => `DELETE FROM ${schema}.${t.name}`),
        ...sequences.rows.map((q) => `ALTER SEQUENCE ${schema}.${q.name} RESTART`),
        "COMMIT",
      ].join(";"),
    );
    return true;
  } catch {
    return false;
  } finally {
    await client.end();
  }
}

/** Runs one statement on the test database as its owner (creating and dropping test schemas). */
export async function adminQuery(sql: string, url: string = PG_URL ?? ""): Promise<void> {
  await adminRows(sql, [], url);
}

/** {@link adminQuery} answering the statement's rows (checks made beside the server's own connections). */
export async function adminRows<T extends pg.QueryResultRow>(
  sql: string,
  params: unknown[] = [],
  url: string = PG_URL ?? "",
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

export const dialects: readonly TestDialect[] = [sqlite, postgres];
export const postgresDialect = postgres;
export const sqliteDialect = sqlite;

/** `describe` once per dialect; a disabled dialect's suite is skipped with a plain warning. */
export function describeEachDialect(title: string, body: (dialect: TestDialect) => void): void {
  for (const dialect of dialects) {
    if (!dialect.enabled) console.warn(`skipped: "${title} [${dialect.name}]": ${dialect.skipReason}`);
    describe.skipIf(!dialect.enabled)(`${title} [${dialect.name}]`, () => body(dialect));
  }
}

/** A fresh database and an opened store for every test of the enclosing suite. */
export function useStore(dialect: TestDialect): { readonly store: Store; readonly location: TestLocation } {
  let current: { store: Store; location: TestLocation } | null = null;
  beforeEach(async () => {
    const location = await dialect.createLocation();
    current = { location, store: await location.open() };
  });
  afterEach(async () => {
    await current?.location.destroy();
    current = null;
  });
  return {
    get store() {
      if (!current) throw new Error("useStore: no store outside a test");
      return current.store;
    },
    get location() {
      if (!current) throw new Error("useStore: no location outside a test");
      return current.location;
    },
  };
}

/** The engine suites' start instant (2026-11-15T18:51:00Z). */
export const ENGINE_EPOCH_MS = Date.UTC(2026, 10, 15, 18, 51, 0);

/** src/clock/manual-clock.ts (the one manual clock), starting at {@link ENGINE_EPOCH_MS} unless told. */
export class ManualClock extends SrcManualClock {
  constructor(ms = ENGINE_EPOCH_MS) {
    super(ms);
  }
}
