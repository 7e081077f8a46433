/**
 * The Timing interface every schedule's occurrences come from, and the wrapper that applies
 * `start_at` / `end_at`. Implementations are pure: they take instants and never read the clock.
 */

/**
 * The last instant RFC 3339 can write (the end of year 9999 UTC). No timing has an occurrence after
 * it: a schedule whose next one would fall later has ended, as the API could not show that time.
 */
export const LAST_INSTANT_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** A source of nominal occurrences (integer ms instants, strictly increasing, no duplicates). */
export interface Timing {
  /** The first occurrence strictly after `after`, or null when there is none (the schedule ended). */
  nextAfter(after: number): number | null;
  /** The number of occurrences t with `from < t <= to`. */
  countBetween(from: number, to: number): number;
}

/** No occurrence before `startAt` or after `endAt` (both inclusive bounds, either optional). */
export class BoundedTiming implements Timing {
  constructor(
    private readonly inner: Timing,
    readonly startAt: number | null,
    readonly endAt: number | null,
  ) {}

  nextAfter(after: number): number | null {
    const from = this.startAt !== null && after < this.startAt ? this.startAt - 1 : after;
    const next = this.inner.nextAfter(from);
    return next === null || (this.endAt !== null && next > this.endAt) ? null : next;
  }

  countBetween(from: number, to: number): number {
    if (this.startAt !== null && from < this.startAt - 1) from = this.startAt - 1;
    if (this.endAt !== null && to > this.endAt) to = this.endAt;
    return to <= from ? 0 : this.inner.countBetween(from, to);
  }
}

/** The next `n` occurrences strictly after `after` (fewer if the timing ends). */
export function nextOccurrences(timing: Timing, after: number, n: number): number[] {
  const out: number[] = [];
  let t = timing.nextAfter(after);
  while (t !== null && out.length < n) {
    out.push(t);
    if (out.length < n) t = timing.nextAfter(t);
  }
  return out;
}

/** Count, first and last of the occurrences in `(from, to]`. */
export interface OccurrenceRange {
  count: number;
  first: number | null;
  last: number | null;
}

export function occurrenceRange(timing: Timing, from: number, to: number): OccurrenceRange {
  const count = to > from ? timing.countBetween(from, to) : 0;
  if (count === 0) return { count, first: null, last: null };
  return { count, first: timing.nextAfter(from), last: kthLast(timing, from, to, 1) };
}

/**
 * The k-th last occurrence in `(from, to]` (k = 1 is the last), or null if there are fewer than k.
 * Bisects on countBetween, so it costs O(log(to - from)) counts whatever the density: a per-second
 * schedule's last occurrence before a year-long outage is as cheap as a yearly one's.
 */
export function kthLast(timing: Timing, from: number, to: number, k: number): number | null {
  if (k < 1 || to <= from || timing.countBetween(from, to) < k) return null;
  let lo = from; // countBetween(lo, to) >= k
  let hi = to; // countBetween(hi, to) < k
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (timing.countBetween(mid, to) >= k) lo = mid;
    else hi = mid;
  }
  return hi;
}
