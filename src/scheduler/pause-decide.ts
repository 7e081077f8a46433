/**
 * What a pause decides first (docs/scheduling.md § Pause): the occurrences that came due before it
 * and that the loop had not decided yet. Pausing is not downtime, so a resume without `catch_up`
 * skips the occurrences inside the pause without a record; those before it are not inside it. A
 * pause written a few ms after an instant, before the loop had fired it, left it undecided, and the
 * resume's jump past the pause dropped it with no ledger row (4 of 25 pauses lost one here); a
 * refused start waiting for its retry was dropped the same way, with the occurrences due after it.
 */
import { OrbitError } from "../domain/errors.js";
import type { NewOccurrence, ScheduleRow } from "../store/rows.js";
import type { StoreOps } from "../store/store.js";
import { type OccurrenceRange, occurrenceRange } from "../time/timing.js";
import { type CompiledSchedule, compiledFor } from "./compiled.js";
import { dueTime, startsLeft } from "./decide.js";
import { type FireDeps, type FireReport, fireSchedules } from "./fire.js";
import { queueDeadLetters } from "./outcomes.js";
import { settingsOf } from "./view.js";

/**
 * Before a pause locks the row of `id`: under `cancel_previous` its fire may cancel the last
 * execution, whose end writes schedule rows; those are taken first, in the order a fire and every
 * end take them (docs/storage.md § Locking), as a trigger does.
 */
export async function lockForPause(tx: StoreOps, id: string): Promise<void> {
  const seen = await tx.getSchedule(id);
  if (
    seen !== null &&
    !seen.paused &&
    seen.lastExecutionId !== null &&
    settingsOf(seen).overlap === "cancel_previous"
  ) {
    await tx.lockSchedulesForEnd({ executionIds: [seen.lastExecutionId] });
  }
}

/**
 * Before a pause, a new timing or a max_runs that ends the schedule (Schedules.updateIn):
 * decides, inside `tx` (the row locked), what of `row` came due by `now`: fires it as the loop
 * would, then, if a refused start still waits for its retry, records that occurrence as a dead
 * letter with its error and those due after it as missed. Returns the row as left, and the fire
 * reports to give the metrics after the commit. With `retimed` (a new timing, which restarts
 * from now) an occurrence whose instant has passed is due whatever its jitter: between its
 * instant and its jittered due time it belonged to neither timing, and was dropped with no
 * record (a tester: 4 of 11 occurrences of a 2 s interval with a 1.9 s jitter re-timed every 0.9 s).
 */
export async function decideBeforeChange(
  tx: StoreOps,
  row: ScheduleRow,
  now: number,
  deps: FireDeps,
  retimed = false,
): Promise<{ row: ScheduleRow; reports: FireReport[] }> {
  if (row.paused || row.state !== "active") return { row, reports: [] };
  const reports: FireReport[] = [];
  let current = retimed ? withoutJitterIfPassed(row, now) : row;
  if (current.dueMs !== null && current.dueMs <= now) {
    const [outcome] = await fireSchedules(tx, [current], now, deps);
    // The row is locked and read in this transaction: its compare-and-set cannot lose.
    if (outcome === undefined || outcome.kind === "lost_cas") {
      throw new OrbitError("CONFLICT", `schedule ${row.scheduleId} changed meanwhile; try again`);
    }
    if (outcome.report.advanced) reports.push(outcome.report);
    current = (await tx.getSchedule(row.scheduleId)) ?? current;
  }
  const refused = current.nextFireMs;
  if (current.retryMs === null || current.lastError === null || refused === null) return { row: current, reports };
  const c = compiledFor(current);
  if (current.buffered.length > 0) return missBehindBuffer(tx, current, c, now, reports);
  const later = dueRange(current.scheduleId, c, refused, now);
  const ledger: NewOccurrence[] = [
    {
      scheduleId: current.scheduleId,
      recordedMs: now,
      kind: "dead_letter",
      occurrenceMs: refused,
      error: current.lastError,
    },
  ];
  if (later.count > 0) {
    ledger.push({
      scheduleId: current.scheduleId,
      recordedMs: now,
      kind: "skipped",
      occurrenceMs: later.count === 1 ? later.first : null,
      rangeFromMs: later.first,
      rangeToMs: later.last,
      count: later.count,
      reason: "missed",
    });
  }
  // The refused start was not decided yet (it was inside the grace): giving up on it is not a turn
  // of max_runs, as a dead letter written for a start a fresher occurrence supersedes is not
  // (docs/outcomes.md § Run-count limit). Counted, a pause or a new timing ended a schedule of
  // max_runs 3 after 2 starts (a tester's report).
  const spent = startsLeft(settingsOf(current).max_runs, current.runs, 0) === 0;
  // The first occurrence not due yet: one whose jitter puts its due time after now is inside the
  // pause (a resume with catch_up starts it), not missed.
  const next = spent ? null : c.timing.nextAfter(later.last ?? refused);
  const left: ScheduleRow = {
    ...current,
    nextFireMs: next,
    dueMs: next === null ? null : dueTime(current.scheduleId, next, c.jitterMs),
    retryMs: null,
    state: next === null ? "ended" : "active",
    skipped: current.skipped + 1 + later.count,
    updatedMs: now,
  };
  const written = await tx.updateSchedule(left, { expectedRevision: current.revision });
  if (written === null) throw new OrbitError("CONFLICT", `schedule ${row.scheduleId} changed meanwhile; try again`);
  await tx.appendOccurrences(ledger);
  await queueDeadLetters(tx, [written], ledger, now);
  reports.push({
    scheduleId: current.scheduleId,
    started: 0,
    skipped: { missed: 1 + later.count },
    lagsMs: [],
    advanced: true,
    retryError: null,
  });
  return { row: written, reports };
}

