/**
 * Compiled timings, cached per (schedule, revision): the firing loop compiles a schedule's cron
 * once, not once per fire. Bounded so a million schedules do not pin a million matchers.
 */
import type { ScheduleRow } from "../store/rows.js";
import { parseInstant } from "../time/format.js";
import { parseDuration } from "../time/interval.js";
import { type CompiledTiming, compileTiming } from "../time/schedule-timing.js";
import type { ScheduleSettings } from "../domain/schedule.js";

export interface CompiledSchedule extends CompiledTiming {
  jitterMs: number;
  catchupWindowMs: number | null;
}

const MAX_ENTRIES = 20_000;
const cache = new Map<string, CompiledSchedule>();

/** Compiles stored (already validated) settings; no five-year check. */
export function compileSettings(s: ScheduleSettings): CompiledSchedule {
  const timing = compileTiming({
    cron: s.cron,
    interval: s.interval,
    timezone: s.timezone,
    dst: s.dst,
    startAt: s.start_at === undefined ? null : parseInstant(s.start_at),
    endAt: s.end_at === undefined ? null : parseInstant(s.end_at),
  });
  return {
    ...timing,
    jitterMs: s.jitter === undefined ? 0 : parseDuration(s.jitter),
    catchupWindowMs: s.catchup_window === undefined ? null : parseDuration(s.catchup_window),
  };
}

export function compiledFor(row: ScheduleRow): CompiledSchedule {
  const key = `${row.scheduleId}\u0000${JSON.stringify(row.spec)}`;
  let compiled = cache.get(key);
  if (compiled === undefined) {
    compiled = compileSettings(row.spec as unknown as ScheduleSettings);
    if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
    cache.set(key, compiled);
  } else {
    // Keep recently used entries at the back (LRU).
    cache.delete(key);
    cache.set(key, compiled);
  }
  return compiled;
}
