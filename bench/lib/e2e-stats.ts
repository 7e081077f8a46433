/** bench:e2e's arithmetic: per measured period (a minute or a second), who started, how late, how many twice. */
import type { Start } from "./e2e-child.js";

export interface MinuteStats {
  nominalMs: number;
  /** Distinct schedules whose handler started for this minute. */
  started: number;
  /** Handler starts beyond the first for one schedule and minute. */
  doubles: number;
  /** Lag of the last first start: when every handler of the minute had started. */
  maxLag: number;
}

export const pct = (sorted: number[], p: number): number =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : Number.NaN;

export function summarise(
  starts: readonly Start[],
  nominals: readonly number[],
  schedules: number,
): { minutes: MinuteStats[]; p50: number; p99: number; max: number; misses: number; doubles: number } {
  const byMinute = new Map<number, Map<string, number>>(nominals.map((n) => [n, new Map()]));
  const doubles = new Map<number, number>(nominals.map((n) => [n, 0]));
  for (const [key, nominal, start] of starts) {
    const seen = byMinute.get(nominal);
    if (!seen) continue;
    const before = seen.get(key);
    if (before === undefined) seen.set(key, start - nominal);
    else doubles.set(nominal, (doubles.get(nominal) ?? 0) + 1);
  }
  const lags: number[] = [];
  const minutes = nominals.map((n) => {
    const seen = byMinute.get(n)!;
    let maxLag = 0;
    for (const lag of seen.values()) {
      lags.push(lag);
      maxLag = Math.max(maxLag, lag);
    }
    return { nominalMs: n, started: seen.size, doubles: doubles.get(n) ?? 0, maxLag };
  });
  lags.sort((a, b) => a - b);
  return {
    minutes,
    p50: pct(lags, 50),
    p99: pct(lags, 99),
    max: lags.at(-1) ?? Number.NaN,
    misses: minutes.reduce((a, m) => a + (schedules - m.started), 0),
    doubles: minutes.reduce((a, m) => a + m.doubles, 0),
  };
}
