/**
 * The shortest time between two occurrences of a cron, which a jitter may not exceed (docs/design.md
 * § Jitter): a jitter longer than it lets an occurrence come due after the next one.
 */

import { daysFromCivil, yearOfMs } from "../time/civil.js";
import { CronMatcher } from "../time/cron-matcher.js";
import type { CronSpec } from "../time/cron-parse.js";
import type { CompiledTiming } from "../time/schedule-timing.js";
import type { Timing } from "../time/timing.js";
import type { Zone } from "../time/zone.js";

/**
 * Occurrences looked at for a cron's shortest gap from now. A cron that fires on every day alike
 * (no day, weekday or month restricted) repeats its gaps daily: the first 400 and a whole day. One
 * whose days differ (a step over days of the month, weekdays, months) can bring two occurrences
 * closest only somewhere in the five years (a leap day): all of them, up to 20,000 (about 5 ms,
 * once per compiled timing; two years of a weekday-hourly cron are 12,500).
 */
const GAP_SCAN_DAILY = 400;
const GAP_SCAN = 20_000;
/** Occurrences looked at around each change of the zone's offset. */
const CHANGE_SCAN = 400;
/**
 * How far ahead the shortest gap is looked for: five years, so a leap day is in it from any
 * start (two let `0 0,23 28,29 2 *` from March 2028 take a 2-hour jitter, its next 29 February,
 * in 2032, putting 23:00 and midnight an hour apart).
 */
const GAP_HORIZON_MS = 5 * 366 * 86_400_000;
/**
 * How far ahead the zone's offset changes are looked at: 28 years, the cycle in which every date
 * falls on every weekday (to 2100). A cron of one date (`30 1 3 11 *`) meets New York's repeated
 * hour only in the years that date is its first Sunday of November: looking two years ahead let a
 * 1-day jitter through, and in 2030 one of its two 01:30s came due after the other and was missed.
 */
const CHANGE_HORIZON_MS = 28 * 366 * 86_400_000;
/** Before an offset change, where its scan starts at least: every occurrence it moves lies within hours of it. */
const CHANGE_LEAD_MS = 3 * 3_600_000;

/**
 * Shortest gaps by compiled timing: a batch create or an apply shares one timing between identical
 * settings (schedules.ts sharedCompile), so 10,000 jittered schedules of one expression scan once.
 */
const gaps = new WeakMap<Timing, number | null>();

/**
 * The shortest time between two occurrences in the five years from `now` (the later of the present
 * and the schedule's start_at): among the next {@link GAP_SCAN} (no further than five years, so a
 * leap-day cron does not walk 1,600 years), and among those around each change of the zone's
 * offset in {@link CHANGE_HORIZON_MS}, where a shifted occurrence can come closer to the next one than anywhere else (Lord
 * Howe's 30-minute change, months away from now, brought an hourly cron's occurrences 30 minutes
 * apart). A change's scan starts as far before it as the shortest gap found: a pair across it that
 * is closer begins no earlier. The first scan took 400 occurrences and each change's began 3 hours
 * before it, so `0 10,22 * * *` in Berlin from April let an 11h30m jitter through, though the
 * spring night brings two of its occurrences 11 hours apart; and a day-of-month step across a
 * leap day (odd days of February and March at 00:00 and 23:00: 23:00 on 29 February, then midnight on 1 March) was never
 * reached. No gap is shorter than the cron's step (a second, or a minute without the seconds
 * field): a scan that finds one stops. Null with fewer than two.
 */
export function shortestCronGap(compiled: CompiledTiming, now: number, zone: Zone | null): number | null {
  const timing = compiled.timing;
  const known = gaps.get(timing);
  if (known !== undefined) return known;
  const cron = compiled.cron;
  const step = cron?.hasSeconds ? 1000 : 60_000;
  const horizon = now + GAP_HORIZON_MS;
  let shortest: number | null = null;
  const scan = (from: number, until: number, most: number, atLeastUntil = from): void => {
    let previous = timing.nextAfter(from);
    for (let i = 0; previous !== null && previous <= until; i++) {
      if (i >= most && previous > atLeastUntil) break;
      const next = timing.nextAfter(previous);
      if (next === null) break;
      shortest = shortest === null ? next - previous : Math.min(shortest, next - previous);
      if (shortest <= step) return;
      previous = next;
    }
  };
  const daily = cron !== null && everyDayAlike(cron);
  if (daily) scan(now, horizon, GAP_SCAN_DAILY, now + 86_400_000);
  else scan(now, horizon, GAP_SCAN);
  // Two matching days closer than any in the five years (a leap day on a given weekday: 23:00 on
  // Saturday 28 February and midnight on Sunday 29 February first come in 2032): the whole cycle.
  const acrossDays = cron !== null && !daily ? closestDaysGap(cron, now) : null;
  if (acrossDays !== null) shortest = shortest === null ? acrossDays : Math.min(shortest, acrossDays);
  // A cron of every day meets each offset change alike whatever its date: the five years of the
  // scan hold every kind of change it will meet, and the zone's 28 years (30–150 ms to build, once
  // per zone) are needed only by a cron whose days differ.
  for (const change of zone?.transitionsBetween(now, daily ? horizon : now + CHANGE_HORIZON_MS) ?? []) {
    const lead = Math.max(CHANGE_LEAD_MS, (shortest ?? 0) + 1);
    scan(change.at - lead, change.at + lead, CHANGE_SCAN);
  }
  gaps.set(timing, shortest);
  return shortest;
}

