/**
 * `npm run bench:e2e`: from an occurrence's instant to the user's handler, side by side (docs/benchmarks.md
 * § End to end). For each system: S per-minute cron schedules (`* * * * *`), a no-op handler that
 * records when it starts, lag = handler start − the occurrence's nominal instant, over M measured
 * minutes; misses (occurrences whose handler never started) and doubles (started twice) counted;
 * the RSS of every process of the system sampled each second. Systems run one after another in one
 * run, each in fresh child processes, so that the rows of one run can be compared.
 *
 *   npm run bench:e2e -- --schedules 1000 --minutes 3 --systems orbit-sqlite,bullmq
 *   npm run bench:e2e -- --schedules 1000 --cron '* * * * * *' --seconds 60 --systems orbit-sqlite,bullmq
 *
 * The children run compiled (plain node on the tree's dist, built when stale; e2e-compile.ts) unless
 * `--run tsx`. BENCH_MEM=1 prints each child's memory at its largest RSS, BENCH_HEAPSNAP=dir writes
 * a heap snapshot of each when stopped, BENCH_CHILD_ARGS adds node flags (e2e-child.ts).
 *
 * Systems: orbit-sqlite, orbit-pg (Orbit server + worker process, default worker settings); a
 * suffix -c<N> sets the worker's concurrency (orbit-sqlite-c10, orbit-pg-c200; -c0: no worker, for the
 * fire lag of a server without worker traffic), +normal the
 * SQLite server's synchronous=NORMAL (orbit-sqlite-c200+normal) and +semiN node's
 * --max-semi-space-size=N for every process of the system (orbit-sqlite+semi4, bullmq+semi4), +cacheN
 * the SQLite server's page cache of N MB (orbit-sqlite+cache64); bullmq, bullmq-c100 (Redis at BENCH_REDIS_URL, default
 * redis://127.0.0.1:6379; skipped with a message when it does not answer within 3 s), graphile, graphile-c100 (graphile-worker on PostgreSQL). PostgreSQL is
 * ORBIT_TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), in throwaway schemas.
 */
