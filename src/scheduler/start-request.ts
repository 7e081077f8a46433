/**
 * What a start of one of a schedule's occurrences is made of, for the fire, a manual trigger and a
 * backfill alike: the execution id derived from (schedule, occurrence), the trigger object the
 * execution receives, what blocks the start (overlap, concurrency key) and cancel_previous's reason.
 */
import { isActiveStatus } from "../domain/execution.js";
import type { JsonObject } from "../domain/json.js";
import type { ScheduleSettings } from "../domain/schedule.js";
import type { IdentifiedStart } from "../engine/executions.js";
import type { ScheduleRow } from "../store/rows.js";
import type { StoreOps } from "../store/store.js";
import { formatInstant } from "../time/format.js";
import type { CompiledSchedule } from "./compiled.js";
import type { Blocker } from "./decide.js";

export const cancelPreviousReason = (scheduleId: string): string =>
  `schedule \`${scheduleId}\`: replaced by the next occurrence (overlap cancel_previous)`;

/**
 * The last two instants formatted, and their text: a fire batch formats the same few instants for
 * every start (a herd's occurrence, the batch's `now`), three times per start.
 */
const recent = { a: Number.NaN, aText: "", b: Number.NaN, bText: "" };

function instantText(ms: number): string {
  if (ms === recent.a) return recent.aText;
  if (ms === recent.b) return recent.bText;
  const text = formatInstant(ms);
  recent.b = recent.a;
  recent.bText = recent.aText;
  recent.a = ms;
  recent.aText = text;
  return text;
}

export const occurrenceExecutionId = (scheduleId: string, occurrence: number): string =>
  `${scheduleId}:${instantText(occurrence)}`;

/** What blocks a new start of this schedule right now (docs/design.md § Overlap). */
export async function blockerOf(tx: StoreOps, row: ScheduleRow, s: ScheduleSettings): Promise<Blocker> {
  let own = false;
  if (row.lastExecutionId !== null) {
    const last = await tx.getExecution(row.lastExecutionId);
    own = last !== null && isActiveStatus(last.status);
  }
  if (s.concurrency_key !== undefined) {
    // Held by another schedule's execution and by one of this schedule's (its last, one from before
    // a delete and create, or a backfill): another schedule holds it, whatever the order. Checked
    // even while its own last runs: cancel_previous replaces its own run, never another schedule's
    // hold of the key (it used to start beside it). Locked first, until the start that takes the
    // key commits: two starts of schedules sharing it would each see nobody holding it.
    await tx.lockConcurrencyKey(s.concurrency_key);
    const holder = await tx.findActiveExecutionWithKey(s.concurrency_key, row.scheduleId);
    if (holder !== null) return holder.scheduleId === row.scheduleId ? "schedule" : "key";
  }
  return own ? "schedule" : "none";
}

/** How a start of this schedule came about, and for which instant. */
export interface StartOf {
  type: "cron" | "interval" | "manual" | "backfill";
  executionId: string;
  /** The nominal occurrence (a manual trigger: now). */
  scheduledFor: number;
  now: number;
  /** A manual trigger's input override; default the schedule's input. */
  input?: unknown;
}

/**
 * The start request of one of the schedule's executions, the same for a fire, a manual trigger and
 * a backfill: its workflow, pinned version, input, concurrency key, timeouts and trigger.
 */
export function startRequestOf(
  row: ScheduleRow,
  s: ScheduleSettings,
  c: CompiledSchedule,
  start: StartOf,
): IdentifiedStart {
  return {
    executionId: start.executionId,
    workflow: row.workflow,
    version: row.version,
    input: start.input ?? row.input,
    scheduleId: row.scheduleId,
    concurrencyKey: s.concurrency_key ?? null,
    timeouts: { runTimeout: s.run_timeout, startTimeout: s.start_timeout },
    trigger: triggerOf(row, s, c, start.type, start.executionId, start.scheduledFor, start.now),
  };
}

function triggerOf(
  row: ScheduleRow,
  s: ScheduleSettings,
  c: CompiledSchedule,
  type: "cron" | "interval" | "manual" | "backfill",
  occurrenceId: string,
  scheduledFor: number,
  now: number,
): JsonObject {
  const trigger: JsonObject = {
    type,
    schedule_id: row.scheduleId,
    occurrence_id: occurrenceId,
    scheduled_for: instantText(scheduledFor),
    started_at: instantText(now),
    timezone: c.kind === "cron" ? (s.timezone ?? "UTC") : "UTC",
    attempt: 1,
  };
  if (s.concurrency_key !== undefined) trigger.concurrency_key = s.concurrency_key;
  return trigger;
}
