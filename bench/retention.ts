/**
 * Retention while firing (docs/operations.md § Retention, docs/benchmarks.md § Retention): fireDue()
 * latency of 100 due schedules, repeated, on a store holding N ended executions (each with its first
 * event), first idle, then while one retention pass deletes all N, then idle again on the pruned
 * store; then what the deletes did to the database's size, and what reclaiming it takes.
 *
 *   npm run bench:retention -- 1000000                      # SQLite and PostgreSQL
 *   npm run bench:retention -- 1000000 --dialect sqlite     # or postgres
 *   npm run bench:retention -- 1000000 --rounds 400         # idle rounds (default 300)
 *   npm run bench:retention -- 1000000 --period 250         # a round every 250 ms (default)
 *   npm run bench:retention -- 1000000 --prune-only         # the pass alone, no fires meanwhile
 *   npm run bench:retention -- 1000000 --prune-rounds 240   # stop the pass after 240 rounds
 *   npm run bench:retention -- 1000000 --no-window          # batches do not wait for due fires
 *   npm run bench:retention -- 1000000 --cache-mb 16        # SQLite's page cache (default 4 MB)
 *   npm run bench:retention -- 1000000 --rest-factor 4      # rest 4× each batch's time (default 1)
 *   npm run bench:retention -- 1000000 --alternate 40       # while pruning, 40 rounds with batches, then
 *                                                           # 40 with retention held, and so on: both
 *                                                           # halves share the machine's load
 *
 * PostgreSQL: a throwaway schema of ORBIT_TEST_DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/test), dropped afterwards.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import type { Execution } from "../src/domain/execution.js";
import { type FireWindow, Retention } from "../src/engine/retention.js";
import { PostgresStore } from "../src/store/postgres/postgres-store.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import type { Store } from "../src/store/store.js";
import { makeHarness, ORDER_INPUT } from "../test/scheduler/harness.js";

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const N = Number(args.find((a, i) => /^\d+$/.test(a) && !args[i - 1]?.startsWith("--")) ?? 100_000);
const IDLE_ROUNDS = Number(flag("--rounds") ?? 300);
/** How often the 100 schedules come due (wall time), `--period`. Default 250 ms: 400 fires/s. */
const PERIOD_MS = Number(flag("--period") ?? 250);
const PRUNE_ONLY = args.includes("--prune-only");
/** `--no-window`: retention does not ask when the next fire is due (the comparison run). */
const NO_WINDOW = args.includes("--no-window");
/** `--prune-rounds R`: stop the pass after R rounds while pruning (a sample, when the whole pass is too long). */
const PRUNE_ROUNDS = Number(flag("--prune-rounds") ?? Number.POSITIVE_INFINITY);
/**
 * `--alternate K`: while the pass runs, blocks of K rounds with retention's batches alternate with
 * blocks of K rounds where retention is held (its window never clears). Idle-before and idle-after
 * are minutes apart, and on a shared machine the load moves more than 10 % in that time; the held
 * blocks are the same store, the same minutes and the same load as the pruning ones.
 */
const ALTERNATE = Number(flag("--alternate") ?? 0);
/** `--cache-mb M`: SQLite's page cache (the server's `--sqlite-cache-mb`; default 4). */
const CACHE_MB = flag("--cache-mb");
/** `--rest-factor F`: Retention's restFactor (how long it rests after a batch, in batch lengths). */
const REST = flag("--rest-factor");
/** Rounds due this soon after a retention batch ended are reported apart (the batches' aftermath). */
const AFTERMATH_MS = 50;
const DIALECTS = (flag("--dialect") ?? "sqlite,postgres").split(",");
const PG_URL = process.env.ORBIT_TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";
const DAY_MS = 86_400_000;

const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");
const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;

interface Sizes {
  describe(): Promise<string>;
  /** After seeding: what the database's own maintenance would have done by now. */
  analyze?(): Promise<void>;
  /** Seeded executions not yet pruned, read on a connection of its own. */
  remaining(): Promise<number>;
  /** Reclaims the freed space the way the docs tell the user to; returns what it did. */
  reclaim(): Promise<string>;
  /** Starts the database's background maintenance where the server has it off. */
  maintain?(): Promise<Maintenance>;
}

