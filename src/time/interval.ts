/** Interval timing (docs/design.md § Intervals): fixed durations aligned to `start_at` or to the Unix epoch. */
import { invalidSchedule } from "../domain/errors.js";
import { LAST_INSTANT_MS, type Timing } from "./timing.js";

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Shortest interval a schedule may have. */
export const MIN_INTERVAL_MS = 1000;

/**
 * Parses `1h30m`, `10s`, `1500ms`: whole numbers with the units ms, s, m, h, d, combinable.
 * `what` names the setting in messages (`interval`, `jitter`, `catchup_window` …).
 */
export function parseDuration(text: string, what = "duration"): number {
  const source = text.trim();
  if (!/^(\d+(ms|s|m|h|d))+$/.test(source)) {
    throw invalidSchedule(
      `${what} "${text}" is not a duration: use whole numbers with the units ms, s, m, h or d, for example "15m" or "1h30m"`,
    );
  }
  let total = 0;
  for (const [, n, unit] of source.matchAll(/(\d+)(ms|s|m|h|d)/g)) {
    total += Number(n) * (UNIT_MS[unit as string] as number);
  }
  if (!Number.isSafeInteger(total)) throw invalidSchedule(`${what} "${text}" is too long`);
  return total;
}

/** parseDuration plus the interval's own rule: at least 1s. */
export function parseInterval(text: string): number {
  const ms = parseDuration(text, "interval");
  if (ms < MIN_INTERVAL_MS) throw invalidSchedule(`interval "${text}" is shorter than the minimum of 1s`);
  return ms;
}

/** Occurrences at anchor + k·step for every integer k (bounding happens in BoundedTiming). */
export class IntervalTiming implements Timing {
  constructor(
    readonly stepMs: number,
    /** `start_at` when set, else 0 (the Unix epoch). */
    readonly anchor: number,
  ) {}

  nextAfter(after: number): number | null {
    const next = this.anchor + (Math.floor((after - this.anchor) / this.stepMs) + 1) * this.stepMs;
    return next > LAST_INSTANT_MS ? null : next;
  }

  countBetween(from: number, to: number): number {
    if (to > LAST_INSTANT_MS) to = LAST_INSTANT_MS;
    if (to <= from) return 0;
    return Math.floor((to - this.anchor) / this.stepMs) - Math.floor((from - this.anchor) / this.stepMs);
  }
}
