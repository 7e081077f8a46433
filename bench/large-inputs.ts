/**
 * Schedules with large inputs on SQLite (docs/storage.md § Large columns last, docs/benchmarks.md §
 * Large inputs): how long the reads that scan the schedules table hold the event loop (SQLite runs
 * in it) when every schedule carries a ~10 KB input. Times the reads of a `/metrics` scrape (the
 * overdue count, the outcome figures), schedule searches with a filter and a sort, the plain list
 * pages, the next due instant and a fire batch's read of due rows.
 *
 *   node --import tsx bench/large-inputs.ts                       # 50,000 schedules, 10 KB inputs
 *   node --import tsx bench/large-inputs.ts --schedules 10000      # fewer
 *   node --import tsx bench/large-inputs.ts --input-kb 4           # smaller inputs
 *   node --import tsx bench/large-inputs.ts --repeat 7             # timed runs of each read (default 5)
 *   node --import tsx bench/large-inputs.ts --layout 0013          # the table in 0013's column order,
 *                                                                  # input 4th (before migration 0022)
 *
 * `--layout 0013` fills the store as usual, then runs migration 0013's rebuild again on it, which
 * puts the columns back in that migration's order (no migration after it adds a schedule column).
 * Runs in a temporary directory, removed afterwards.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { migrationsDir } from "../src/store/migrations.js";
import { NO_OUTCOMES, type ScheduleOutcomes, type ScheduleRow } from "../src/store/rows.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { loadAverage } from "./lib/load.js";

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const SCHEDULES = Number(flag("--schedules") ?? 50_000);
const INPUT_KB = Number(flag("--input-kb") ?? 10);
const REPEAT = Number(flag("--repeat") ?? 5);
const LAYOUT = flag("--layout") ?? "current";
if (LAYOUT !== "current" && LAYOUT !== "0013") throw new Error('--layout is "current" or "0013"');

const NOW = Date.UTC(2026, 11, 10, 12, 0, 0);
const GRACE_MS = 60_000;
const WORKFLOWS = 20;

/**
 * Schedule `i`: one of 20 workflows; 1 in 20 paused, 1 in 20 ended, the others due between an hour
 * ago and an hour from now (about half overdue); an input of `INPUT_KB` KB of random text.
 */
function row(i: number): ScheduleRow {
  const state = i % 20 === 7 ? "paused" : i % 20 === 13 ? "ended" : "active";
  const due = state === "ended" ? null : NOW - 3_600_000 + Math.floor((i * 7_200_000) / SCHEDULES);
  return {
    scheduleId: `sched-${String(i).padStart(6, "0")}`,
    workflow: `wf-${i % WORKFLOWS}`,
    version: null,
    input: { order: i, payload: randomBytes(Math.ceil((INPUT_KB * 1024 * 3) / 4)).toString("base64") },
    spec: { cron: "* * * * *", timezone: "UTC", overlap: "skip", description: `nightly export ${i}` },
    paused: state === "paused",
    pauseNote: state === "paused" ? "held for the bench" : null,
    state,
    nextFireMs: due,
    dueMs: due,
    retryMs: null,
    revision: 1,
    fired: i % 97,
    skipped: i % 13,
    runs: i % 97,
    lastFireMs: NOW - 60_000,
    lastExecutionId: null,
    lastError: null,
    buffered: [],
    concurrencyKey: null,
    createdMs: NOW - 86_400_000,
    updatedMs: NOW - 86_400_000 + i,
    outcomes: NO_OUTCOMES,
  };
}

/** What schedule `i`'s executions came to: 1 in 10 failed last, with a short error. */
function outcomes(i: number): ScheduleOutcomes {
  const failed = i % 10 === 3;
  const endedMs = NOW - 60_000;
  return {
    lastOutcome: {
      status: failed ? "FAILED" : "COMPLETED",
      executionId: `sched-${String(i).padStart(6, "0")}:2026-12-10T11:59:00Z`,
      endedMs,
      error: failed ? "upstream answered 503" : null,
      errorType: null,
    },
    lastSuccessMs: failed ? endedMs - 3_600_000 : endedMs,
    lastFailureMs: failed ? endedMs : null,
    consecutiveFailures: failed ? 1 + (i % 4) : 0,
    failures: i % 7,
  };
}

async function fill(store: SqliteStore): Promise<number> {
  const t = performance.now();
  const BATCH = 500;
  for (let from = 0; from < SCHEDULES; from += BATCH) {
    const rows = Array.from({ length: Math.min(BATCH, SCHEDULES - from) }, (_, k) => row(from + k));
    await store.transaction(async (tx) => {
      await tx.insertSchedules(rows);
      await tx.setSchedulesOutcomes(rows.map((r, k) => ({ scheduleId: r.scheduleId, outcomes: outcomes(from + k) })));
    });
  }
  return (performance.now() - t) / 1000;
}

