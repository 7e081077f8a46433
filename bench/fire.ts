/**
 * `npm run bench:fire [-- --quick] [-- --only sqlite|postgres]`: how late and how fast the scheduler
 * fires, on SQLite (temp file) and PostgreSQL (a throwaway schema; skipped with a message when
 * unreachable). See docs/benchmarks.md, "Firing".
 *
 *  (a) fire lag: steady interval schedules (~1,000 fires/s) on the real loop and the system clock;
 *  (b) a herd: many schedules due at one instant, fired with `loop.fireDue()` after a clock jump;
 *  (c) scale: a herd and a lag run among 20k / 100k / 1M stored schedules, with process memory.
 *
 * Reports, asserts nothing.
 */
import { cpus } from "node:os";
import { type Env, openPostgres, openSqlite } from "./lib/fire-env.js";
import {
  cronRows,
  HOUR_MS,
  herdRun,
  insertRaw,
  insertViaStore,
  lagRun,
  steadyRows,
  topOfHour,
} from "./lib/fire-phases.js";
import { int, memory, ms, table } from "./lib/fire-stats.js";
import { loadAverage } from "./lib/load.js";

const quick = process.argv.includes("--quick");
const onlyIndex = process.argv.indexOf("--only");
const only = onlyIndex >= 0 ? process.argv[onlyIndex + 1] : undefined;

const CONFIG = quick
  ? {
      steady: 2_000,
      intervalMs: 10_000,
      lagS: 8,
      scaleLagS: 6,
      herd: 10_000,
      scaleHerd: 2_000,
      sizes: [10_000, 50_000],
    }
  : {
      steady: 10_000,
      intervalMs: 10_000,
      lagS: 40,
      scaleLagS: 20,
      herd: 100_000,
      scaleHerd: 10_000,
      sizes: [20_000, 100_000, 1_000_000],
    };
const GOALS = { lagP99Ms: 50, herd: { sqlite: 5_000, postgres: 3_000 } as Record<string, number> };

interface ScaleRow {
  store: string;
  stored: number;
  fillPerS: number;
  herdPerS: number;
  herdFired: number;
  lagP50: number;
  lagP99: number;
  lagMax: number;
  commitP99: number;
  rssMb: number;
  heapMb: number;
}
interface HerdRow {
  store: string;
  due: number;
  insertPerS: number;
  fired: number;
  started: number;
  seconds: number;
  perS: number;
  rssMb: number;
  heapMb: number;
}
interface LagRow {
  store: string;
  steady: number;
  stored: number;
  seconds: number;
  fires: number;
  started: number;
  p50: number;
  p99: number;
  max: number;
  commitP50: number;
  commitP99: number;
  commitMax: number;
}