import { type ChildProcess, fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { OrbitClient } from "../src/client/client.js";
import type { ChildSettings, Start } from "./lib/e2e-child.js";
import { compiledChildren } from "./lib/e2e-compile.js";
import { seedHistory } from "./lib/e2e-history.js";
import { type Phases, readPhases } from "./lib/e2e-phases.js";
import { type MinuteStats, pct, summarise } from "./lib/e2e-stats.js";
import { seededShuffle } from "./lib/fire-phases.js";
import { adminSql } from "./lib/pg-admin.js";
import { redisUnreachable } from "./lib/redis-check.js";

const { values: args } = parseArgs({
  options: {
    schedules: { type: "string", default: process.env.BENCH_SCHEDULES ?? "1000" },
    minutes: { type: "string", default: process.env.BENCH_MINUTES ?? "3" },
    systems: {
      type: "string",
      default:
        process.env.BENCH_SYSTEMS ??
        "orbit-sqlite,orbit-sqlite-c100,orbit-pg,orbit-pg-c100,bullmq,bullmq-c100,graphile",
    },
    /** The schedules' cron; `* * * * * *` (every second) with --seconds. BullMQ takes it too; graphile-worker only per-minute. */
    cron: { type: "string", default: "* * * * *" },
    /** Measure this many 1-second periods instead of --minutes (with a per-second --cron). */
    seconds: { type: "string", default: "" },
    "sqlite-synchronous": { type: "string", default: "" },
    /** A checkout of another commit (its node_modules beside it): systems named `before:<system>` run its code. */
    before: { type: "string", default: "" },
    /**
     * `compiled` (default): the children run as plain `node` on the tree's `dist` (built when stale),
     * as a deployment runs; `tsx`: from the TypeScript sources under `--import tsx`, whose loader
     * adds about 35 MB to every process's RSS (every RSS figure before 2026-12-03 07:00 UTC).
     */
    run: { type: "string", default: "compiled" },
    /**
     * The order Orbit's schedules are created in: `shuffled` (default) creates s0 … s<S-1> in a fixed
     * pseudo-random order, as schedules made over time by many callers are, so a batch of due
     * schedules (read in id order) lies scattered over the table; `sorted` creates them in id order
     * (every figure before 2026-12-03 21:00 UTC), which packs each batch into neighbouring pages.
     */
    "create-order": { type: "string", default: "shuffled" },
    /**
     * Orbit SQLite only: N earlier minutes of completed executions for every schedule before the
     * measured minutes (bench/lib/e2e-history.ts), as a server that has run N minutes has; 0: a
     * fresh database (every figure before Run N).
     */
    history: { type: "string", default: "0" },
  },
});
const S = Number(args.schedules);
const CRON = args.cron ?? "* * * * *";
// The measured periods: --seconds N one-second periods, else --minutes M minutes.
const PERIOD_MS = args.seconds ? 1000 : 60_000;
const PERIODS = args.seconds ? Number(args.seconds) : Number(args.minutes);
if (args.seconds && CRON.trim().split(/\s+/).length !== 6) throw new Error("--seconds needs a per-second --cron");
const PG_URL = process.env.ORBIT_TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = process.env.BENCH_REDIS_URL || "redis://127.0.0.1:6379";
if (args.run !== "compiled" && args.run !== "tsx") throw new Error("--run is compiled or tsx");
const COMPILED = args.run === "compiled";
/** The folder of a tree's children: its bench/lib (tsx) or their compiled copies, made once per tree. */
const childDirs = new Map<string, string>();
function childrenOf(tree: string): string {
  if (!COMPILED) return join(tree, "bench", "lib");
  const known = childDirs.get(tree);
  if (known) return known;
  const dir = compiledChildren(tree);
  childDirs.set(tree, dir);
  return dir;
}
const ROOT = new URL("..", import.meta.url).pathname;

interface Proc {
  child: ChildProcess;
  label: string;
  rssMaxMb: number;
}

interface Row {
  system: string;
  createMs: number;
  minutes: MinuteStats[];
  p50: number;
  p99: number;
  max: number;
  misses: number;
  doubles: number;
  rss: string;
  /** CPU time of the system's processes over the measured periods, per handler started (ms; server + worker). */
  cpu: string;
  load: string;
  /** Orbit only: fire and lease lags read from the server's database. */
  phases: Phases | null;
}

function spawn(
  file: string,
  label: string,
  s: ChildSettings,
  onStarts: (rows: Start[]) => void,
  { dir = childrenOf(ROOT), nodeArgs = [] }: { dir?: string; nodeArgs?: string[] } = {},
): Proc {
  // BENCH_CPU_PROF=dir: a V8 CPU profile of every child, to see where the time goes.
  const prof = process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  // BENCH_CHILD_ARGS: more node flags for every child (e.g. `--max-semi-space-size=4`).
  const extra = (process.env.BENCH_CHILD_ARGS ?? "").split(/\s+/).filter(Boolean);
  const child = fork(join(dir, COMPILED ? file.replace(/\.ts$/, ".js") : file), [JSON.stringify(s)], {
    execArgv: [...(COMPILED ? [] : ["--import", "tsx"]), ...prof, ...nodeArgs, ...extra],
    stdio: "inherit",
  });
  child.on("message", (m: { type?: string; rows?: Start[] }) => {
    if (m.type === "starts" && m.rows) onStarts(m.rows);
  });
  return { child, label, rssMaxMb: 0 };
}

function message<T>(p: Proc, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const on = (m: { type?: string }) => {
      if (m.type === type) {
        p.child.off("message", on);
        resolve(m as T);
      }
    };
    p.child.on("message", on);
    p.child.once("exit", (code) => reject(new Error(`${p.label} exited (${code}) before "${type}"`)));
  });
}

