/**
 * `npm run bench:cron [-- --quick]`: next-occurrence throughput of Orbit's time engine, croner and
 * cron-parser on the same expression × zone matrix, in one process.
 *
 * Every cell chains next() calls from 2026-01-01T00:00:00Z, each call starting from the previous
 * result, so each call does real work; a chain that passes 2031-01-01 starts again from 2026-01-01
 * (same rule for all three). How far each library's chains get in the time given (Orbit's wrap the
 * whole range; the peers' frequent ones stay in early 2026, before any DST night) is printed after
 * the table. Orbit's timing is first primed over the whole range (its per-zone offset table is
 * built lazily, a year at a time), so no round times that build. Each library is
 * warmed up, then measured in interleaved rounds (Orbit, croner, cron-parser, Orbit, …) with
 * process.hrtime.bigint; a cell reports the median round. A library that throws, returns null or
 * returns an instant that is not later than the previous one is shown as a failure for that cell.
 */
import { cpus } from "node:os";
import type { Cron } from "croner";
import type { Timing } from "../src/time/timing.js";
import {
  BENCH_EXPRESSIONS,
  BENCH_ZONES,
  cronerJob,
  cronParserIterator,
  errorText,
  iso,
  orbitTiming,
  toCronerExpression,
} from "./lib/cron-libs.js";
import { loadAverage } from "./lib/load.js";

const START = Date.UTC(2026, 0, 1);
const WINDOW_END = Date.UTC(2031, 0, 1);

const quick = process.argv.includes("--quick");
/** Warm-up per library and cell, rounds per cell, and the length of one round (ms). */
const WARMUP_MS = quick ? 20 : 100;
const ROUNDS = quick ? 3 : 5;
const ROUND_MS = quick ? 25 : 100;
/** A batch between two clock reads lasts about this long. */
const BATCH_TARGET_NS = 1_000_000n;

const GOAL_MEDIAN = 10;
const GOAL_MIN = 3;

class ChainError extends Error {
  constructor(
    message: string,
    readonly after: number,
  ) {
    super(message);
  }
}

function checkStep(prev: number, next: number | null): number {
  if (next === null) throw new ChainError("returned no next occurrence", prev);
  if (!(next > prev)) throw new ChainError(`returned ${iso(next)}, not after the previous result`, prev);
  return next;
}

interface Runner {
  readonly name: string;
  /** The last result (or the start): where the chain stands. */
  readonly at: number;
  /** The latest instant the chain reached (WINDOW_END once it wrapped). */
  readonly reach: number;
  /** n chained next() calls; throws on a library failure. */
  run(n: number): void;
}

// One class per library, each with its own loop, so every hot loop calls a single implementation.

class OrbitRunner implements Runner {
  readonly name = "Orbit";
  at = START;
  reach = START;
  constructor(private readonly timing: Timing) {
    prime(timing);
  }
  run(n: number): void {
    const timing = this.timing;
    let t = this.at;
    let reach = this.reach;
    for (let i = 0; i < n; i++) {
      const next = checkStep(t, timing.nextAfter(t));
      if (next >= WINDOW_END) reach = WINDOW_END;
      t = next >= WINDOW_END ? START : next;
    }
    this.at = t;
    this.reach = Math.max(reach, t);
  }
}

/**
 * One call from the start of every month of the chain range (and past its end): the lazily built
 * per-zone offset table (src/time/zone.ts, one UTC year at a time) is complete before the warm-up,
 * as the docs say, instead of being built inside the first timed rounds of a zone's first cell.
 */
function prime(timing: Timing): void {
  for (let y = 2026; y <= 2031; y++) {
    for (let m = 0; m < 12; m++) timing.nextAfter(Date.UTC(y, m, 1));
  }
}

class CronerRunner implements Runner {
  readonly name = "croner";
  at = START;
  reach = START;
  private date = new Date(START);
  constructor(private readonly job: Cron) {}
  run(n: number): void {
    const job = this.job;
    let d = this.date;
    try {
      for (let i = 0; i < n; i++) {
        const next = job.nextRun(d);
        const ms = checkStep(d.getTime(), next === null ? null : next.getTime());
        if (ms >= WINDOW_END) this.reach = WINDOW_END;
        d = ms >= WINDOW_END ? new Date(START) : (next as Date);
      }
    } finally {
      this.date = d;
      this.at = d.getTime();
      this.reach = Math.max(this.reach, this.at);
    }
  }
}

