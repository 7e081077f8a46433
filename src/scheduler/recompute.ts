import type { ScheduleRow } from "../store/rows.js";
import type { StoreOps } from "../store/store.js";

/**
 * Where a next occurrence is recomputed from (a resume, a new timing): now, but never at or before
 * an occurrence the schedule already decided. With the server's clock set back, a resume or an
 * interval change computed a next occurrence behind those decided, and the fires decided them again:
 * duplicate `started` rows, counters off, run_once catching up four at once (a tester's clock step).
 */
export async function recomputeFrom(tx: StoreOps, row: ScheduleRow, now: number): Promise<number> {
  const decided = await tx.lastDecidedOccurrenceMs(row.scheduleId);
  // Nor before the schedule was created (it started occurrences older than itself).
  return Math.max(now, decided ?? Number.NEGATIVE_INFINITY, row.createdMs);
}
