/**
 * The firing benchmark's environment: a store per dialect (a temp SQLite file, or a throwaway
 * PostgreSQL schema), the engine and scheduler wired as the server wires them, and a raw handle on
 * the same database for bulk inserts and bench-only updates (a separate better-sqlite3 connection or
 * pg client; the Store API inserts one row per statement, too slow for a million rows).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import type { Clock } from "../../src/domain/clock.js";
import type { JsonObject } from "../../src/domain/json.js";
import { Executions } from "../../src/engine/executions.js";
import { Workflows } from "../../src/engine/workflows.js";
import type { FireReport } from "../../src/scheduler/fire.js";
import { Scheduler, wakeBuffers } from "../../src/scheduler/scheduler.js";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";

export const PG_URL = process.env.ORBIT_TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";

export const WORKFLOW = "Bench";
export const INPUT: JsonObject = { order_id: "o-1", amount: 12.5 };
const INPUT_SCHEMA: JsonObject = {
  type: "object",
  properties: {
    order_id: { type: "string" },
    amount: { type: "number" },
    currency: { type: "string", default: "EUR" },
  },
  required: ["order_id", "amount"],
};

/** A schedule row reduced to what differs between bulk-inserted rows. */
export interface BulkRow {
  id: string;
  spec: JsonObject;
  nextFireMs: number;
  dueMs: number;
}

/** Bench-only access to the database, beside the store. */
export interface RawDb {
  insert(rows: readonly BulkRow[], now: number): Promise<void>;
  /** Takes the schedules whose id starts with `prefix` out of the firing loop's index (paused). */
  retire(prefix: string): Promise<void>;
  count(): Promise<number>;
  close(): Promise<void>;
  /** SQLite only: counts the pages written between `begin()` and `end()`, per B-tree. */
  walPages?: WalPages;
}

/**
 * The pages a stretch of work writes to SQLite's WAL, per B-tree (table or index): `begin()` empties
 * the WAL and holds a read snapshot on the raw connection, so no checkpoint can restart the WAL
 * while the work appends to it; `end()` reads the WAL's frame headers (each frame is one page written
 * by one commit, so a page rewritten at ten commits counts ten) and names each page with `dbstat`.
 */
export interface WalPages {
  begin(): void;
  end(): Map<string, number>;
}

export interface Env {
  label: string;
  store: Store;
  raw: RawDb;
  close(): Promise<void>;
}

export interface Wired {
  workflows: Workflows;
  executions: Executions;
  scheduler: Scheduler;
}

/** Workflows, Executions (with `onEnded: wakeBuffers`) and a Scheduler on `store` and `clock`. */
export async function wire(
  store: Store,
  clock: Clock,
  onFire: (report: FireReport, firedAtMs: number) => void,
): Promise<Wired> {
  const workflows = new Workflows({ store, clock });
  const executions = new Executions({
    store,
    clock,
    workflows,
    onEnded: wakeBuffers,
  });
  const scheduler = new Scheduler({
    store,
    clock,
    workflows,
    executions,
    onFire,
    log: {
      warn: (obj, msg) => console.warn("scheduler warn:", msg, obj),
      error: (obj, msg) => console.error("scheduler error:", msg, obj),
    },
  });
  executions.subscribeEnded(() => scheduler.loop.wake());
  await workflows.register({ name: WORKFLOW, version: "1.0.0", input_schema: INPUT_SCHEMA });
  return { workflows, executions, scheduler };
}

const COLUMNS =
  "schedule_id, workflow, version, input, spec, paused, pause_note, state, next_fire_ms, due_ms, retry_ms, revision, fired, skipped, last_fire_ms, last_execution_id, last_error, buffered, concurrency_key, created_ms, updated_ms";