/** Runs migration 0013's rebuild again: the table in that migration's column order, data kept. */
function relayoutAs0013(file: string): void {
  const sql = readFileSync(join(migrationsDir("sqlite"), "0013_schedules_by_id.sql"), "utf8");
  const db = new Database(file);
  try {
    db.exec("BEGIN IMMEDIATE");
    db.exec(sql);
    db.exec("COMMIT");
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
}

/** The table's pages and the columns' order, from dbstat and table_info. */
function layout(file: string): { leaf: number; overflow: number; columns: string } {
  const db = new Database(file, { readonly: true });
  try {
    const pages = db
      .prepare<[], { pagetype: string; n: number }>(
        "SELECT pagetype, COUNT(*) AS n FROM dbstat WHERE name = 'orbit_schedules' GROUP BY pagetype",
      )
      .all();
    const columns = db
      .prepare<[], { name: string }>("SELECT name FROM pragma_table_info('orbit_schedules')")
      .all()
      .map((c) => c.name);
    const count = (type: string) => pages.find((p) => p.pagetype === type)?.n ?? 0;
    return { leaf: count("leaf"), overflow: count("overflow"), columns: columns.join(",") };
  } finally {
    db.close();
  }
}

interface Timing {
  read: string;
  result: string;
  ms: number[];
}

async function time(read: string, fn: () => Promise<unknown>, describe: (r: unknown) => string): Promise<Timing> {
  const ms: number[] = [];
  let result: unknown;
  for (let k = 0; k < REPEAT; k++) {
    const t = performance.now();
    result = await fn();
    ms.push(performance.now() - t);
  }
  return { read, result: describe(result), ms };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "orbit-bench-large-inputs-"));
  try {
    let store = new SqliteStore({ dataDir: dir, synchronous: "normal" });
    await store.open();
    const filled = await fill(store);
    if (LAYOUT === "0013") {
      await store.close();
      relayoutAs0013(store.filename);
      store = new SqliteStore({ dataDir: dir, synchronous: "normal" });
      await store.open();
    }
    const file = store.filename;
    const shape = layout(file);
    console.log(
      `${SCHEDULES} schedules, ${INPUT_KB} KB inputs, layout ${LAYOUT}; filled in ${filled.toFixed(1)} s; ` +
        `${(statSync(file).size / 1e6).toFixed(0)} MB; orbit_schedules: ${shape.leaf} leaf pages, ${shape.overflow} overflow pages`,
    );
    console.log(`columns: ${shape.columns}`);
    console.log(`load before: ${loadAverage()}`);

    const overdueBefore = NOW - GRACE_MS;
    const n = (r: unknown) => String(r);
    const rows = (r: unknown) => `${(r as unknown[]).length} rows`;
    const search = (r: unknown) => {
      const s = r as { rows: unknown[]; counts: Record<string, number> };
      return `${s.rows.length} rows, counts ${JSON.stringify(s.counts)}`;
    };
    const timings: Timing[] = [
      await time("overdue count (/metrics)", () => store.countOverdueSchedules(overdueBefore), n),
      await time(
        "outcome aggregate (/metrics)",
        () => store.aggregateScheduleOutcomes(),
        (r) => JSON.stringify(r),
      ),
      await time("outcome figures, first 1,001 (/metrics)", () => store.listScheduleOutcomeFigures(1001), rows),
      await time(
        "search workflow=wf-3 sort=next_fire",
        () => store.searchSchedules({ workflow: "wf-3", sort: "next_fire", order: "asc", limit: 51 }),
        search,
      ),
      await time(
        "search overdue=true sort=failures desc",
        () => store.searchSchedules({ overdueBeforeMs: overdueBefore, sort: "failures", order: "desc", limit: 51 }),
        search,
      ),
      await time(
        "search outcome=failed sort=failures desc",
        () => store.searchSchedules({ outcome: "failed", sort: "failures", order: "desc", limit: 51 }),
        search,
      ),
      await time(
        "search state=paused sort=updated desc",
        () => store.searchSchedules({ state: "paused", sort: "updated", order: "desc", limit: 51 }),
        search,
      ),
      await time(
        "search q=export 4242 sort=id",
        () => store.searchSchedules({ q: "export 4242", sort: "id", order: "asc", limit: 51 }),
        search,
      ),
      await time("list page (first 51)", () => store.listSchedules({ limit: 51 }), rows),
      await time(
        "list page workflow=wf-7 state=paused",
        () => store.listSchedules({ workflow: "wf-7", state: "paused", limit: 51 }),
        rows,
      ),
      await time("nextDueMs", () => store.nextDueMs(), n),
      await time("fire batch: 200 due rows", () => store.listDueSchedules({ dueAtOrBeforeMs: NOW, limit: 200 }), rows),
    ];
    console.log("");
    console.log(`| read | result | median ms | min ms | max ms |`);
    console.log(`| --- | --- | ---: | ---: | ---: |`);
    for (const t of timings) {
      const f = (x: number) => (x < 10 ? x.toFixed(2) : x.toFixed(0));
      console.log(
        `| ${t.read} | ${t.result} | ${f(median(t.ms))} | ${f(Math.min(...t.ms))} | ${f(Math.max(...t.ms))} |`,
      );
    }
    console.log(`\nload after: ${loadAverage()}`);
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
