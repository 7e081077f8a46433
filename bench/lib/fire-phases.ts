/**
 * The firing benchmark's measurements: a steady run of the real loop on the system clock (fire lag),
 * and a herd fired with `loop.fireDue()` after a manual-clock jump (fires per second). Rows are built
 * with the same settings validation `Schedules.create` uses, so `spec` is what the server stores.
 */
import { ManualClock } from "../../src/clock/manual-clock.js";
import { SystemClock } from "../../src/clock/system-clock.js";
import type { JsonObject } from "../../src/domain/json.js";
import { validateSettings } from "../../src/scheduler/settings.js";
import type { ScheduleRow } from "../../src/store/rows.js";
import { formatInstant } from "../../src/time/format.js";
import { type BulkRow, type Env, INPUT, WORKFLOW, wire } from "./fire-env.js";
import { type LagSummary, summarise } from "./fire-stats.js";

export const HOUR_MS = 3_600_000;
export const topOfHour = (ms: number): number => Math.floor(ms / HOUR_MS) * HOUR_MS;

/**
 * `n` interval schedules of `intervalMs` whose first occurrences are spread evenly over one
 * interval from `startMs` (n / interval fires per second). Overlap `allow`: nothing completes the
 * executions, and under the default `skip` every fire after the first would skip.
 */
export function steadyRows(prefix: string, n: number, intervalMs: number, startMs: number): BulkRow[] {
  const rows: BulkRow[] = [];
  for (let i = 0; i < n; i++) {
    const first = startMs + Math.floor((i * intervalMs) / n);
    const { settings } = validateSettings(
      {
        schedule_id: `${prefix}${i}`,
        workflow: WORKFLOW,
        input: INPUT,
        interval: `${intervalMs / 1000}s`,
        start_at: formatInstant(first),
        overlap: "allow",
      },
      startMs,
    );
    rows.push({ id: `${prefix}${i}`, spec: settings as unknown as JsonObject, nextFireMs: first, dueMs: first });
  }
  return rows;
}

/** `n` hourly cron schedules (`0 * * * *`, UTC, default policies) whose next occurrence is `atMs` (a top of the hour). */
export function cronRows(prefix: string, n: number, atMs: number, now: number, spreadHours = 1): BulkRow[] {
  const { settings } = validateSettings(
    { schedule_id: "template", workflow: WORKFLOW, input: INPUT, cron: "0 * * * *" },
    now,
  );
  const rows: BulkRow[] = [];
  for (let i = 0; i < n; i++) {
    const id = `${prefix}${i}`;
    const at = atMs + (i % spreadHours) * HOUR_MS;
    rows.push({ id, spec: { ...(settings as unknown as JsonObject), schedule_id: id }, nextFireMs: at, dueMs: at });
  }
  // BENCH_HERD_ORDER=shuffled: inserted in a fixed pseudo-random order, as schedules made over time
  // by many callers are (the table's order is then not the ids' order; bench:e2e --create-order).
  return process.env.BENCH_HERD_ORDER === "shuffled" ? seededShuffle(rows) : rows;
}

/** `items` shuffled in place by a fixed-seed generator (xorshift32): the same order every run. */
export function seededShuffle<T>(items: T[]): T[] {
  let seed = 0x2545f491;
  for (let i = items.length - 1; i > 0; i--) {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    const j = Math.floor(((seed >>> 0) / 2 ** 32) * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

/** A bulk row as `Schedules.create` would store it. */
export function scheduleRow(r: BulkRow, now: number): ScheduleRow {
  return {
    scheduleId: r.id,
    workflow: WORKFLOW,
    version: null,
    input: INPUT,
    spec: r.spec,
    paused: false,
    pauseNote: null,
    state: "active",
    nextFireMs: r.nextFireMs,
    dueMs: r.dueMs,
    retryMs: null,
    revision: 1,
    fired: 0,
    skipped: 0,
    runs: 0,
    lastFireMs: null,
    lastExecutionId: null,
    lastError: null,
    buffered: [],
    concurrencyKey: null,
    createdMs: now,
    updatedMs: now,
  };
}

/** Inserts through the Store API, `perTx` rows per transaction; returns rows per second. */
export async function insertViaStore(env: Env, rows: readonly BulkRow[], perTx = 5000): Promise<number> {
  const now = Date.now();
  const t0 = performance.now();
  for (let i = 0; i < rows.length; i += perTx) {
    await env.store.transaction(async (tx) => {
      for (const r of rows.slice(i, i + perTx)) {
        if (!(await tx.insertSchedule(scheduleRow(r, now)))) throw new Error(`schedule ${r.id} already exists`);
      }
    });
  }
  return rows.length / ((performance.now() - t0) / 1000);
}

/** Inserts through the raw handle; returns rows per second. */
export async function insertRaw(env: Env, rows: readonly BulkRow[]): Promise<number> {
  const t0 = performance.now();
  await env.raw.insert(rows, Date.now());
  return rows.length / ((performance.now() - t0) / 1000);
}

export interface LagResult {
  /** FireReport lag: the batch's `now` minus the due time. */
  lag: LagSummary;
  /** When the fire's transaction had committed (onFire runs after the commit) minus the due time. */
  commit: LagSummary;
  fires: number;
  started: number;
  seconds: number;
}

/**
 * Runs the real loop (`scheduler.start()`) on the system clock from now until `endMs`, with the
 * schedules already in the store; the steady rows should start firing a few seconds from now.
 */
export async function lagRun(env: Env, endMs: number): Promise<LagResult> {
  const lags: number[] = [];
  const commits: number[] = [];
  let fires = 0;
  let started = 0;
  const { scheduler } = await wire(env.store, new SystemClock(), (report, firedAtMs) => {
    fires++;
    started += report.started;
    const committed = Date.now();
    for (const lag of report.lagsMs) {
      lags.push(lag);
      commits.push(committed - (firedAtMs - lag));
    }
  });
  const t0 = Date.now();
  scheduler.start();
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, endMs - Date.now())));
  await scheduler.close();
  return { lag: summarise(lags), commit: summarise(commits), fires, started, seconds: (Date.now() - t0) / 1000 };
}

export interface HerdResult {
  fired: number;
  started: number;
  seconds: number;
  firesPerSecond: number;
}

/** Jumps a manual clock to `atMs` + 1 s and fires everything due with `loop.fireDue()`. */
export async function herdRun(env: Env, atMs: number): Promise<HerdResult> {
  let started = 0;
  const clock = new ManualClock(atMs + 1000);
  const { scheduler } = await wire(env.store, clock, (report) => {
    started += report.started;
  });
  const t0 = performance.now();
  const fired = await scheduler.loop.fireDue();
  const seconds = (performance.now() - t0) / 1000;
  await scheduler.close();
  return { fired, started, seconds, firesPerSecond: fired / seconds };
}
