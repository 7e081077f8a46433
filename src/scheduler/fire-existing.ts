/**
 * Which occurrences a fire decides already have their execution (a backfill started it), read only
 * when it can change the plan (fire.ts).
 */
import { isActiveStatus } from "../domain/execution.js";
import type { OverlapPolicy } from "../domain/schedule.js";
import type { ScheduleRow } from "../store/rows.js";
import type { DueSchedule, StoreOps } from "../store/store.js";
import type { CompiledSchedule } from "./compiled.js";
import type { Blocker, FirePlan } from "./decide.js";
import { bufferedOf } from "./fire-plan.js";
import { occurrenceExecutionId } from "./start-request.js";

/**
 * The occurrences of `plan` (and of the buffer) whose execution exists already (a backfill started
 * it), and whether it is still active: only an active one occupies the overlap slot
 * (docs/scheduling.md § Backfill), and none counts toward max_runs. Not read when it cannot change
 * the plan: under `allow` without max_runs, or when nothing blocks and the plan decides one
 * occurrence (most fires).
 */
export async function existingOf(
  tx: StoreOps,
  row: ScheduleRow,
  c: CompiledSchedule,
  overlap: OverlapPolicy,
  counted: boolean,
  blocker: Blocker,
  plan: FirePlan,
  asked: Set<number>,
): Promise<ReadonlyMap<number, boolean> | null> {
  const buffered = bufferedOf(row);
  let decided = 0;
  let missed = 0;
  for (const e of plan.ledger) {
    if (e.kind === "missed") missed += e.count;
    else if (e.kind === "skipped" || e.kind === "buffered" || (e.kind === "started" && !e.buffered)) decided++;
  }
  // A missed range may hold occurrences a backfill ran; otherwise, under `allow` nothing blocks,
  // so it matters only to max_runs (which counts no backfilled run), and one occurrence decided
  // with nothing blocking and no max_runs is the common fire that needs no read.
  if (missed === 0 && overlap === "allow" && !counted) return null;
  if (missed === 0 && !counted && blocker === "none" && buffered.length + decided <= 1) return null;
  const occurrences: number[] = [];
  const ask = (o: number): void => {
    if (asked.has(o)) return;
    asked.add(o);
    occurrences.push(o);
  };
  for (const o of buffered) ask(o);
  for (const e of plan.ledger) {
    if (e.kind !== "missed") ask(e.occurrence);
    else if (e.count <= MAX_MISSED_LOOKUP) {
      for (let o: number | null = e.from; o !== null && o <= e.to; o = c.timing.nextAfter(o)) ask(o);
    }
  }
  if (occurrences.length === 0) return null;
  const statuses = await tx.getExecutionStatuses(occurrences.map((o) => occurrenceExecutionId(row.scheduleId, o)));
  const existing = new Map<number, boolean>();
  if (statuses.size === 0) return existing;
  for (const o of occurrences) {
    const status = statuses.get(occurrenceExecutionId(row.scheduleId, o));
    if (status !== undefined) existing.set(o, isActiveStatus(status));
  }
  return existing;
}

/**
 * A missed range of more occurrences than this is not looked into for runs a backfill made (a
 * backfill starts at most 10,000 per request; a range this long is an outage's, read in one query).
 */
const MAX_MISSED_LOOKUP = 10_000;

/** Whether the last execution runs, from the due row's own read (no await on the firing path); undefined: unread. */
export function dueLastActive(row: ScheduleRow | DueSchedule): boolean | undefined {
  if (row.lastExecutionId === null) return false;
  return "lastStatus" in row ? row.lastStatus != null && isActiveStatus(row.lastStatus) : undefined;
}

export async function lastIsActive(tx: StoreOps, row: ScheduleRow): Promise<boolean> {
  if (row.lastExecutionId === null) return false;
  const last = await tx.getExecution(row.lastExecutionId);
  return last !== null && isActiveStatus(last.status);
}