function rssMb(pid: number | undefined): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** User + system CPU time of a process so far, ms (/proc/<pid>/stat, clock ticks of 10 ms). */
function cpuMs(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

async function stop(p: Proc): Promise<void> {
  if (p.child.exitCode !== null) return;
  const exited = new Promise((resolve) => p.child.once("exit", resolve));
  p.child.send({ type: "stop" });
  const kill = setTimeout(() => p.child.kill("SIGKILL"), 15_000);
  await exited;
  clearTimeout(kill);
}

const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");

async function runSystem(named: string): Promise<Row> {
  // `before:<system>`: the same system from the --before checkout, so that before and after share a run.
  const isBefore = named.startsWith("before:");
  if (isBefore && !args.before) throw new Error("before:… systems need --before <checkout>");
  const system = named.replace(/^before:/, "");
  const childDir = childrenOf(isBefore ? (args.before ?? "") : ROOT);
  // `<kind>[-c<concurrency>][+normal][+semiN]`: +normal runs the SQLite server with synchronous=NORMAL,
  // +semiN every process of the system with node's --max-semi-space-size=N (MB; docs/operations.md § Sizing).
  const [base0, ...suffixes] = system.split("+");
  const normal = suffixes.includes("normal");
  const semi = suffixes.find((x) => /^semi\d+$/.test(x));
  const nodeArgs = semi ? [`--max-semi-space-size=${semi.slice(4)}`] : [];
  // +cacheN: the SQLite server's page cache of N MB (--sqlite-cache-mb).
  const cache = suffixes.find((x) => /^cache\d+$/.test(x));
  const [kind, variant] = (base0 ?? "").split("-c") as [string, string | undefined];
  const concurrency = variant ? Number(variant) : null;
  const starts: Start[] = [];
  const onStarts = (rows: Start[]) => {
    for (const r of rows) starts.push(r);
  };
  const procs: Proc[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  const loadBefore = load();
  let createMs = 0;
  let phasesFrom: Parameters<typeof readPhases>[0] | null = null;
  const sampler = setInterval(() => {
    for (const p of procs) p.rssMaxMb = Math.max(p.rssMaxMb, rssMb(p.child.pid));
  }, 1000);
  try {
    if (kind === "orbit-sqlite" || kind === "orbit-pg") {
      let target: string;
      let schema: string | undefined;
      if (kind === "orbit-pg") {
        target = PG_URL;
        schema = `orbit_e2e_${randomBytes(4).toString("hex")}`;
        await adminSql(`CREATE SCHEMA ${schema}`);
        cleanups.push(() => adminSql(`DROP SCHEMA ${schema} CASCADE`));
      } else {
        target = mkdtempSync(join(tmpdir(), "orbit-e2e-"));
        // BENCH_KEEP=1 keeps the data folder, to read the batches' sizes and times from the database.
        const keep = Boolean(process.env.BENCH_KEEP);
        cleanups.push(async () =>
          keep ? console.error(`kept ${target}`) : rmSync(target, { recursive: true, force: true }),
        );
      }
      phasesFrom = schema ? { url: PG_URL, schema } : { sqliteFile: join(target, "orbit.db") };
      const sync = normal || args["sqlite-synchronous"] === "normal" ? "normal" : undefined;
      const base = { system, schedules: S, concurrency, target, ...(schema ? { schema } : {}) };
      const server = spawn(
        "e2e-orbit-server.ts",
        "server",
        {
          ...base,
          ...(sync ? { synchronous: sync } : {}),
          ...(cache ? { sqliteCacheMb: Number(cache.slice(5)) } : {}),
        },
        onStarts,
        { dir: childDir, nodeArgs },
      );
      procs.push(server);
      const { url } = await message<{ url: string }>(server, "ready");
      const client = new OrbitClient({ baseUrl: url });
      await client.registerWorkflow({ name: "Noop", version: "1.0.0" });
      const t0 = performance.now();
      const order = creationOrder(S, args["create-order"]);
      for (let i = 0; i < S; i += 1000) {
        const batch = [];
        for (let j = i; j < Math.min(S, i + 1000); j++) {
          batch.push({ schedule_id: `s${order[j]}`, workflow: "Noop", cron: CRON, timezone: "UTC" });
        }
        await client.createSchedules(batch);
      }
      createMs = performance.now() - t0;
      const history = Number(args.history);
      if (history > 0) {
        if (kind !== "orbit-sqlite") throw new Error("--history is for orbit-sqlite only");
        seedHistory(
          join(target, "orbit.db"),
          order.map((i) => `s${i}`),
          history,
          Date.now(),
        );
      }
      // -c0: no worker at all, to read the fire lag of an idle server beside a busy one.
      if (concurrency !== 0) {
        const worker = spawn("e2e-orbit-worker.ts", "worker", { ...base, server: url }, onStarts, {
          dir: childDir,
          nodeArgs,
        });
        procs.push(worker);
        await message(worker, "ready");
      }
    } else if (kind === "bullmq") {
      const p = spawn(
        "e2e-bullmq.ts",
        "bullmq",
        { system, schedules: S, concurrency, target: REDIS_URL, cron: CRON },
        onStarts,
        { nodeArgs },
      );
      procs.push(p);
      createMs = (await message<{ createMs: number }>(p, "ready")).createMs;
    } else if (kind === "graphile") {
      if (CRON !== "* * * * *") throw new Error("graphile-worker's crontab is per minute only");
      const schema = `graphile_e2e_${randomBytes(4).toString("hex")}`;
      cleanups.push(() => adminSql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
      const p = spawn(
        "e2e-graphile.ts",
        "graphile",
        { system, schedules: S, concurrency, target: PG_URL, schema },
        onStarts,
        { nodeArgs },
      );
      procs.push(p);
      createMs = (await message<{ createMs: number }>(p, "ready")).createMs;
    } else {
      throw new Error(`unknown system ${system}`);
    }

    // The measured periods: the first whole period starting at least 5 s from now, and the next ones.
    const first = Math.ceil((Date.now() + 5000) / PERIOD_MS) * PERIOD_MS;
    const nominals = Array.from({ length: PERIODS }, (_, i) => first + i * PERIOD_MS);
    const last = nominals[nominals.length - 1]!;
    const wanted = new Set(nominals);
    const complete = (): boolean => {
      let n = 0;
      for (const r of starts) if (wanted.has(r[1])) n++;
      return n >= S * PERIODS;
    };
    console.error(
      `${system}: created ${S} schedules in ${Math.round(createMs)} ms; measuring ${PERIODS} period(s) of ${PERIOD_MS} ms from ${new Date(first).toISOString()}`,
    );
    // CPU from here (set-up done, the processes idle until the first period) to the end of the wait.
    const cpuBefore = procs.map((p) => cpuMs(p.child.pid));
    // Until every measured occurrence started, or 60 s after the last measured period (10 s for seconds).
    const until = last + (concurrency === 0 ? 5_000 : PERIOD_MS === 1000 ? 10_000 : 60_000);
    while (Date.now() < until && !(Date.now() > last && complete())) {
      await new Promise((r) => setTimeout(r, 500));
    }
    const sum = summarise(starts, nominals, S);
    const rss = procs.map((p) => `${Math.round(p.rssMaxMb)}`).join(" + ");
    const handlers = sum.minutes.reduce((n, m) => n + m.started, 0);
    const cpu = procs
      .map((p, i) => (handlers ? ((cpuMs(p.child.pid) - cpuBefore[i]!) / handlers).toFixed(2) : "–"))
      .join(" + ");
    const loadAfter = load();
    const phases = phasesFrom ? await readPhases(phasesFrom, nominals).catch(() => null) : null;
    return { system: named, createMs, ...sum, rss, cpu, load: `${loadBefore} → ${loadAfter}`, phases };
  } finally {
    clearInterval(sampler);
    for (const p of [...procs].reverse()) await stop(p);
    for (const c of cleanups) await c().catch((err) => console.error(err));
  }
}

const s1 = (ms: number): string => (ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`);

console.log(
  `bench:e2e  S=${S}, cron ${CRON}, ${PERIODS} measured ${PERIOD_MS === 1000 ? "second" : "minute"}(s), children ${args.run}, node ${process.version}, load ${load()}`,
);
console.log(
  "lease lag = WorkflowTaskStarted − nominal; a task handed to an already waiting poll is leased in the start transaction with the fire's `now`, so its lease lag is not when the worker received it (the handler lag is)",
);
console.log(
  "| system | S | create | p50 lag | p99 lag | all handlers started, per period | misses | doubles | executions/s per minute | fire lag p50 / p99 | lease lag p50 / p99 | CPU ms per execution | RSS MB | load (1/5/15 min) before → after |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
// Fire lag: the ledger's started row − nominal; lease lag: WorkflowTaskStarted − nominal (e2e-phases.ts),
// which for a task handed to a waiting poll is stamped in the start transaction (see the note printed).
const phase = (lags: number[] | undefined): string => {
  if (!lags?.length) return "–";
  const sorted = [...lags].sort((a, b) => a - b);
  return `${s1(pct(sorted, 50))} / ${s1(pct(sorted, 99))}`;
};
for (const system of (args.systems ?? "").split(",").filter(Boolean)) {
  // BullMQ's connections retry for ever (maxRetriesPerRequest: null): ask Redis first, bounded.
  if (/^(before:)?bullmq/.test(system)) {
    const why = await redisUnreachable(REDIS_URL);
    if (why !== null) {
      console.log(`| ${system} | ${S} | skipped: Redis at ${REDIS_URL} unreachable (${why}); set BENCH_REDIS_URL |`);
      continue;
    }
  }
  try {
    const r = await runSystem(system);
    // Per-second runs have many periods: the worst one and how many were complete instead of each.
    const per =
      r.minutes.length <= 5
        ? r.minutes.map((m) => (m.started < S ? `${s1(m.maxLag)} (${m.started}/${S})` : s1(m.maxLag))).join(" / ")
        : `worst ${s1(Math.max(...r.minutes.map((m) => m.maxLag)))}; ${r.minutes.filter((m) => m.started === S).length} of ${r.minutes.length} complete`;
    // End-to-end executions/s of a minute's herd: its handlers started ÷ the last one's lag (fire included).
    const drain = r.minutes.filter((m) => m.maxLag > 0).map((m) => Math.round((m.started * 1000) / m.maxLag));
    console.log(
      `| ${r.system} | ${S} | ${s1(r.createMs)} | ${s1(r.p50)} | ${s1(r.p99)} | ${per} | ${r.misses} | ${r.doubles} | ${drain.length && PERIOD_MS === 60_000 ? drain.join(" / ") : "–"} | ${phase(r.phases?.fire)} | ${phase(r.phases?.lease)} | ${r.cpu} | ${r.rss} | ${r.load} |`,
    );
  } catch (err) {
    console.log(`| ${system} | ${S} | failed: ${(err as Error).message} |`);
    process.exitCode = 1;
  }
}

/** 0 … n-1 in id order (`sorted`) or in a fixed shuffled order (`shuffled`), the same every run. */
function creationOrder(n: number, how: string | undefined): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  if (how === "sorted") return order;
  if (how !== "shuffled") throw new Error(`--create-order is shuffled or sorted, not ${how}`);
  return seededShuffle(order);
}
