/**
 * Turns on a concurrency key (docs/scheduling.md § Concurrency keys): among the due rows of a batch
 * that come due at the same instant, those with a concurrency key are fired least recently
 * started first. Read by schedule id alone, two schedules with one key and one cadence under
 * `skip` had the first take the key at every instant it was free, and the second never ran (a
 * tester: 8 of 8 occurrences skipped for `concurrency`). Buffered waiters are ordered by their
 * oldest occurrence already (their due instant); this orders what no buffer remembers.
 */
import type { ScheduleRow } from "../store/rows.js";

/**
 * `rows` with each same-instant group's keyed rows reordered, never started first, then oldest
 * start; others keep their places. The concurrency_key column alone is read: reading every due
 * row's settings up front would fail a whole batch on one row's unreadable ones. A batch without a
 * keyed row, the common case on the firing loop's path, is `rows` itself.
 */
export function keyTurns<T extends ScheduleRow>(rows: readonly T[]): readonly T[] {
  if (!rows.some((r) => r.concurrencyKey !== null)) return rows;
  const out = [...rows];
  let from = 0;
  while (from < out.length) {
    let to = from + 1;
    while (to < out.length && out[to]?.dueMs === out[from]?.dueMs) to++;
    const places: number[] = [];
    for (let i = from; i < to; i++) if ((out[i] as T).concurrencyKey !== null) places.push(i);
    if (places.length > 1) {
      const keyed = places.map((i) => out[i] as T).sort(byLastStart);
      places.forEach((place, k) => {
        out[place] = keyed[k] as T;
      });
    }
    from = to;
  }
  return out;
}

function byLastStart(a: ScheduleRow, b: ScheduleRow): number {
  const at = a.lastFireMs ?? Number.NEGATIVE_INFINITY;
  const bt = b.lastFireMs ?? Number.NEGATIVE_INFINITY;
  if (at !== bt) return at < bt ? -1 : 1;
  return a.scheduleId < b.scheduleId ? -1 : a.scheduleId > b.scheduleId ? 1 : 0;
}