class CronParserRunner implements Runner {
  readonly name = "cron-parser";
  at = START;
  reach = START;
  constructor(private readonly it: ReturnType<typeof cronParserIterator>) {}
  run(n: number): void {
    const it = this.it;
    let t = this.at;
    try {
      for (let i = 0; i < n; i++) {
        const next = checkStep(t, it.next().getTime());
        if (next >= WINDOW_END) {
          it.reset(new Date(START));
          t = START;
          this.reach = WINDOW_END;
        } else t = next;
      }
    } finally {
      this.at = t;
      this.reach = Math.max(this.reach, t);
    }
  }
}

interface Measured {
  opsPerSec: number | null;
  failure: string | null;
  /** The latest instant the chain reached (WINDOW_END: it covered the whole range). */
  reach: number;
}

/** Runs `runner` for about `ms` milliseconds in batches of `batch`; returns calls per second. */
function timed(runner: Runner, batch: number, ms: number): number {
  const budget = BigInt(ms) * 1_000_000n;
  let ops = 0;
  const t0 = process.hrtime.bigint();
  let elapsed = 0n;
  do {
    runner.run(batch);
    ops += batch;
    elapsed = process.hrtime.bigint() - t0;
  } while (elapsed < budget);
  return (ops * 1e9) / Number(elapsed);
}

/** Warms up and picks a batch size that lasts about BATCH_TARGET_NS. */
function warmUp(runner: Runner): number {
  let batch = 1;
  const t0 = process.hrtime.bigint();
  for (;;) {
    const b0 = process.hrtime.bigint();
    runner.run(batch);
    const now = process.hrtime.bigint();
    if (now - b0 < BATCH_TARGET_NS && batch < 1 << 20) batch *= 2;
    if (now - t0 >= BigInt(WARMUP_MS) * 1_000_000n) return batch;
  }
}

