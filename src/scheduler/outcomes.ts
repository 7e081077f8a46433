/**
 * What happens to a schedule when one of its executions ends (docs/outcomes.md): the last outcome
 * and the failure counters move, `pause_on_failure` pauses it after N consecutive failures, and
 * `notify` webhooks are queued (sent after the commit by src/engine/notifier.ts). All of it runs
 * inside the transaction that ends the execution, so an outcome is never lost or counted twice.
 */
import type { Execution } from "../domain/execution.js";
import { isJsonObject, type JsonObject } from "../domain/json.js";
import { cutText } from "../domain/worker-error.js";
import type { NotifyEvent } from "../engine/outcome-settings.js";
import type { NewNotification } from "../store/outcome-store.js";
import {
  type NewOccurrence,
  NO_OUTCOMES,
  type ScheduleCounters,
  type ScheduleOutcome,
  type ScheduleOutcomes,
  type ScheduleRow,
} from "../store/rows.js";
import type { StoreOps } from "../store/store.js";
import { formatInstant } from "../time/format.js";

export interface NotifyTarget {
  url: string;
  events?: NotifyEvent[];
}

/**
 * Most of an error's message a schedule's last outcome keeps: it is in every read of the schedule
 * and of its list, and the execution holds the whole error.
 */
const SUMMARY_CHARS = 1000;

/** An ended execution's error as its schedule shows it: message, type and the step that threw. */
type ErrorSummary = { message: string | null; type: string | null; step: string | null };

/** The message and type of an execution's error, whatever shape the worker reported. */
export function errorSummary(error: unknown): ErrorSummary {
  if (error === null || error === undefined) return { message: null, type: null, step: null };
  if (isJsonObject(error)) {
    const message = typeof error.message === "string" ? error.message : JSON.stringify(error);
    if (message.trim() === "") {
      // `throw new Error("")`: an empty summary showed a FAILED outcome with nothing after `error:`.
      const type = typeof error.type === "string" ? error.type : null;
      const thrown = cutText(type || "Error", SUMMARY_CHARS);
      return { message: `${thrown} (thrown without a message)`, type, step: stepOf(error) };
    }
    return {
      message: cutText(message, SUMMARY_CHARS),
      type: typeof error.type === "string" ? error.type : null,
      step: stepOf(error),
    };
  }
  return {
    message: cutText(typeof error === "string" ? error : JSON.stringify(error), SUMMARY_CHARS),
    type: null,
    step: null,
  };
}

/** Which step threw (the worker reports it): shown beside the message where the schedule is. */
function stepOf(error: JsonObject): string | null {
  return typeof error.step === "string" ? cutText(error.step, SUMMARY_CHARS) : null;
}

/** A cancel's reason, and what failed while compensating (`CompensationFailed`), if anything did. */
function cancelSummary(execution: Execution): ErrorSummary {
  if (execution.error === null || execution.error === undefined) {
    return { message: execution.cancelReason, type: null, step: null };
  }
  const failed = errorSummary(execution.error);
  return {
    message: `${execution.cancelReason ?? "cancelled"}; ${failed.message}`,
    type: failed.type,
    step: failed.step,
  };
}

/** The counters after `execution` ended. */
export function nextOutcomes(prev: ScheduleOutcomes, execution: Execution, now: number): ScheduleOutcomes {
  const ended = execution.endedMs ?? now;
  const { message, type, step } =
    execution.status === "CANCELLED" ? cancelSummary(execution) : errorSummary(execution.error);
  const lastOutcome: ScheduleOutcome = {
    status: execution.status,
    executionId: execution.executionId,
    endedMs: ended,
    error: execution.status === "COMPLETED" ? null : message,
    errorType: execution.status === "COMPLETED" ? null : type,
    errorStep: execution.status === "COMPLETED" ? null : step,
  };
  // Ended before the outcome shown (their transactions committed in the other order): the last
  // outcome and the run of failures stay the newer one's; the totals and the latest times still count it.
  if (prev.lastOutcome !== null && ended < prev.lastOutcome.endedMs) {
    const later = (a: number | null, b: number) => (a === null || b > a ? b : a);
    if (execution.status === "COMPLETED") return { ...prev, lastSuccessMs: later(prev.lastSuccessMs, ended) };
    if (execution.status === "FAILED") {
      return { ...prev, lastFailureMs: later(prev.lastFailureMs, ended), failures: prev.failures + 1 };
    }
    return prev;
  }
  if (execution.status === "COMPLETED") {
    return { ...prev, lastOutcome, lastSuccessMs: ended, consecutiveFailures: 0 };
  }
  if (execution.status === "FAILED") {
    return {
      ...prev,
      lastOutcome,
      lastFailureMs: ended,
      consecutiveFailures: prev.consecutiveFailures + 1,
      failures: prev.failures + 1,
    };
  }
  return { ...prev, lastOutcome };
}