/** Whether the cron fires on every day alike: no day of month, weekday or month left out. */
function everyDayAlike(cron: CronSpec): boolean {
  return everyDateAlike(cron) && noWeekday(cron);
}

/** No month or day of the month left out, and no `L`, `W` or `LW`: at most weekdays restricted. */
function everyDateAlike(cron: CronSpec): boolean {
  return (
    cron.months.length === 12 &&
    cron.days.length === 31 &&
    cron.lastDayOffsets.length === 0 &&
    cron.nearestWeekdays.length === 0 &&
    !cron.lastWeekday
  );
}

/** No weekday in the cron: the weekday field is `*`, and no `W`, `LW`, `nL` or `n#k`. */
function noWeekday(cron: CronSpec): boolean {
  return (
    cron.weekdays.length === 7 &&
    cron.nearestWeekdays.length === 0 &&
    !cron.lastWeekday &&
    cron.lastWeekdaysOfMonth.length === 0 &&
    cron.nthWeekdays.length === 0
  );
}

/** Years in which the Gregorian calendar's dates and weekdays repeat (146,097 days, whole weeks). */
const CYCLE_YEARS = 400;
/** Years that hold a leap year and common years on both sides of it (and every turn of a year). */
const LEAP_CYCLE_YEARS = 8;
/** The last year the engine computes (its last instant is in 9999). */
const LAST_YEAR = 9999;

/**
 * The shortest wall time between the last occurrence of one matching day and the first of the next
 * matching day, over a whole 400-year cycle from `from`'s year: the day masks of 4,800 months, a few
 * milliseconds, once per compiled timing. Null when fewer than two days match. The scan of
 * occurrences above sees five years only, and a pair of matching days may first come later.
 */
function closestDaysGap(cron: CronSpec, from: number): number | null {
  const matcher = new CronMatcher(cron);
  const ofDay = (i: number) =>
    ((cron.hours.at(i) ?? 0) * 3600 + (cron.minutes.at(i) ?? 0) * 60 + (cron.seconds.at(i) ?? 0)) * 1000;
  const first = ofDay(0);
  const last = ofDay(-1);
  const startYear = yearOfMs(from);
  // Only weekdays restricted: the days repeat every week, and a year holds every distance. No
  // weekday in it (days of the month, months, `L`): the years differ only in being leap years or
  // not, and eight hold both kinds and every year's turn (400 years were 1.2–1.6 ms a timing: an
  // apply of 10,000 distinct monthly crons with a jitter held the event loop 16 s; a tester).
  const weekly = everyDateAlike(cron) && cron.lastWeekdaysOfMonth.length === 0 && cron.nthWeekdays.length === 0;
  const years = weekly ? 1 : noWeekday(cron) ? LEAP_CYCLE_YEARS : CYCLE_YEARS;
  const endYear = Math.min(startYear + years, LAST_YEAR);
  let previous: number | null = null;
  let closest: number | null = null;
  for (let y = startYear; y <= endYear; y++) {
    for (let m = 1; m <= 12; m++) {
      let mask = matcher.dayMask(y, m);
      for (let d = 1; mask !== 0; d++, mask >>>= 1) {
        if ((mask & 1) === 0) continue;
        const day = daysFromCivil(y, m, d);
        if (previous !== null) closest = closest === null ? day - previous : Math.min(closest, day - previous);
        if (closest === 1) return 86_400_000 - last + first;
        previous = day;
      }
    }
  }
  return closest === null ? null : closest * 86_400_000 - last + first;
}
