/**
 * Matching a parsed cron expression against wall time, with no time zone involved: "the first
 * matching wall time at or after w" and "how many matching wall times lie in [a, b)". Wall times are
 * integer ms of a local calendar reading taken as if it were UTC (see glossary).
 *
 * Time-of-day fields are lookup tables (next set value ≥ x, count of set values < x); the day fields
 * become one 31-bit mask per (year, month), cached, combining day of month, day of week, the Quartz
 * extensions and the Vixie rule. Every step is O(1); a search crosses at most one month per loop.
 */
import { civilFromDays, DAY, daysFromCivil, daysInMonth, weekdayOfDays } from "./civil.js";
import type { CronSpec } from "./cron-parse.js";

/** "No match before the limit." */
export const NONE = Number.POSITIVE_INFINITY;

/** Largest supported wall time: the end of year 9999. */
const MAX_WALL = daysFromCivil(10000, 1, 1) * DAY;

function nextTable(values: readonly number[], size: number): Int8Array {
  const t = new Int8Array(size + 1).fill(-1);
  for (let x = size - 1, next = -1; x >= 0; x--) {
    if (values.includes(x)) next = x;
    t[x] = next;
  }
  return t;
}

function prefixTable(values: readonly number[], size: number): Uint8Array {
  const t = new Uint8Array(size + 1);
  for (let x = 1; x <= size; x++) t[x] = (t[x - 1] as number) + (values.includes(x - 1) ? 1 : 0);
  return t;
}

function bit(day: number): number {
  return 1 << (day - 1);
}

