/**
 * SQLite's orbit_schedules keeps its large columns last (migration 0022, docs/storage.md § Large
 * columns last): a scan of the small columns reads each row's first page, not its input's overflow
 * pages. Migrating keeps every row and column value, the types, defaults, checks and indexes; the
 * reads of /metrics and of a search over schedules with 10 KB inputs read about the table's leaf
 * pages, counted as the bytes the process reads (Linux's /proc/self/io; SQLite reads its file with
 * pread, no mmap by default).
 */
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { loadMigrations, migrationsDir } from "../../src/store/migrations.js";
import type { ScheduleOutcomes } from "../../src/store/rows.js";
import { migrateSqlite } from "../../src/store/sqlite/migrate.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { schedule, T0 } from "./fixtures/records.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const tempDir = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

/** The shipped SQLite migrations up to `version`, in a folder of their own. */
function migrationsUpTo(version: number): string {
  const dir = `${tempDir("orbit-migrations-upto-")}/`;
  for (const file of readdirSync(migrationsDir("sqlite"))) {
    if (Number(file.slice(0, 4)) <= version) copyFileSync(join(migrationsDir("sqlite"), file), join(dir, file));
  }
  return dir;
}

const REORDER = loadMigrations("sqlite").find((m) => m.name === "large_columns_last")?.version ?? Number.NaN;

/** Row `i` of the table as 0013 made it, every column given; NULLs, large values and defaults mixed. */
function oldRow(i: number): Record<string, string | number | null> {
  const state = ["active", "paused", "ended"][i % 3] as string;
  const some = <T>(value: T): T | null => (i % 4 === 0 ? null : value);
  return {
    schedule_id: `sched-${String(i).padStart(3, "0")}`,
    workflow: `Wf ${i % 5} — élan`,
    version: some(`1.${i}.0`),
    input: JSON.stringify({ order: i, note: "ü".repeat(i % 2 === 0 ? 6000 : 10) }),
    spec: JSON.stringify({ cron: "*/5 * * * *", timezone: "Europe/Berlin", description: `export ${i}` }),
    paused: state === "paused" ? 1 : 0,
    pause_note: state === "paused" ? `held ${i}` : null,
    state,
    next_fire_ms: state === "ended" ? null : T0 + i * 1000,
    due_ms: state === "ended" ? null : T0 + i * 1000 + 7,
    retry_ms: i % 5 === 0 ? T0 + 30_000 : null,
    revision: i + 1,
    fired: i * 3,
    skipped: i % 7,
    last_fire_ms: some(T0 - i),
    last_execution_id: some(`sched-${i}:2026-11-15T18:50:00Z`),
    last_error: i % 6 === 0 ? "workflow W 9.9.9 is not registered" : null,
    buffered: i % 8 === 0 ? JSON.stringify([T0 - 60_000, T0]) : "[]",
    concurrency_key: some(`key-${i % 3}`),
    created_ms: T0 - 86_400_000,
    updated_ms: T0 - i,
    last_outcome: some(JSON.stringify({ status: "FAILED", executionId: `x${i}`, endedMs: T0, error: "e".repeat(i) })),
    last_success_ms: some(T0 - 2 * i),
    last_failure_ms: some(T0 - 3 * i),
    consecutive_failures: i % 4,
    failures: i * 2,
    runs: i,
  };
}

/** What a schema says of a table: its columns by name, its CREATE statement, its indexes. */
function shape(db: Database.Database) {
  const columns = db
    .prepare<[], Record<string, unknown>>(
      "SELECT name, type, \"notnull\", dflt_value, pk, hidden FROM pragma_table_xinfo('orbit_schedules')",
    )
    .all()
    .sort((a, b) => String(a.name).localeCompare(String(b.name)));
  const indexes = db
    .prepare<[], { sql: string }>(
      "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'orbit_schedules' AND sql IS NOT NULL ORDER BY name",
    )
    .pluck()
    .all();
  const table = db.prepare<[], string>("SELECT sql FROM sqlite_master WHERE name = 'orbit_schedules'").pluck().get();
  return { columns, indexes, table: table ?? "" };
}

/** The outcomes of a schedule whose last execution completed after `i % 5 + 1` failures in all. */
const ran = (i: number): ScheduleOutcomes => ({
  lastOutcome: { status: "COMPLETED", executionId: `x${i}`, endedMs: T0 - i, error: null, errorType: null },
  lastSuccessMs: T0 - i,
  lastFailureMs: T0 - 2 * i - 1,
  consecutiveFailures: 0,
  failures: (i % 5) + 1,
});

const ALL_ROWS = "SELECT * FROM orbit_schedules ORDER BY schedule_id";