/**
 * `row` as the fire sees it when its next occurrence's instant has passed but its jitter puts its
 * due time after `now`: without the jitter, due at the instant. The spec written back is the
 * update's own (Schedules.updateIn).
 */
function withoutJitterIfPassed(row: ScheduleRow, now: number): ScheduleRow {
  const passed = row.nextFireMs !== null && row.nextFireMs <= now;
  if (!passed || row.retryMs !== null || row.dueMs === null || row.dueMs <= now) return row;
  const { jitter: _waived, ...spec } = row.spec;
  return { ...row, spec, dueMs: row.nextFireMs };
}

/**
 * The occurrences in `(from, now]` that are due by now, by due time: a jittered one whose due time
 * is after now is not (the jitter check keeps due times in order, docs/design.md § Jitter).
 */
function dueRange(id: string, c: CompiledSchedule, from: number, now: number): OccurrenceRange {
  let range = occurrenceRange(c.timing, from, now);
  while (range.last !== null && dueTime(id, range.last, c.jitterMs) > now) {
    range = occurrenceRange(c.timing, from, range.last - 1);
  }
  return range;
}

/**
 * A buffered start refused and waiting for its retry: the buffer keeps it (it starts once a start
 * goes through), and the timing's occurrences that came due behind it, undecided until then, are
 * recorded as missed, as the fire records them once the start goes through. Without this, a pause
 * or a new timing dropped them with no record (a tester: 4–31 occurrences at a time, both stores).
 */
async function missBehindBuffer(
  tx: StoreOps,
  current: ScheduleRow,
  c: CompiledSchedule,
  now: number,
  reports: FireReport[],
): Promise<{ row: ScheduleRow; reports: FireReport[] }> {
  const first = current.nextFireMs as number;
  const behind = dueRange(current.scheduleId, c, first - 1, now);
  if (behind.count === 0 || behind.last === null) return { row: current, reports };
  const written = await tx.updateSchedule(
    {
      ...current,
      nextFireMs: c.timing.nextAfter(behind.last),
      skipped: current.skipped + behind.count,
      updatedMs: now,
    },
    { expectedRevision: current.revision },
  );
  if (written === null) throw new OrbitError("CONFLICT", `schedule ${current.scheduleId} changed meanwhile; try again`);
  await tx.appendOccurrences([
    {
      scheduleId: current.scheduleId,
      recordedMs: now,
      kind: "skipped",
      occurrenceMs: behind.count === 1 ? behind.first : null,
      rangeFromMs: behind.first,
      rangeToMs: behind.last,
      count: behind.count,
      reason: "missed",
    },
  ]);
  reports.push({
    scheduleId: current.scheduleId,
    started: 0,
    skipped: { missed: behind.count },
    lagsMs: [],
    advanced: true,
    retryError: null,
  });
  return { row: written, reports };
}