const lagRows: LagRow[] = [];
const herdRows: HerdRow[] = [];
const scaleRows: ScaleRow[] = [];
const log = (msg: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${msg}`);

/** (b): a fresh database holding only the herd, inserted through the Store API. */
async function herd(env: Env): Promise<void> {
  const at = topOfHour(Date.now()) + 5 * HOUR_MS;
  log(`${env.label}: inserting ${int(CONFIG.herd)} schedules due at the same instant (Store API)`);
  const insertPerS = await insertViaStore(env, cronRows("herd-", CONFIG.herd, at, Date.now()));
  log(`${env.label}: firing the herd`);
  const r = await herdRun(env, at);
  const m = memory();
  herdRows.push({
    store: env.label,
    due: CONFIG.herd,
    insertPerS,
    ...r,
    perS: r.firesPerSecond,
    rssMb: m.rssMb,
    heapMb: m.heapMb,
  });
  log(`${env.label}: herd ${int(r.fired)} fired in ${r.seconds.toFixed(1)} s = ${int(r.firesPerSecond)}/s`);
}

/** (a) and (c): per size, a lag run then a herd, among `size` stored schedules. */
async function scale(env: Env): Promise<void> {
  const base = topOfHour(Date.now());
  const idleAt = base + 40 * 24 * HOUR_MS;
  let idle = 0;
  for (const [k, size] of CONFIG.sizes.entries()) {
    const herdAt = base + (30 - k) * HOUR_MS; // later sizes use earlier hours: earlier herds stay not due
    const fill = size - CONFIG.scaleHerd - CONFIG.steady - (await env.raw.count());
    let fillPerS = Number.NaN;
    if (fill > 0) {
      log(`${env.label}: adding ${int(fill)} idle schedules`);
      fillPerS = await insertRaw(env, cronRows(`idle-${idle}-`, fill, idleAt, Date.now(), 24));
      idle++;
    }
    await insertRaw(env, cronRows(`herd${k}-`, CONFIG.scaleHerd, herdAt, Date.now()));
    const lagS = k === 0 ? CONFIG.lagS : CONFIG.scaleLagS;
    const start = Date.now() + 3000;
    await insertRaw(env, steadyRows(`steady${k}-`, CONFIG.steady, CONFIG.intervalMs, start));
    const stored = await env.raw.count();
    log(`${env.label}: ${int(stored)} stored; lag run of ${lagS} s with ${int(CONFIG.steady)} steady schedules`);
    const lag = await lagRun(env, start + lagS * 1000);
    await env.raw.retire(`steady${k}-`);
    if (k === 0) {
      lagRows.push({
        store: env.label,
        steady: CONFIG.steady,
        stored,
        seconds: lag.seconds,
        fires: lag.fires,
        started: lag.started,
        p50: lag.lag.p50,
        p99: lag.lag.p99,
        max: lag.lag.max,
        commitP50: lag.commit.p50,
        commitP99: lag.commit.p99,
        commitMax: lag.commit.max,
      });
    }
    log(
      `${env.label}: lag p50 ${ms(lag.lag.p50)} p99 ${ms(lag.lag.p99)} max ${ms(lag.lag.max)} ms; herd of ${int(CONFIG.scaleHerd)}`,
    );
    const h = await herdRun(env, herdAt);
    const m = memory();
    scaleRows.push({
      store: env.label,
      stored,
      fillPerS,
      herdPerS: h.firesPerSecond,
      herdFired: h.fired,
      lagP50: lag.lag.p50,
      lagP99: lag.lag.p99,
      lagMax: lag.lag.max,
      commitP99: lag.commit.p99,
      rssMb: m.rssMb,
      heapMb: m.heapMb,
    });
    log(
      `${env.label}: herd ${int(h.fired)} fired, ${int(h.firesPerSecond)}/s; rss ${int(m.rssMb)} MB heap ${int(m.heapMb)} MB`,
    );
  }
}

async function forDialect(label: string, open: () => Promise<Env | string>): Promise<void> {
  if (only !== undefined && only !== label) return;
  for (const phase of [herd, scale]) {
    const env = await open();
    if (typeof env === "string") {
      console.log(env);
      return;
    }
    try {
      await phase(env);
    } finally {
      await env.close();
    }
  }
}

const t0 = Date.now();
console.log(
  `bench:fire${quick ? " --quick" : ""}: Node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model.trim()}), load (1/5/15 min) before ${loadAverage()}`,
);
await forDialect("sqlite", openSqlite);
await forDialect("postgres", openPostgres);

const yes = (ok: boolean) => (ok ? "yes" : "NO");
console.log(
  `\n(a) Fire lag: ${int(CONFIG.steady)} interval schedules of ${CONFIG.intervalMs / 1000} s, overlap allow (~${int((CONFIG.steady * 1000) / CONFIG.intervalMs)} fires/s), real loop, system clock (ms)\n`,
);
console.log(
  table(
    [
      "store",
      "stored",
      "run s",
      "fires",
      "started",
      "lag p50",
      "lag p99",
      "lag max",
      "commit p50",
      "commit p99",
      "commit max",
      `p99 < ${GOALS.lagP99Ms}`,
    ],
    lagRows.map((r) => [
      r.store,
      int(r.stored),
      r.seconds.toFixed(0),
      int(r.fires),
      int(r.started),
      ms(r.p50),
      ms(r.p99),
      ms(r.max),
      ms(r.commitP50),
      ms(r.commitP99),
      ms(r.commitMax),
      yes(r.p99 < GOALS.lagP99Ms),
    ]),
  ),
);
console.log(`\n(b) Herd: schedules due at the same instant, fired by loop.fireDue() after a clock jump\n`);
console.log(
  table(
    [
      "store",
      "due",
      "insert/s (Store API)",
      "fired",
      "started",
      "seconds",
      "fires/s",
      "goal",
      "met",
      "rss MB",
      "heap MB",
    ],
    herdRows.map((r) => [
      r.store,
      int(r.due),
      int(r.insertPerS),
      int(r.fired),
      int(r.started),
      r.seconds.toFixed(1),
      int(r.perS),
      int(GOALS.herd[r.store] ?? 0),
      yes(r.perS >= (GOALS.herd[r.store] ?? 0)),
      int(r.rssMb),
      int(r.heapMb),
    ]),
  ),
);
console.log(
  `\n(c) Scale: a herd of ${int(CONFIG.scaleHerd)} and a lag run (${int(CONFIG.steady)} steady schedules) among N stored schedules\n`,
);
console.log(
  table(
    [
      "store",
      "stored",
      "herd fires/s",
      "lag p50",
      "lag p99",
      "lag max",
      "commit p99",
      "rss MB",
      "heap MB",
      "bulk insert/s",
    ],
    scaleRows.map((r) => [
      r.store,
      int(r.stored),
      int(r.herdPerS),
      ms(r.lagP50),
      ms(r.lagP99),
      ms(r.lagMax),
      ms(r.commitP99),
      int(r.rssMb),
      int(r.heapMb),
      Number.isNaN(r.fillPerS) ? "-" : int(r.fillPerS),
    ]),
  ),
);
console.log(`\ntotal ${((Date.now() - t0) / 1000).toFixed(0)} s; load (1/5/15 min) after ${loadAverage()}`);