export async function openSqlite(): Promise<Env> {
  const dir = mkdtempSync(join(tmpdir(), "orbit-bench-fire-"));
  const filename = join(dir, "orbit.db");
  // BENCH_SQLITE_CACHE_MB: the store's page cache (--sqlite-cache-mb), to weigh its size against the fire's CPU.
  const cacheMb = Number(process.env.BENCH_SQLITE_CACHE_MB) || undefined;
  const store = new SqliteStore({ filename, ...(cacheMb ? { cacheMb } : {}) });
  await store.open();
  const db = new Database(filename);
  db.pragma("journal_mode = WAL");
  db.pragma("busy_timeout = 10000");
  const insert = db.prepare(
    `INSERT INTO orbit_schedules (${COLUMNS})
     VALUES (?, ?, NULL, ?, ?, 0, NULL, 'active', ?, ?, NULL, 1, 0, 0, NULL, NULL, NULL, '[]', NULL, ?, ?)`,
  );
  const input = JSON.stringify(INPUT);
  const insertAll = db.transaction((rows: readonly BulkRow[], now: number) => {
    for (const r of rows) insert.run(r.id, WORKFLOW, input, JSON.stringify(r.spec), r.nextFireMs, r.dueMs, now, now);
  });
  const raw: RawDb = {
    insert: async (rows, now) => {
      for (let i = 0; i < rows.length; i += 50_000) insertAll(rows.slice(i, i + 50_000), now);
    },
    retire: async (prefix) => {
      db.prepare(
        "UPDATE orbit_schedules SET state = 'paused', paused = 1, due_ms = NULL, revision = revision + 1 WHERE schedule_id LIKE ?",
      ).run(`${prefix}%`);
    },
    count: async () => db.prepare<[], number>("SELECT COUNT(*) FROM orbit_schedules").pluck().get() ?? 0,
    close: async () => {
      db.close();
    },
    walPages: walPagesOf(db, `${filename}-wal`),
  };
  return {
    label: "sqlite",
    store,
    raw,
    close: async () => {
      await raw.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function walPagesOf(db: Database.Database, walFile: string): WalPages {
  const pin = db.prepare("SELECT 1 FROM orbit_migrations LIMIT 1");
  return {
    begin() {
      db.pragma("wal_checkpoint(TRUNCATE)");
      db.exec("BEGIN");
      pin.get();
    },
    end() {
      const wal = readFileSync(walFile);
      db.exec("COMMIT");
      const pageSize = wal.readUInt32BE(8);
      const written = new Map<number, number>();
      for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
        const page = wal.readUInt32BE(at);
        written.set(page, (written.get(page) ?? 0) + 1);
      }
      const names = new Map<number, string>();
      for (const row of db.prepare<[], { name: string; pageno: number }>("SELECT name, pageno FROM dbstat").all()) {
        names.set(row.pageno, row.name);
      }
      const byTree = new Map<string, number>();
      for (const [page, n] of written) {
        const name = names.get(page) ?? "(free or header)";
        byTree.set(name, (byTree.get(name) ?? 0) + n);
      }
      return new Map([...byTree].sort((a, b) => b[1] - a[1]));
    },
  };
}

/** A fresh schema per call, dropped by close(); a string (the reason) when PostgreSQL is unreachable. */
export async function openPostgres(): Promise<Env | string> {
  const admin = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (error) {
    return `PostgreSQL skipped: cannot connect to ${PG_URL} (${(error as Error).message}); set ORBIT_TEST_DATABASE_URL`;
  }
  const schema = `orbit_bench_fire_${randomBytes(4).toString("hex")}`;
  await admin.query(`CREATE SCHEMA ${schema}`);
  const store = new PostgresStore({ connectionString: PG_URL, searchPath: schema });
  await store.open();
  await admin.query(`SET search_path = ${schema}`);
  const input = JSON.stringify(INPUT);
  const raw: RawDb = {
    insert: async (rows, now) => {
      for (let i = 0; i < rows.length; i += 20_000) {
        const chunk = rows.slice(i, i + 20_000);
        await admin.query(
          `INSERT INTO orbit_schedules (${COLUMNS})
           SELECT u.id, $4, NULL, $5::jsonb, u.spec::jsonb, FALSE, NULL, 'active', u.nf, u.due, NULL, 1, 0, 0, NULL, NULL, NULL,
                  '[]'::jsonb, NULL, $6, $6
           FROM unnest($1::text[], $2::text[], $3::bigint[], $7::bigint[]) AS u(id, spec, nf, due)`,
          [
            chunk.map((r) => r.id),
            chunk.map((r) => JSON.stringify(r.spec)),
            chunk.map((r) => r.nextFireMs),
            WORKFLOW,
            input,
            now,
            chunk.map((r) => r.dueMs),
          ],
        );
      }
    },
    retire: async (prefix) => {
      await admin.query(
        "UPDATE orbit_schedules SET state = 'paused', paused = TRUE, due_ms = NULL, revision = revision + 1 WHERE schedule_id LIKE $1",
        [`${prefix}%`],
      );
    },
    count: async () => Number((await admin.query("SELECT COUNT(*) AS n FROM orbit_schedules")).rows[0]?.n),
    close: async () => undefined,
  };
  return {
    label: "postgres",
    store,
    raw,
    close: async () => {
      await store.close();
      await admin.query("SET search_path = public");
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    },
  };
}