/** The `notify` setting as stored (a URL, a target, or a list of targets), as a list of targets. */
export function notifyTargets(value: unknown): NotifyTarget[] {
  if (value === undefined || value === null) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((t) => (typeof t === "string" ? { url: t } : (t as NotifyTarget)));
}

/** The webhooks an execution of `workflow` under a schedule with `notify` calls: the schedule's, then its workflow's. */
export async function notifiedBy(tx: StoreOps, notify: unknown, workflow: string): Promise<NotifyTarget[]> {
  const wf = await tx.getWorkflowSettings(workflow);
  return [...notifyTargets(notify), ...notifyTargets(wf.notify)];
}

function wants(target: NotifyTarget, event: NotifyEvent): boolean {
  return target.events === undefined || target.events.length === 0 || target.events.includes(event);
}

/** The JSON a webhook receives (docs/outcomes.md § Notifications). */
export function notificationPayload(
  event: NotifyEvent,
  execution: Pick<Execution, "executionId" | "workflow" | "version" | "status" | "scheduleId" | "error"> | null,
  extra: JsonObject,
  now: number,
): JsonObject {
  const body: JsonObject = { event, at: formatInstant(now) };
  if (execution !== null) {
    body.schedule_id = execution.scheduleId;
    body.workflow = execution.workflow;
    body.execution_id = execution.executionId;
    body.version = execution.version;
    body.status = execution.status;
    body.error = execution.error;
  }
  return { ...body, ...extra };
}

/**
 * Queues one notification per URL asking for the event, among the schedule's targets and the
 * workflow's: a URL named twice (in both, or twice in one) was called twice per event, each call
 * with its own delivery id, so a receiver could not tell them apart (a tester).
 */
export async function queueNotifications(
  tx: StoreOps,
  event: NotifyEvent,
  schedule: ScheduleRow | null,
  workflow: string,
  payload: JsonObject,
  now: number,
): Promise<number> {
  const targets = await notifiedBy(tx, schedule?.spec.notify, workflow);
  const urls = new Set(targets.filter((t) => wants(t, event)).map((t) => t.url));
  const rows: NewNotification[] = [...urls].map((url) => ({
    scheduleId: schedule?.scheduleId ?? null,
    workflow,
    event,
    url,
    payload,
    createdMs: now,
  }));
  if (rows.length === 0) return 0;
  await tx.insertNotifications(rows, now);
  // Each schedule keeps its newest deliveries, as its ledger does: the table grew without end
  // (18,400 rows an hour on a tester's failing per-second schedules, most of their executions gone).
  await tx.pruneNotificationsOf(rows[0]?.scheduleId ?? null, workflow, NOTIFICATIONS_KEPT);
  return rows.length;
}

/** Deliveries kept per schedule (or per workflow, for its own targets), newest first; pending ones always. */
export const NOTIFICATIONS_KEPT = 1000;

/**
 * Queues a `dead_letter` notification for each dead letter among a fire's ledger rows, in the
 * fire's transaction (docs/outcomes.md § Notifications). `rows`: the schedules the fire decided.
 * Reads nothing when there is no dead letter, so a plain fire costs no more than a scan of its rows.
 */
export async function queueDeadLetters(
  tx: StoreOps,
  rows: readonly ScheduleRow[],
  ledger: readonly NewOccurrence[],
  now: number,
): Promise<number> {
  let queued = 0;
  for (const entry of ledger) {
    if (entry.kind !== "dead_letter") continue;
    const row = rows.find((r) => r.scheduleId === entry.scheduleId);
    if (row === undefined) continue;
    const payload = notificationPayload(
      "dead_letter",
      null,
      {
        schedule_id: row.scheduleId,
        workflow: row.workflow,
        occurrence: entry.occurrenceMs === null ? null : formatInstant(entry.occurrenceMs),
        error: { message: entry.error ?? "the start failed" },
      },
      now,
    );
    queued += await queueNotifications(tx, "dead_letter", row, row.workflow, payload, now);
  }
  return queued;
}

/** The longest pause note (the settings validator's limit). */
const MAX_NOTE = 1000;

/**
 * {@link recordOutcome} for executions ended in one transaction, in their order. The common case, a
 * completion of a scheduled execution after no failure (it only moves the counters), is folded per
 * schedule and written with one read of the schedules (locked, in id order) and one write; every
 * other execution, and any after it of the same schedule, goes through recordOutcome one by one.
 * Returns true when a notification was queued.
 */