/** Index (1-based day) of the lowest set bit of a non-zero mask. */
function lowestDay(mask: number): number {
  return 32 - Math.clz32(mask & -mask);
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

export class CronMatcher {
  private readonly secNext: Int8Array;
  private readonly minNext: Int8Array;
  private readonly hourNext: Int8Array;
  private readonly monthNext: Int8Array;
  private readonly secPrefix: Uint8Array;
  private readonly minPrefix: Uint8Array;
  private readonly hourPrefix: Uint8Array;
  private readonly secFirst: number;
  private readonly minFirst: number;
  private readonly monthFirst: number;
  /** Matching times of day per matching day. */
  readonly perDay: number;
  private readonly domMask: number;
  private readonly dowSet: number;
  private readonly dayMasks = new Map<number, number>();
  private readonly ymd = [0, 0, 0];

  constructor(readonly spec: CronSpec) {
    this.secNext = nextTable(spec.seconds, 60);
    this.minNext = nextTable(spec.minutes, 60);
    this.hourNext = nextTable(spec.hours, 24);
    this.monthNext = nextTable(spec.months, 13);
    this.secPrefix = prefixTable(spec.seconds, 60);
    this.minPrefix = prefixTable(spec.minutes, 60);
    this.hourPrefix = prefixTable(spec.hours, 24);
    this.secFirst = spec.seconds[0] ?? 0;
    this.minFirst = spec.minutes[0] ?? 0;
    this.monthFirst = spec.months[0] ?? 1;
    this.perDay = spec.seconds.length * spec.minutes.length * spec.hours.length;
    let dom = 0;
    for (const d of spec.days) dom |= bit(d);
    this.domMask = dom;
    let dow = 0;
    for (const w of spec.weekdays) dow |= 1 << w;
    this.dowSet = dow;
  }

  /** Mask of the matching days (bit d-1 for day d) of month m of year y. */
  dayMask(y: number, m: number): number {
    const key = y * 16 + m;
    let mask = this.dayMasks.get(key);
    if (mask === undefined) {
      mask = this.months(m) ? this.computeDayMask(y, m) : 0;
      if (this.dayMasks.size > 4096) this.dayMasks.clear();
      this.dayMasks.set(key, mask);
    }
    return mask;
  }

  private months(m: number): boolean {
    return this.monthNext[m] === m;
  }

  private computeDayMask(y: number, m: number): number {
    const s = this.spec;
    const len = daysInMonth(y, m);
    const all = len === 31 ? 0x7fffffff : bit(len + 1) - 1;
    const first = weekdayOfDays(daysFromCivil(y, m, 1));
    const weekdayOf = (d: number): number => (first + d - 1) % 7;

    let dom = this.domMask & all;
    for (const n of s.lastDayOffsets) if (len - n >= 1) dom |= bit(len - n);
    for (const n of s.nearestWeekdays) {
      if (n > len) continue;
      const wd = weekdayOf(n);
      let d = n;
      if (wd === 6) d = n === 1 ? 3 : n - 1;
      else if (wd === 0) d = n === len ? n - 2 : n + 1;
      dom |= bit(d);
    }
    if (s.lastWeekday) {
      const wd = weekdayOf(len);
      dom |= bit(wd === 6 ? len - 1 : wd === 0 ? len - 2 : len);
    }

    let dow = 0;
    for (let w = 0; w < 7; w++) {
      if ((this.dowSet & (1 << w)) === 0) continue;
      for (let d = 1 + ((w - first + 7) % 7); d <= len; d += 7) dow |= bit(d);
    }
    for (const w of s.lastWeekdaysOfMonth) {
      let d = len;
      while (weekdayOf(d) !== w) d--;
      dow |= bit(d);
    }
    for (const [w, k] of s.nthWeekdays) {
      const d = 1 + ((w - first + 7) % 7) + 7 * (k - 1);
      if (d <= len) dow |= bit(d);
    }
    // Vixie: if either day field starts with `*`, a day must match both; otherwise either.
    return s.daysStar || s.weekdaysStar ? dom & dow : dom | dow;
  }

  /** Matching seconds of day strictly below `sod` (0 ≤ sod ≤ 86400). */
  private countTimesBelow(sod: number): number {
    const h = Math.floor(sod / 3600);
    const rest = sod - h * 3600;
    const mi = Math.floor(rest / 60);
    const s = rest - mi * 60;
    const nSec = this.spec.seconds.length;
    let count = (this.hourPrefix[h] as number) * this.spec.minutes.length * nSec;
    if (h < 24 && this.hourNext[h] === h) {
      count += (this.minPrefix[mi] as number) * nSec;
      if (this.minNext[mi] === mi) count += this.secPrefix[s] as number;
    }
    return count;
  }

  /** First matching second of day ≥ sod, or -1. */
  private nextTimeOfDay(sod: number): number {
    let h = Math.floor(sod / 3600);
    const rest = sod - h * 3600;
    let mi = Math.floor(rest / 60);
    let s = rest - mi * 60;
    const hh = this.hourNext[h] as number;
    if (hh < 0) return -1;
    if (hh !== h) return hh * 3600 + this.minFirst * 60 + this.secFirst;
    const mm = this.minNext[mi] as number;
    if (mm !== mi) {
      if (mm >= 0) return h * 3600 + mm * 60 + this.secFirst;
      h = this.hourNext[h + 1] as number;
      return h < 0 ? -1 : h * 3600 + this.minFirst * 60 + this.secFirst;
    }
    s = this.secNext[s] as number;
    if (s >= 0) return h * 3600 + mi * 60 + s;
    mi = this.minNext[mi + 1] as number;
    if (mi >= 0) return h * 3600 + mi * 60 + this.secFirst;
    h = this.hourNext[h + 1] as number;
    return h < 0 ? -1 : h * 3600 + this.minFirst * 60 + this.secFirst;
  }

  /** True when the whole-second wall time `w` matches. */
  matches(w: number): boolean {
    return this.next(w, w + 1) === w;
  }

  /**
   * The first matching wall time ≥ w (rounded up to a whole second) and < limit, or NONE.
   */
  next(w: number, limit: number): number {
    if (limit > MAX_WALL) limit = MAX_WALL;
    w = Math.ceil(w / 1000) * 1000;
    if (w >= limit) return NONE;
    let days = Math.floor(w / DAY);
    let sod = (w - days * DAY) / 1000;
    const ymd = this.ymd;
    civilFromDays(days, ymd);
    let y = ymd[0] as number;
    let m = ymd[1] as number;
    let d = ymd[2] as number;
    for (;;) {
      if (this.monthNext[m] !== m) {
        const nm = this.monthNext[m] as number;
        if (nm < 0) {
          y++;
          m = this.monthFirst;
        } else m = nm;
        d = 1;
        sod = 0;
        if (daysFromCivil(y, m, 1) * DAY >= limit) return NONE;
      }
      const mask = d > 31 ? 0 : this.dayMask(y, m) >>> (d - 1);
      if (mask === 0) {
        if (++m > 12) {
          m = 1;
          y++;
        }
        d = 1;
        sod = 0;
        if (daysFromCivil(y, m, 1) * DAY >= limit) return NONE;
        continue;
      }
      const nd = d + lowestDay(mask) - 1;
      if (nd !== d) {
        d = nd;
        sod = 0;
      }
      days = daysFromCivil(y, m, d);
      if (days * DAY >= limit) return NONE;
      const t = this.nextTimeOfDay(sod);
      if (t < 0) {
        d++;
        sod = 0;
        continue;
      }
      const result = days * DAY + t * 1000;
      return result < limit ? result : NONE;
    }
  }

  /** Number of matching whole-second wall times in [a, b). */
  count(a: number, b: number): number {
    a = Math.ceil(a / 1000) * 1000;
    b = Math.ceil(b / 1000) * 1000;
    if (b <= a) return 0;
    const da = Math.floor(a / DAY);
    const db = Math.floor(b / DAY);
    const sa = (a - da * DAY) / 1000;
    const sb = (b - db * DAY) / 1000;
    if (da === db) return this.dayMatches(da) ? this.countTimesBelow(sb) - this.countTimesBelow(sa) : 0;
    let total = this.dayMatches(da) ? this.perDay - this.countTimesBelow(sa) : 0;
    if (sb > 0 && this.dayMatches(db)) total += this.countTimesBelow(sb);
    return total + this.matchingDays(da + 1, db) * this.perDay;
  }

  private dayMatches(days: number): boolean {
    const ymd = this.ymd;
    civilFromDays(days, ymd);
    return (this.dayMask(ymd[0] as number, ymd[1] as number) & bit(ymd[2] as number)) !== 0;
  }

  /** Matching days in the day range [from, to) (days since the epoch). */
  private matchingDays(from: number, to: number): number {
    let total = 0;
    const ymd = this.ymd;
    while (from < to) {
      civilFromDays(from, ymd);
      const y = ymd[0] as number;
      const m = ymd[1] as number;
      const d = ymd[2] as number;
      const len = daysInMonth(y, m);
      const lastInRange = Math.min(len, d + (to - from) - 1);
      let mask = this.dayMask(y, m) >>> (d - 1);
      const span = lastInRange - d + 1;
      if (span < 32) mask &= span === 31 ? 0x7fffffff : (1 << span) - 1;
      total += popcount(mask);
      from += span;
    }
    return total;
  }
}