async function seed(store: Store, t0: number): Promise<void> {
  for (let from = 0; from < N; from += 5000) {
    const batch: Execution[] = [];
    for (let i = from; i < Math.min(N, from + 5000); i++) {
      const at = t0 - 90 * DAY_MS + i;
      batch.push({
        executionId: `old-${i}`,
        workflow: "OrderProcessing",
        version: "1.0.0",
        input: ORDER_INPUT,
        status: "COMPLETED",
        scheduleId: null,
        trigger: null,
        result: { ok: true },
        error: null,
        cancelReason: null,
        traceParent: null,
        concurrencyKey: null,
        run: 1,
        attempt: 1,
        createdMs: at,
        startedMs: at,
        endedMs: at,
      } as Execution);
    }
    await store.transaction(async (tx) => {
      await tx.insertExecutions(batch);
      await tx.insertCreatedEvents(batch);
    });
  }
}

function stats(ms: number[]): string {
  const sorted = [...ms].sort((a, b) => a - b);
  const q = (p: number): string => (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0).toFixed(1);
  return `p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${q(1)} ms (${ms.length} rounds)`;
}

async function run(dialect: string, store: Store, sizes: Sizes): Promise<void> {
  const h = await makeHarness(store, { now: "2026-11-15T00:00:00.000Z" });
  const seeding = performance.now();
  await seed(store, h.clock.now());
  for (let i = 0; i < 100; i++) {
    await h.scheduler.schedules.create({
      schedule_id: `s${i}`,
      workflow: "OrderProcessing",
      interval: "1m",
      overlap: "allow",
      input: ORDER_INPUT,
    });
  }
  await sizes.analyze?.();
  console.log(
    `\n${dialect}: N=${N} ended executions seeded in ${((performance.now() - seeding) / 1000).toFixed(0)} s; ${await sizes.describe()}; load ${load()}`,
  );
  // Paced like a server's firing loop: the 100 schedules come due every PERIOD_MS of wall time, and
  // a round's lag is from that tick to the end of its fireDue(), so time spent waiting behind a
  // retention batch (or a timer delayed by one: better-sqlite3 blocks the event loop) counts.
  const maintenance = await sizes.maintain?.();
  /** Whether a VACUUM ran during the last round (PostgreSQL with emulated autovacuum). */
  let roundVacuum = false;
  const quiet: number[] = [];
  /** The rounds no VACUUM overlapped, when there was one. */
  const quietStats = (all: number[]): string =>
    maintenance && quiet.length < all.length ? `; without a VACUUM running ${stats(quiet)}` : "";
  const timed = async (into: number[]): Promise<void> => {
    const lag = await round();
    into.push(lag);
    if (!roundVacuum) quiet.push(lag);
  };
  let next = performance.now() + PERIOD_MS;
  let inRound = false;
  const roundEnded = new Set<() => void>();
  const round = async (): Promise<number> => {
    const due = next;
    const wait = due - performance.now();
    await new Promise((resolve) => (wait > 0 ? setTimeout(resolve, wait) : setImmediate(resolve)));
    inRound = true;
    roundVacuum = maintenance?.busy() ?? false;
    h.clock.advance(60_000);
    await h.scheduler.loop.fireDue();
    const lag = performance.now() - due;
    roundVacuum ||= maintenance?.busy() ?? false;
    next = Math.max(due + PERIOD_MS, performance.now() - PERIOD_MS);
    inRound = false;
    for (const done of [...roundEnded]) done();
    return lag;
  };
  // What SchedulerLoop.clearFor answers a server's retention, from this bench's own pacing (it calls
  // fireDue() on wall-time ticks instead of running the loop, whose clock here is a manual one):
  // clear when no round runs and the next tick is more than `ms` away, else after that round.
  let pacing = false;
  /** Retention waits while this is true (`--alternate`'s held blocks). */
  let held = false;
  const fires: FireWindow = {
    async clearFor(ms, signal) {
      while (pacing && !signal.aborted && (held || inRound || next - performance.now() <= ms)) {
        await new Promise<void>((resolve) => {
          const done = (): void => {
            roundEnded.delete(done);
            signal.removeEventListener("abort", done);
            resolve();
          };
          roundEnded.add(done);
          signal.addEventListener("abort", done, { once: true });
        });
      }
    },
  };
  const idle = async (label: string): Promise<void> => {
    const ms: number[] = [];
    quiet.length = 0;
    for (let r = 0; r < IDLE_ROUNDS; r++) await timed(ms);
    console.log(`${label}: fire lag of 100 schedules ${stats(ms)}${quietStats(ms)}; load ${load()}`);
  };

  await idle("idle, before      ");
  // When each of retention's batches ended (its commit): the rounds are then split by how soon
  // after a batch they came due, which says whether the tail is the batches' aftermath.
  const batchEnds: number[] = [];
  const timedStore = new Proxy(store, {
    get(target, key, receiver) {
      if (key !== "transaction") return Reflect.get(target, key, receiver);
      return async (...a: Parameters<Store["transaction"]>) => {
        try {
          return await target.transaction(...a);
        } finally {
          batchEnds.push(performance.now());
        }
      };
    },
  }) as Store;
  const retention = new Retention({
    store: timedStore,
    ...(REST !== undefined ? { restFactor: Number(REST) } : {}),
    clock: h.clock,
    maxAgeMs: 30 * DAY_MS,
    ...(NO_WINDOW || PRUNE_ONLY ? {} : { fires }),
  });
  pacing = true;
  const started = performance.now();
  let done = false;
  const pruning = retention.runOnce().then((n) => {
    done = true;
    return n;
  });
  // Rounds for as long as the pass runs (and at least as many as idle), so every batch meets fires.
  const during: number[] = [];
  /** `--alternate`: the rounds of the held blocks (`during` then has the pruning blocks' only). */
  const heldRounds: number[] = [];
  /** Pruning rounds that came due within AFTERMATH_MS of a batch's commit, and the others. */
  const soonAfter: number[] = [];
  const later: number[] = [];
  let roundNo = 0;
  quiet.length = 0;
  let report = performance.now() + 60_000;
  let minuteFrom = 0;
  if (PRUNE_ONLY) await pruning;
  while (!PRUNE_ONLY && (!done || during.length < IDLE_ROUNDS) && during.length < PRUNE_ROUNDS) {
    if (ALTERNATE > 0) {
      // Alternated, only rounds of the pass itself count: rounds after it would be "pruning" rounds
      // where nothing prunes, at the end of the run, when the store is largest and fires slowest.
      if (done) break;
      held = Math.floor(roundNo / ALTERNATE) % 2 === 1;
      roundNo++;
      if (held) {
        heldRounds.push(await round());
        continue;
      }
    }
    const due = next;
    await timed(during);
    // The last batch that ended before this round came due (one that ended after waited for it).
    const gap = due - (batchEnds.findLast((end) => end <= due) ?? Number.NEGATIVE_INFINITY);
    (gap < AFTERMATH_MS ? soonAfter : later).push(during.at(-1) as number);
    if (performance.now() > report && !done) {
      report += 60_000;
      const s = (performance.now() - started) / 1000;
      const left = await sizes.remaining();
      console.log(
        `  ${s.toFixed(0)} s: ${N - left} pruned (${Math.round((N - left) / s)}/s); fire lag so far ${stats(during)}; this minute ${stats(during.slice(minuteFrom))}; load ${load()}`,
      );
      minuteFrom = during.length;
    }
  }
  pacing = false;
  held = false;
  for (const wake of [...roundEnded]) wake();
  if (!done) await retention.close();
  const deleted = done ? await pruning : N - (await sizes.remaining());
  if (!done) await pruning;
  const seconds = (performance.now() - started) / 1000;
  if (!PRUNE_ONLY)
    console.log(`while pruning     : fire lag of 100 schedules ${stats(during)}${quietStats(during)}; load ${load()}`);
  if (!PRUNE_ONLY)
    console.log(`  due within ${AFTERMATH_MS} ms of a batch's end: ${stats(soonAfter)}; later: ${stats(later)}`);
  if (heldRounds.length > 0)
    console.log(`held, same minutes: fire lag of 100 schedules ${stats(heldRounds)}; blocks of ${ALTERNATE} rounds`);
  console.log(
    `pruned ${deleted} executions (+ ${deleted} events) in ${seconds.toFixed(1)} s = ${Math.round(deleted / seconds)} executions/s; load ${load()}`,
  );
  await idle("idle, after       ");
  if (maintenance) console.log(await maintenance.stop());
  console.log(`after the prune: ${await sizes.describe()}`);
  console.log(`reclaim: ${await sizes.reclaim()}`);
  console.log(`after reclaiming: ${await sizes.describe()}`);
}