export async function recordOutcomes(tx: StoreOps, executions: readonly Execution[], now: number): Promise<boolean> {
  if (executions.length === 1) return recordOutcome(tx, executions[0]!, now);
  const ids = new Set<string>();
  for (const e of executions) if (e.scheduleId !== null && e.status === "COMPLETED") ids.add(e.scheduleId);
  // The counters only: a completion replaces the last outcome, so the rows are not read whole.
  const counters = await tx.lockScheduleCounters([...ids]);
  const folded = new Map<string, ScheduleOutcomes>();
  const rest: Execution[] = [];
  const slow = new Set<string | null>();
  for (const e of executions) {
    const id = e.scheduleId;
    const row = id === null ? undefined : counters.get(id);
    // A completion of a schedule that no longer exists records nothing (recordOutcome reads no row),
    // nor does one of an earlier schedule of the same id (deleted and created again).
    if (row === undefined ? id !== null && ids.has(id) : e.createdMs < row.createdMs) continue;
    const { createdMs: _created, ...kept } = row ?? { createdMs: 0 };
    const prev =
      id === null || row === undefined
        ? undefined
        : (folded.get(id) ?? { ...(kept as ScheduleCounters), lastOutcome: null });
    if (id === null || prev === undefined || e.status !== "COMPLETED" || prev.consecutiveFailures > 0 || slow.has(id)) {
      slow.add(id);
      rest.push(e);
      continue;
    }
    folded.set(id, nextOutcomes(prev, e, now));
  }
  await tx.setSchedulesOutcomes([...folded].map(([scheduleId, outcomes]) => ({ scheduleId, outcomes })));
  let queued = false;
  for (const e of rest) queued = (await recordOutcome(tx, e, now)) || queued;
  return queued;
}

/**
 * The engine's execution-ended hook for outcomes; runs in the transaction that ended the execution.
 * Returns true when it queued a notification (the caller wakes the notifier after the commit).
 */
export async function recordOutcome(tx: StoreOps, execution: Execution, now: number): Promise<boolean> {
  const failed = execution.status === "FAILED";
  const timedOut = failed && errorSummary(execution.error).type === "Timeout";
  if (execution.scheduleId === null) {
    if (!failed) return false;
    const event = timedOut ? "timeout" : "failure";
    return (
      (await queueNotifications(
        tx,
        event,
        null,
        execution.workflow,
        notificationPayload(event, execution, {}, now),
        now,
      )) > 0
    );
  }
  const row = await tx.getSchedule(execution.scheduleId, { forUpdate: true });
  // Gone, or another schedule of the same id (deleted and created again since this execution
  // started): the new one starts with no outcomes (docs/design.md § Changes); the old runs' ends
  // neither count its failures nor pause it.
  if (row === null || execution.createdMs < row.createdMs) return false;
  const prev = row.outcomes ?? NO_OUTCOMES;
  const next = nextOutcomes(prev, execution, now);
  await tx.setScheduleOutcomes(row.scheduleId, next);
  let queued = 0;
  const counters = { consecutive_failures: next.consecutiveFailures };
  if (failed) {
    const event = timedOut ? "timeout" : "failure";
    queued += await queueNotifications(
      tx,
      event,
      row,
      execution.workflow,
      notificationPayload(event, execution, counters, now),
      now,
    );
    const limit = row.spec.pause_on_failure;
    if (typeof limit === "number" && next.consecutiveFailures >= limit && !row.paused && row.state !== "ended") {
      const message = next.lastOutcome?.error ?? "no error message";
      const note =
        `paused after ${next.consecutiveFailures} consecutive failures (pause_on_failure ${limit}); last: execution ${execution.executionId} failed: ${message}`.slice(
          0,
          MAX_NOTE,
        );
      const paused = await tx.updateSchedule(
        {
          ...row,
          paused: true,
          pauseNote: note,
          state: "paused",
          dueMs: null,
          spec: { ...row.spec, paused: true, pause_note: note },
          updatedMs: now,
        },
        { expectedRevision: row.revision },
      );
      if (paused !== null) {
        const payload = notificationPayload("paused", execution, { ...counters, pause_note: note }, now);
        queued += await queueNotifications(tx, "paused", row, execution.workflow, payload, now);
      }
    }
  } else if (execution.status === "COMPLETED" && prev.consecutiveFailures > 0) {
    const payload = notificationPayload("recovery", execution, { failures_before: prev.consecutiveFailures }, now);
    queued += await queueNotifications(tx, "recovery", row, execution.workflow, payload, now);
  }
  return queued > 0;
}