function failureText(runner: Runner, e: unknown): string {
  const after = e instanceof ChainError ? e.after : runner.at;
  return `${errorText(e)} (next after ${iso(after)})`;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

function measureCell(expr: string, zone: string): Measured[] {
  const makers: Array<() => Runner> = [
    () => new OrbitRunner(orbitTiming(expr, zone)),
    () => new CronerRunner(cronerJob(expr, zone)),
    () => new CronParserRunner(cronParserIterator(expr, zone, START)),
  ];
  const runners: Array<Runner | null> = [];
  /** Every runner made, kept after a failure too (for how far its chain got). */
  const made: Array<Runner | null> = [];
  const failures: Array<string | null> = [];
  const batches: number[] = [];
  const rounds: number[][] = [];
  for (const make of makers) {
    let runner: Runner | null = null;
    try {
      runner = make();
      batches.push(warmUp(runner));
      failures.push(null);
    } catch (e) {
      failures.push(runner === null ? `refused: ${errorText(e)}` : failureText(runner, e));
      runner = null;
      batches.push(0);
    }
    runners.push(runner);
    made.push(runner);
    rounds.push([]);
  }
  for (let r = 0; r < ROUNDS; r++) {
    runners.forEach((runner, i) => {
      if (runner === null) return;
      try {
        rounds[i]?.push(timed(runner, batches[i] as number, ROUND_MS));
      } catch (e) {
        failures[i] = failureText(runner, e);
        runners[i] = null;
      }
    });
  }
  return runners.map((_, i) => {
    const failure = failures[i] ?? null;
    const rs = rounds[i] as number[];
    const reach = made[i]?.reach ?? START;
    return { opsPerSec: failure === null && rs.length > 0 ? median(rs) : null, failure, reach };
  });
}

function formatOps(x: number): string {
  if (x >= 100_000) return `${Math.round(x / 1000).toLocaleString("en-US")}k`;
  return `${(x / 1000).toFixed(1)}k`;
}

function formatRatio(x: number): string {
  return x >= 100 ? `${Math.round(x)}×` : `${x.toFixed(1)}×`;
}

interface Row {
  expr: string;
  zone: string;
  results: Measured[];
  ratio: number | null;
}

function main(): void {
  const started = Date.now();
  const cpu = cpus();
  console.log("# bench:cron — next-occurrence throughput (calls/s)");
  console.log(
    `node ${process.version}, ${cpu.length} × ${cpu[0]?.model.trim() ?? "?"}, ${new Date().toISOString().slice(0, 10)}, ` +
      `${quick ? "--quick" : "full"} run: warm-up ${WARMUP_MS} ms, ${ROUNDS} rounds × ${ROUND_MS} ms per library and cell, median round`,
  );
  console.log(`chains start at ${iso(START)} and wrap at ${iso(WINDOW_END)}; Orbit uses dst: once`);
  console.log(`load (1/5/15 min) before: ${loadAverage()}`);
  const rewritten = BENCH_EXPRESSIONS.filter((e) => toCronerExpression(e) !== e);
  for (const e of rewritten) console.log(`croner gets \`${toCronerExpression(e)}\` for \`${e}\` (it refuses a/n)`);
  console.log("");

  const rows: Row[] = [];
  const notes: string[] = [];
  for (const expr of BENCH_EXPRESSIONS) {
    for (const zone of BENCH_ZONES) {
      const results = measureCell(expr, zone);
      const orbit = results[0]?.opsPerSec ?? null;
      const others = results.slice(1).flatMap((r) => (r.opsPerSec === null ? [] : [r.opsPerSec]));
      const ratio = orbit === null || others.length === 0 ? null : orbit / Math.max(...others);
      rows.push({ expr, zone, results, ratio });
    }
  }

  const names = ["Orbit", "croner", "cron-parser"];
  console.log("| case | Orbit ops/s | croner ops/s | cron-parser ops/s | Orbit / max(croner, cron-parser) |");
  console.log("| --- | ---: | ---: | ---: | ---: |");
  for (const row of rows) {
    const cells = row.results.map((r, i) => {
      if (r.failure === null) return formatOps(r.opsPerSec as number);
      notes.push(`${row.expr} · ${row.zone} · ${names[i]}: ${r.failure}`);
      return `FAIL [${notes.length}]`;
    });
    const ratio = row.ratio === null ? "n/a" : formatRatio(row.ratio);
    console.log(`| \`${row.expr}\` · ${row.zone} | ${cells.join(" | ")} | ${ratio} |`);
  }
  if (notes.length > 0) {
    console.log("");
    console.log("Failures (the ratio then uses the library that did not fail):");
    for (const [i, n] of notes.entries()) console.log(`- [${i + 1}] ${n}`);
  }

  // How far the chains got: Orbit's wrap the whole range; slower libraries' frequent cells do not.
  console.log("");
  console.log(`How far each chain got from ${iso(START)} (warm-up and rounds):`);
  for (const [i, name] of names.entries()) {
    const reaches = rows.map((r) => r.results[i]?.reach ?? START);
    const partial = reaches.filter((x) => x < WINDOW_END);
    const whole = reaches.length - partial.length;
    const rest = partial.length
      ? `; the other ${partial.length} stopped between ${iso(Math.min(...partial)).slice(0, 10)} and ${iso(Math.max(...partial)).slice(0, 10)}`
      : "";
    console.log(
      `- ${name}: the whole ${iso(START).slice(0, 4)}–2030 range in ${whole} of ${reaches.length} cells${rest}`,
    );
  }

  const rated = rows.filter((r) => r.ratio !== null);
  const ratios = rated.map((r) => r.ratio as number);
  console.log("");
  if (ratios.length === 0) {
    console.log("No cell has a ratio.");
    process.exitCode = 1;
    return;
  }
  const med = median(ratios);
  const worst = rated.reduce((a, b) => ((b.ratio as number) < (a.ratio as number) ? b : a));
  const min = worst.ratio as number;
  const below = rated.filter((r) => (r.ratio as number) < GOAL_MIN).length;
  console.log(
    `Summary: median ratio ${formatRatio(med)}, minimum ratio ${formatRatio(min)} (\`${worst.expr}\` · ${worst.zone}), ` +
      `${ratios.length} cells rated, ${below} below ${GOAL_MIN}×`,
  );
  const medOk = med >= GOAL_MEDIAN;
  const minOk = min >= GOAL_MIN;
  console.log(
    `Goal (median ≥ ${GOAL_MEDIAN}×, every case ≥ ${GOAL_MIN}×): ${medOk && minOk ? "MET" : "NOT MET"} ` +
      `(median ${medOk ? "met" : "missed"}, minimum ${minOk ? "met" : "missed"})`,
  );
  console.log(`Total time: ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

main();
console.log(`load (1/5/15 min) after: ${loadAverage()}`);
