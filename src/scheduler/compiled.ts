/**
 * Compiled timings, cached by the settings they depend on (cron or interval, zone, dst, start/end,
 * jitter, catch-up window), not by schedule: the firing loop compiles a timing once, not once per
 * fire, and a million schedules sharing a few timings share a few compiled matchers. Compiled
 * timings are pure (nothing in them depends on the schedule or on time), so sharing them is safe.
 * Bounded so a million distinct timings do not pin a million matchers: the oldest entry goes first
 * (not the least used: moving an entry to the back on every hit cost two more map operations per
 * schedule read, and an evicted timing only costs one compilation when it comes back).
 */

import type { ScheduleSettings } from "../domain/schedule.js";
import type { ScheduleRow } from "../store/rows.js";
import { parseInstant } from "../time/format.js";
import { parseDuration } from "../time/interval.js";
import { type CompiledTiming, compileTiming } from "../time/schedule-timing.js";
import { settingsOf } from "./stored-settings.js";

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

/**
 * What decides which instants are occurrences: the timing without the jitter (when each is due) and
 * the catch-up window (which late ones start). A change of only those keeps the occurrences.
 */
export function occurrenceKey(s: ScheduleSettings): string {
  // The interval and the instants as values: `2s` and `2000ms` are one timing (re-timed, the
  // occurrence between an instant and its jittered due time was dropped; a tester).
  const interval = s.interval === undefined ? undefined : parseDuration(s.interval);
  const instant = (text: string | undefined) => (text === undefined ? undefined : parseInstant(text));
  return `${s.cron}\u0000${interval}\u0000${s.timezone}\u0000${s.dst}\u0000${instant(s.start_at)}\u0000${instant(s.end_at)}`;
}

/** Everything compileSettings reads, as one string (cheaper than JSON.stringify of the whole spec). */
export function timingKey(s: ScheduleSettings): string {
  return `${s.cron}\u0000${s.interval}\u0000${s.timezone}\u0000${s.dst}\u0000${s.start_at}\u0000${s.end_at}\u0000${s.jitter}\u0000${s.catchup_window}`;
}

export function compiledFor(row: ScheduleRow): CompiledSchedule {
  const settings = settingsOf(row);
  const key = timingKey(settings);
  let compiled = cache.get(key);
  if (compiled === undefined) {
    compiled = compileSettings(settings);
    if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
    cache.set(key, compiled);
  }
  return compiled;
}
