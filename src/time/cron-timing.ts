/**
 * Cron occurrences in a time zone, under a DST policy.
 *
 * The zone is a sequence of periods with a constant offset. Inside a period wall time and instant
 * move together, so the regular occurrences of a period are the matching wall times of its wall range
 * [start + offset, end + offset), narrowed where the wall clock repeats: with `repeat: first` a period
 * that starts after a fall-back leaves out the wall times the previous period already had; with
 * `repeat: last` a period that ends in a fall-back leaves out the ones the next period will have
 * again. A period that starts after a spring-forward also owns the gap's wall times, which under
 * `gap: shift` fire at `wall - previous offset` (02:30 → 03:30 local): those instants fall in the
 * first `gap length` of the period, between its regular occurrences, so each period yields the minimum
 * of two candidates and instants always come out increasing and without duplicates.
 */
import { MINUTE } from "./civil.js";
import { type CronMatcher, NONE } from "./cron-matcher.js";
import type { DstPolicy } from "./dst.js";
import { LAST_INSTANT_MS, type Timing } from "./timing.js";
import { emptyPeriod, type Period, type Zone } from "./zone.js";

/** How far nextAfter looks before it calls a timing ended: one Gregorian cycle. */
const HORIZON_MS = 146097 * 24 * 60 * MINUTE;

export class CronTiming implements Timing {
  private readonly period: Period = emptyPeriod();

  constructor(
    readonly matcher: CronMatcher,
    readonly zone: Zone,
    readonly dst: DstPolicy,
  ) {}

  /** Wall range [lo, hi) of the regular occurrences of period p. */
  private lo(p: Period): number {
    const lo = p.start + p.offset;
    return this.dst.repeat === "first" && p.prevOffset > p.offset ? Math.max(lo, p.transition + p.prevOffset) : lo;
  }

  private hi(p: Period): number {
    const hi = p.end + p.offset;
    return this.dst.repeat === "last" && p.nextOffset < p.offset ? Math.min(hi, p.nextTransition + p.nextOffset) : hi;
  }

  private shiftsGap(p: Period): boolean {
    return this.dst.gap === "shift" && p.prevOffset < p.offset;
  }

  /** Wall range of p's gap whose shifted instants (wall − previous offset) fall inside p. */
  private gapLo(p: Period): number {
    return Math.max(p.transition, p.start) + p.prevOffset;
  }

  private gapHi(p: Period): number {
    return Math.min(p.transition + p.offset, p.end + p.prevOffset);
  }

  nextAfter(after: number): number | null {
    if (after >= LAST_INSTANT_MS) return null;
    const p = this.zone.periodAt(after + 1, this.period);
    const horizon = after + HORIZON_MS;
    let x = after;
    for (;;) {
      const o = p.offset;
      let best = NONE;
      const w = this.matcher.next(Math.max(this.lo(p), x + o + 1), this.hi(p));
      if (w !== NONE) best = w - o;
      if (this.shiftsGap(p)) {
        const op = p.prevOffset;
        const g = this.matcher.next(Math.max(this.gapLo(p), x + op + 1), this.gapHi(p));
        if (g !== NONE && g - op < best) best = g - op;
      }
      if (best !== NONE) return best > LAST_INSTANT_MS ? null : best;
      // The zone's table ends with year 9999 (its last period repeats past it): stop there.
      if (p.end > horizon || p.end > LAST_INSTANT_MS) return null;
      x = p.end - 1;
      this.zone.periodAt(p.end, p);
    }
  }

  countBetween(from: number, to: number): number {
    if (to > LAST_INSTANT_MS) to = LAST_INSTANT_MS;
    if (to <= from) return 0;
    const p = this.zone.periodAt(from + 1, this.period);
    let total = 0;
    for (;;) {
      const o = p.offset;
      total += this.matcher.count(Math.max(this.lo(p), from + o + 1), Math.min(this.hi(p), to + o + 1));
      if (this.shiftsGap(p)) total += this.shiftedOnly(p, from, to);
      if (p.end > to) return total;
      this.zone.periodAt(p.end, p);
    }
  }

  /** Gap wall times of p whose shifted instant lies in (from, to] and is not also a regular occurrence. */
  private shiftedOnly(p: Period, from: number, to: number): number {
    const op = p.prevOffset;
    const delta = p.offset - op;
    const limit = Math.min(this.gapHi(p), to + op + 1);
    let n = 0;
    for (let g = this.matcher.next(Math.max(this.gapLo(p), from + op + 1), limit); g !== NONE; ) {
      if (!this.matcher.matches(g + delta)) n++;
      g = this.matcher.next(g + 1000, limit);
    }
    return n;
  }
}