describe("SQLite orbit_schedules with its large columns last (migration 0022)", () => {
  it("migrating a database with schedules keeps every row, column value, type, default, check and index", async () => {
    const dir = tempDir("orbit-large-columns-");
    const file = join(dir, "orbit.db");
    const before = new Database(file);
    const rows = Array.from({ length: 120 }, (_, i) => oldRow(i));
    let had: ReturnType<typeof shape>;
    try {
      expect(migrateSqlite(before, migrationsUpTo(REORDER - 1)).applied.at(-1)).toBe(REORDER - 1);
      const names = Object.keys(rows[0]!);
      const insert = before.prepare(
        `INSERT INTO orbit_schedules (${names.join(", ")}) VALUES (${names.map((n) => `@${n}`).join(", ")})`,
      );
      before.transaction(() => {
        for (const r of rows) insert.run(r);
      })();
      // A row that leaves the defaulted columns to their defaults.
      before
        .prepare(
          "INSERT INTO orbit_schedules (schedule_id, workflow, input, spec, state, revision, created_ms, updated_ms) VALUES ('zz-defaults', 'W', '{}', '{}', 'active', 1, 5, 6)",
        )
        .run();
      had = shape(before);
      expect(before.prepare(ALL_ROWS).all()).toHaveLength(121);
    } finally {
      before.close();
    }

    const store = new SqliteStore({ dataDir: dir });
    await store.open();
    cleanups.push(() => store.close());
    expect(store.migrationLog.applied).toContain(`${String(REORDER).padStart(4, "0")}_large_columns_last`);

    const after = new Database(file, { readonly: true });
    cleanups.push(() => {
      after.close();
    });
    const kept = after.prepare<[], Record<string, unknown>>(ALL_ROWS).all();
    expect(kept.slice(0, 120)).toEqual(rows);
    expect(kept[120]).toMatchObject({ paused: 0, fired: 0, skipped: 0, runs: 0, buffered: "[]", failures: 0 });
    expect(kept[120]).toMatchObject({ consecutive_failures: 0, version: null, last_outcome: null });
    const now = shape(after);
    expect(now.columns).toEqual(had.columns);
    expect(now.indexes).toEqual(had.indexes);
    expect(now.indexes).toHaveLength(3);
    expect(now.table).toMatch(/\) WITHOUT ROWID$/);
    expect(now.table).toContain("state TEXT NOT NULL CHECK (state IN ('active', 'paused', 'ended'))");

    // The store reads the rows as before: the large input whole, the outcome decoded.
    const big = await store.getSchedule("sched-002");
    expect(big?.input).toEqual({ order: 2, note: "ü".repeat(6000) });
    expect(big?.outcomes?.lastOutcome?.error).toBe("ee");
    expect(big?.buffered).toEqual([]);
    expect((await store.getSchedule("sched-008"))?.buffered).toEqual([T0 - 60_000, T0]);
    await expect(
      store.transaction((tx) => tx.insertSchedule(schedule("bad-state", { state: "gone" as "ended" }))),
    ).rejects.toThrow(/CHECK constraint failed/);
  });

  it("keeps the fixed-size and short columns before the large ones, input last", async () => {
    const dir = tempDir("orbit-large-columns-order-");
    const store = new SqliteStore({ dataDir: dir });
    await store.open();
    cleanups.push(() => store.close());
    const db = new Database(join(dir, "orbit.db"), { readonly: true });
    cleanups.push(() => {
      db.close();
    });
    const columns = db.prepare<[], string>("SELECT name FROM pragma_table_info('orbit_schedules')").pluck().all();
    const large = ["buffered", "spec", "pause_note", "last_error", "last_outcome", "input"];
    expect(columns.slice(-large.length)).toEqual(large);
    expect(columns.slice(0, 4)).toEqual(["schedule_id", "state", "paused", "due_ms"]);
  });

  it.skipIf(!existsSync("/proc/self/io"))(
    "the overdue count, the outcome figures and a scan of the outcomes read the leaf pages, not 10 KB inputs",
    async () => {
      const dir = tempDir("orbit-large-columns-reads-");
      const store = new SqliteStore({ dataDir: dir, synchronous: "normal" });
      await store.open();
      cleanups.push(() => store.close());
      // 2,000 active schedules with 10 KB of input each, half due more than a minute ago: 20 MB of
      // inputs; the table's leaf pages are about 1 MB, which SQLite's 4 MB page cache holds.
      const inputs = 2000 * 10_000;
      for (let from = 0; from < 2000; from += 500) {
        const batch = Array.from({ length: 500 }, (_, k) => {
          const i = from + k;
          const due = T0 - 1_000_000 + i * 1000;
          return schedule(`sched-${String(i).padStart(4, "0")}`, {
            input: { order: i, note: `${i}`.padEnd(10_000, "x") },
            dueMs: due,
            nextFireMs: due,
          });
        });
        await store.transaction(async (tx) => {
          await tx.insertSchedules(batch);
          // Outcomes as schedules that have run have them: a zero or NULL takes no bytes in a
          // row, so a read of one never needs the row's overflow pages.
          await tx.setSchedulesOutcomes(batch.map((s, k) => ({ scheduleId: s.scheduleId, outcomes: ran(from + k) })));
        });
      }
      const readBytes = () => Number(/^rchar: (\d+)$/m.exec(readFileSync("/proc/self/io", "utf8"))?.[1]);
      const reads = async (fn: () => Promise<unknown>): Promise<{ bytes: number; answer: unknown }> => {
        await fn(); // the first run fills the page cache
        const start = readBytes();
        const answer = await fn();
        return { bytes: readBytes() - start, answer };
      };

      const overdue = await reads(() => store.countOverdueSchedules(T0 - 60_000));
      const aggregate = await reads(() => store.aggregateScheduleOutcomes());
      const failed = await reads(() =>
        store.searchSchedules({ outcome: "failed", sort: "id", order: "asc", limit: 10 }),
      );
      expect(overdue.answer).toBe(940);
      expect(aggregate.answer).toEqual({
        schedules: 2000,
        oldestLastSuccessMs: T0 - 1999,
        maxConsecutiveFailures: 0,
        failures: 6000,
      });
      expect(failed.answer).toEqual({ rows: [], counts: {} });
      // In 0013's order each read walked every input's overflow pages (25–50 MB here); the overdue
      // count through orbit_schedules_due seeks each row, which loads every row it compares whole
      // (200 MB).
      for (const [read, { bytes }] of Object.entries({ overdue, aggregate, failed }))
        expect.soft(bytes, `${read}: bytes read`).toBeLessThan(inputs / 10);
    },
  );
});