async function sqlite(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "orbit-bench-retention-"));
  const file = join(dir, "orbit.db");
  const store = new SqliteStore({ dataDir: dir, ...(CACHE_MB !== undefined ? { cacheMb: Number(CACHE_MB) } : {}) });
  await store.open();
  const pragmas = (): { pages: number; free: number; size: number; autoVacuum: number } => {
    const db = new Database(file, { readonly: true });
    try {
      return {
        pages: db.pragma("page_count", { simple: true }) as number,
        free: db.pragma("freelist_count", { simple: true }) as number,
        size: db.pragma("page_size", { simple: true }) as number,
        autoVacuum: db.pragma("auto_vacuum", { simple: true }) as number,
      };
    } finally {
      db.close();
    }
  };
  const sizes: Sizes = {
    async describe() {
      const p = pragmas();
      const wal = statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0;
      return `database ${mb(p.pages * p.size)} of which ${mb(p.free * p.size)} free pages (orbit.db file ${mb(statSync(file).size)}, -wal ${mb(wal)}), auto_vacuum=${p.autoVacuum}`;
    },
    async remaining() {
      const db = new Database(file, { readonly: true });
      try {
        return (
          db.prepare("SELECT COUNT(*) AS n FROM orbit_executions WHERE execution_id LIKE 'old-%'").get() as {
            n: number;
          }
        ).n;
      } finally {
        db.close();
      }
    },
    async reclaim() {
      // What docs/operations.md § Retention tells the user: stop the server, VACUUM the file.
      await store.close();
      const started = performance.now();
      const db = new Database(file);
      db.exec("VACUUM");
      db.pragma("wal_checkpoint(TRUNCATE)");
      db.close();
      return `server stopped, VACUUM took ${((performance.now() - started) / 1000).toFixed(1)} s`;
    },
  };
  try {
    await run("SQLite", store, sizes);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgres(): Promise<void> {
  const admin = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (error) {
    console.log(`\nPostgreSQL skipped: cannot connect to ${PG_URL} (${(error as Error).message})`);
    return;
  }
  const schema = `orbit_bench_retention_${randomBytes(4).toString("hex")}`;
  await admin.query(`CREATE SCHEMA ${schema}`);
  const store = new PostgresStore({ connectionString: PG_URL, searchPath: schema });
  const tables = ["orbit_executions", "orbit_execution_events", "orbit_worker_tasks"];
  const sizes: Sizes = {
    async describe() {
      const rows = await admin.query<{ t: string; total: string; live: string; dead: string }>(
        `SELECT c.relname AS t, pg_total_relation_size(c.oid) AS total,
                s.n_live_tup AS live, s.n_dead_tup AS dead
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
         WHERE n.nspname = $1 AND c.relname = ANY($2)`,
        [schema, tables],
      );
      return rows.rows.map((r) => `${r.t} ${mb(Number(r.total))} (live ${r.live}, dead ${r.dead})`).join(", ");
    },
    async analyze() {
      // Autovacuum analyzes a table that grew over months; a bulk load of 1M is not analyzed yet,
      // and without statistics the planner scans the events table for each batch's DELETE.
      for (const t of tables) await admin.query(`ANALYZE ${schema}.${t}`);
    },
    async remaining() {
      const r = await admin.query<{ n: string }>(
        `SELECT COUNT(*) AS n FROM ${schema}.orbit_executions WHERE execution_id LIKE 'old-%'`,
      );
      return Number(r.rows[0]?.n ?? 0);
    },
    async reclaim() {
      // Plain VACUUM (what autovacuum does) makes the space reusable; only VACUUM FULL returns it.
      const parts: string[] = [];
      for (const sql of ["VACUUM", "VACUUM FULL"]) {
        const started = performance.now();
        for (const t of tables) await admin.query(`${sql} ${schema}.${t}`);
        const s = ((performance.now() - started) / 1000).toFixed(1);
        parts.push(`${sql} ${s} s, then ${await sizes.describe()}`);
      }
      return parts.join("; ");
    },
  };
  try {
    await store.open();
    await run("PostgreSQL", store, {
      describe: sizes.describe,
      remaining: sizes.remaining,
      analyze: sizes.analyze,
      maintain: () => autovacuum(schema),
      reclaim: async () => {
        await store.close();
        return sizes.reclaim();
      },
    });
  } finally {
    await store.close();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}

/**
 * What autovacuum does, where the server runs with `autovacuum = off` (this machine's test server
 * does): every 15 s, each table of the schema past autovacuum's default thresholds (dead tuples >
 * 50 + 20 % of live; changes since analyze > 50 + 10 %) is vacuumed or analyzed on a connection of
 * its own, throttled like autovacuum (vacuum_cost_delay 2 ms, limit 200). Without it the fires'
 * own dead rows pile up (175,000 dead tuples of 100 schedules after 7 minutes) and the fire lag
 * grows with time whatever retention does.
 */
interface Maintenance {
  /** Is a VACUUM running now? */
  busy(): boolean;
  /** Stops it; says what it did. */
  stop(): Promise<string>;
}

async function autovacuum(schema: string): Promise<Maintenance> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  const on = (await c.query<{ autovacuum: string }>("SHOW autovacuum")).rows[0]?.autovacuum === "on";
  if (on) {
    await c.end();
    return { busy: () => false, stop: async () => "autovacuum: the server's own (on)" };
  }
  await c.query("SET vacuum_cost_delay = '2ms'");
  await c.query("SET vacuum_cost_limit = 200");
  const done: Record<string, { n: number; ms: number }> = {};
  let stopped = false;
  let vacuuming = false;
  const pass = async (): Promise<void> => {
    const rows = await c.query<{ t: string; live: string; dead: string; mod: string }>(
      `SELECT relname AS t, n_live_tup AS live, n_dead_tup AS dead, n_mod_since_analyze AS mod
       FROM pg_stat_user_tables WHERE schemaname = $1`,
      [schema],
    );
    for (const r of rows.rows) {
      const live = Number(r.live);
      const what =
        Number(r.dead) > 50 + 0.2 * live ? "VACUUM ANALYZE" : Number(r.mod) > 50 + 0.1 * live ? "ANALYZE" : null;
      if (what === null || stopped) continue;
      const started = performance.now();
      vacuuming = what !== "ANALYZE";
      await c.query(`${what} ${schema}.${r.t}`);
      vacuuming = false;
      const key = `${what} ${r.t}`;
      done[key] = { n: (done[key]?.n ?? 0) + 1, ms: (done[key]?.ms ?? 0) + performance.now() - started };
    }
  };
  const loop = (async () => {
    while (!stopped) {
      await pass();
      for (let i = 0; i < 150 && !stopped; i++) await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    busy: () => vacuuming,
    async stop() {
      stopped = true;
      await loop;
      await c.end();
      const list = Object.entries(done).map(([k, v]) => `${k} ×${v.n} (${(v.ms / 1000).toFixed(1)} s)`);
      return `autovacuum off on this server; emulated: ${list.join(", ") || "nothing due"}`;
    },
  };
}

console.log(
  `bench:retention N=${N}, 100 schedules due every ${PERIOD_MS} ms, ${IDLE_ROUNDS} idle rounds, ${DIALECTS.join(" + ")}; load ${load()}`,
);
if (DIALECTS.includes("sqlite")) await sqlite();
if (DIALECTS.includes("postgres")) await postgres();
