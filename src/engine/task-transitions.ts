/**
 * What a worker's reports do to an execution and its task, each inside the caller's transaction.
 * Like transitions.ts they lock the execution row first and the task row second, and check that the
 * reporting worker still holds the lease (CONFLICT otherwise: the worker must stop working on it).
 * A report that may end the execution takes the schedule rows its end writes before both
 * ({@link holdTaskToEnd}, docs/storage.md § Locking).
 */

import { OrbitError } from "../domain/errors.js";
import { type Execution, isActiveStatus } from "../domain/execution.js";
import { groupBy } from "../domain/group-by.js";
import type { JsonObject, JsonValue } from "../domain/json.js";
import type { WorkflowOfferJson } from "../domain/worker-protocol.js";
import type { WorkerTask } from "../store/rows.js";
import type { StoreOps } from "../store/store.js";
import type { TaskLease } from "../store/task-store.js";
import { formatInstant } from "../time/format.js";
import { appendAfterCancel } from "./resent-reports.js";
import { pendingTask } from "./start-records.js";
import { isTimeoutError } from "./timeouts.js";

/** Lost leases are retried whatever the retry policy (the code did not fail), but not forever. */
export const MAX_LEASE_ATTEMPTS = 20;
/** The longest back-off between attempts. */
export const MAX_BACKOFF_MS = 10 * 60_000;

export interface Held {
  execution: Execution;
  task: TaskLease;
}

export async function lockExecution(tx: StoreOps, executionId: string): Promise<Execution> {
  const execution = await tx.getExecution(executionId, { forUpdate: true });
  if (!execution) throw new OrbitError("NOT_FOUND", `execution ${executionId} does not exist`);
  return execution;
}

export async function reread(tx: StoreOps, executionId: string): Promise<Execution> {
  const execution = await tx.getExecution(executionId);
  if (!execution) throw new Error(`execution ${executionId} vanished inside its own transaction`);
  return execution;
}

/**
 * Who reports on a lease: the worker's own `worker_id` and, on a server with identities, the
 * identity it authenticated as. A `worker_id` is chosen by the worker, so only the identity tells
 * two workers of two identities apart (docs/security.md § Identities).
 */
export interface LeaseHolder {
  workerId: string;
  /** Null on a server without identities. */
  identity: string | null;
  /**
   * The attempt the report is about, when the worker says (the SDK does): a worker whose lease
   * ended while the server was away can lease the same task again as the next attempt, and the
   * first attempt's late reports must not pass for the second's.
   */
  attempt?: number;
  /**
   * When the server received the request: a lease is judged by when its worker spoke, not by when
   * the server got to the request (a database stall holds requests; docs/workflows.md § Leases).
   */
  heardMs?: number;
}

/**
 * The task and its execution, locked, if `holder` holds the task's lease at `now`; CONFLICT
 * otherwise. A lease past its end is gone even before the reaper has handed the task back: a worker
 * that stalled past it may not report, since the task may be about to run elsewhere (docs/workflows.md § Leases).
 * A lease taken by another identity is PERMISSION_DENIED whatever the worker_id (docs/security.md).
 */
export async function holdTask(tx: StoreOps, taskId: string, holder: LeaseHolder, now: number): Promise<Held> {
  const peek = await tx.getTaskLease(taskId);
  if (!peek) throw new OrbitError("NOT_FOUND", `worker task ${taskId} does not exist`);
  const execution = await lockExecution(tx, peek.executionId);
  const task = await tx.getTaskLease(taskId, { forUpdate: true });
  const refused = leaseRefusal(taskId, peek.executionId, task, holder, now);
  if (refused !== null) throw refused;
  return { execution, task: task! };
}

/**
 * {@link holdTask} for a report that may end the execution (complete, fail, cancelled): first the
 * schedule rows the end writes (its outcome, the buffers it wakes), in the order a fire takes them,
 * schedule before execution (docs/storage.md § Locking). Reports that cannot end it (a step, a
 * compensation, a release) leave the schedule rows to the fire.
 */
export async function holdTaskToEnd(tx: StoreOps, taskId: string, holder: LeaseHolder, now: number): Promise<Held> {
  await tx.lockSchedulesForEnd({ taskIds: [taskId] });
  return holdTask(tx, taskId, holder, now);
}

/**
 * PERMISSION_DENIED when the task is leased by an identity other than `identity` (null: a server
 * without identities, where nothing is refused here); null otherwise.
 */
export function identityRefusal(taskId: string, task: TaskLease | null, identity: string | null): OrbitError | null {
  if (task?.state !== "leased" || identity === null || task.leaseIdentity === null || task.leaseIdentity === identity)
    return null;
  return new OrbitError(
    "PERMISSION_DENIED",
    `worker task ${taskId} is leased by another identity: identity ${identity} may report only on leases it took`,
  );
}

/**
 * Why `holder` does not hold the task's lease at `now`, or null when it does: PERMISSION_DENIED for
 * a lease another identity took, whatever the worker_id (docs/security.md), CONFLICT otherwise.
 */
export function leaseRefusal(
  taskId: string,
  executionId: string,
  task: TaskLease | null,
  holder: LeaseHolder,
  now: number,
): OrbitError | null {
  const { workerId, identity } = holder;
  const otherIdentity = identityRefusal(taskId, task, identity);
  if (otherIdentity !== null) return otherIdentity;
  if (task?.state !== "leased" || task.leaseOwner !== workerId) {
    return new OrbitError(
      "CONFLICT",
      `worker task ${taskId} (execution ${executionId}) is not leased to worker ${workerId}: its lease expired and it was handed back, or it has ended; stop working on it`,
    );
  }
  if (holder.attempt !== undefined && task.attempt !== holder.attempt) {
    return new OrbitError(
      "CONFLICT",
      `worker task ${taskId} (execution ${executionId}): attempt ${holder.attempt}'s lease ended and attempt ${task.attempt} holds the task now; stop working on attempt ${holder.attempt}`,
    );
  }
  // Judged at when the worker spoke: a report sent inside its lease and held up by the server
  // (its database away) still finds the lease, unless the reaper handed the task back meanwhile.
  const at = Math.min(now, holder.heardMs ?? now);
  if (task.leaseUntilMs === null || task.leaseUntilMs < at) {
    return new OrbitError(
      "CONFLICT",
      `worker task ${taskId} (execution ${executionId}): the lease of worker ${workerId} expired ${task.leaseUntilMs === null ? "" : `${at - task.leaseUntilMs} ms ago `}without a heartbeat, so the task will be handed back; stop working on it`,
    );
  }
  return null;
}

/** A task with the lease it is to get, and its execution. */
export interface LeaseWrite {
  task: TaskLease;
  execution: Execution;
  /** The polling process (the poll's `instance`; null: none said): the lease records it (NewLease). */
  instance: string | null;
}

/**
 * `task` leased to `owner` (with `identity`, until `untilMs`) under the offer's retry policy: the
 * row a lease writes (writeLeases), built by a claim and by the hand-off at start alike.
 */
export function leasedTask(
  task: WorkerTask,
  owner: { workerId: string; identity: string | null; untilMs: number },
  offer: WorkflowOfferJson,
): TaskLease {
  return {
    ...task,
    state: "leased",
    leaseOwner: owner.workerId,
    leaseIdentity: owner.identity,
    leaseUntilMs: owner.untilMs,
    maxAttempts: offer.max_attempts,
    backoffMs: offer.backoff_ms,
  };
}

/**
 * Writes leases built by {@link leasedTask} (docs/workflows.md § Leases, wake-ups and the reaper):
 * one `UPDATE … AND state = 'pending'` per distinct lease (the compare-and-set that keeps a task
 * from being leased twice), then `WorkflowTaskStarted` for each task it leased. Returns those, in
 * order; a task another transaction leased first is left out.
 */
export async function writeLeases<L extends LeaseWrite>(tx: StoreOps, leases: readonly L[], now: number): Promise<L[]> {
  const groups = groupBy(
    leases,
    ({ task: t, instance }) =>
      `${t.leaseOwner}\u0000${t.leaseIdentity}\u0000${instance ?? ""}\u0000${t.leaseUntilMs}\u0000${t.maxAttempts}\u0000${t.backoffMs}`,
  );
  const leased = new Set<string>();
  for (const group of groups.values()) {
    const { task: t, instance } = group[0]!;
    const ids = await tx.leaseTasks(
      group.map((x) => x.task.taskId),
      {
        owner: t.leaseOwner!,
        identity: t.leaseIdentity,
        instance,
        leaseUntilMs: t.leaseUntilMs!,
        maxAttempts: t.maxAttempts,
        backoffMs: t.backoffMs,
      },
    );
    for (const id of ids) leased.add(id);
  }
  const out = leases.filter((l) => leased.has(l.task.taskId));
  if (out.length) {
    await tx.appendEvents(
      out.map(({ task, execution }) => ({
        executionId: execution.executionId,
        type: "WorkflowTaskStarted",
        data: { worker_id: task.leaseOwner!, run: task.run, attempt: task.attempt },
        atMs: now,
      })),
    );
  }
  return out;
}

/**
 * The trigger as attempt `attempt` sees it (docs/design.md § What the execution receives): `attempt`
 * and `started_at` follow the attempts, so `ctx.trigger.attempt` is always `ctx.attempt` and
 * `started_at` is when this attempt became due. An execution without a trigger keeps none.
 */
export function triggerPatch(execution: Execution, attempt: number, startedMs: number): { trigger?: JsonObject } {
  const trigger = execution.trigger;
  return trigger === null ? {} : { trigger: { ...trigger, attempt, started_at: formatInstant(startedMs) } };
}

/** Back-off before attempt `attempt + 1`: backoff × 2^(attempt − 1), at most 10 minutes. */
export function backoffMs(task: TaskLease, attempt: number): number {
  return Math.min(MAX_BACKOFF_MS, task.backoffMs * 2 ** Math.max(0, attempt - 1));
}

/** Puts the task back for attempt + 1 after its back-off, recording why (`event`). */
export async function requeue(
  tx: StoreOps,
  held: Held,
  now: number,
  event: string,
  data: JsonObject,
): Promise<Execution> {
  const { task, execution } = held;
  const next = task.attempt + 1;
  const availableMs = now + backoffMs(task, task.attempt);
  await tx.updateTask(task.taskId, {
    state: "pending",
    attempt: next,
    leaseOwner: null,
    leaseUntilMs: null,
    leaseIdentity: null,
    availableMs,
  });
  await tx.updateExecution(execution.executionId, { attempt: next, ...triggerPatch(execution, next, availableMs) });
  await tx.appendEvent(
    execution.executionId,
    event,
    // A time as the API writes every other (RFC 3339 UTC), not epoch milliseconds.
    { ...data, attempt: task.attempt, next_attempt: next, retry_at: formatInstant(availableMs) },
    now,
  );
  return reread(tx, execution.executionId);
}

/** Journals a completed step; a repeat of the same step (a retried request) changes nothing. */
export async function recordStep(
  tx: StoreOps,
  held: Held,
  now: number,
  step: { name: string; seq: number; result: JsonValue | null; compensable: boolean },
): Promise<void> {
  const { execution, task } = held;
  // Compensations run in reverse seq order: two steps of a run at one seq leave that order
  // undecided. A repeat of the same step is a no-op below (insertStepResult keeps the first).
  const taken = (await tx.listStepResultsOf([execution.executionId])).find(
    (r) => r.run === task.run && r.seq === step.seq && r.step !== step.name,
  );
  if (taken !== undefined) {
    throw new OrbitError(
      "CONFLICT",
      `step "${step.name}": seq ${step.seq} is step "${taken.step}"'s in run ${task.run}; each step of a run takes its own seq`,
    );
  }
  const inserted = await tx.insertStepResult({
    executionId: execution.executionId,
    run: task.run,
    step: step.name,
    seq: step.seq,
    result: step.result,
    hasCompensation: step.compensable,
    compensatedMs: null,
    completedMs: now,
  });
  if (inserted) {
    await tx.appendEvent(
      execution.executionId,
      "StepCompleted",
      { step: step.name, run: task.run, seq: step.seq },
      now,
    );
  }
}

/**
 * Whether a cancel requested before a completion or failure report wins over it (docs/workflows.md §
 * Cancellation and compensation): the report then ends nothing, its result or error is recorded
 * (`CompletionAfterCancel` / `FailureAfterCancel`), and the execution stays RUNNING with its cancel
 * reason, for the worker to compensate, run `onCancel` and report `cancelled`. A timeout's cancel
 * does not win: code that completes before it sees the timeout ends COMPLETED (docs/outcomes.md § Timeouts).
 */
export function cancelWins(execution: Execution): boolean {
  return execution.cancelReason !== null && !isTimeoutError(execution.error);
}

/** A completion report: COMPLETED, unless a cancel was requested first (then see cancelWins). */
export async function completeAttempt(tx: StoreOps, held: Held, now: number, result: JsonValue): Promise<Execution> {
  const { execution } = held;
  if (!cancelWins(execution)) return endWith(tx, held, now, "COMPLETED", { result });
  await appendAfterCancel(tx, execution.executionId, "CompletionAfterCancel", { result }, now);
  return execution;
}

/** A failure report: retried by the policy (attempt + 1 after the back-off), else FAILED. */
export async function failAttempt(
  tx: StoreOps,
  held: Held,
  now: number,
  error: JsonObject,
  retryable: boolean,
): Promise<{ execution: Execution; retried: boolean }> {
  const { task, execution } = held;
  if (cancelWins(execution)) {
    await appendAfterCancel(tx, execution.executionId, "FailureAfterCancel", { error }, now);
    return { execution, retried: false };
  }
  if (
    retryable &&
    task.attempt < task.maxAttempts &&
    execution.cancelReason === null &&
    execution.status === "RUNNING"
  ) {
    return { execution: await requeue(tx, held, now, "WorkflowAttemptFailed", { error }), retried: true };
  }
  return { execution: await endWith(tx, held, now, "FAILED", { error }), retried: false };
}

/** Ends the execution (COMPLETED, FAILED or CANCELLED) and its task. */
export async function endWith(
  tx: StoreOps,
  held: Held,
  now: number,
  status: "COMPLETED" | "FAILED" | "CANCELLED",
  data: { result?: JsonValue; error?: JsonValue },
): Promise<Execution> {
  const { execution, task } = held;
  const id = execution.executionId;
  if (status === "COMPLETED" && execution.status !== "RUNNING") {
    throw new OrbitError("CONFLICT", `execution ${id} is ${execution.status}; it cannot become COMPLETED`);
  }
  if (status === "COMPLETED") {
    // error: null clears a timeout's marker when the code completed before it saw the cancel.
    await tx.updateExecution(id, { status, result: data.result ?? null, error: null, endedMs: now });
    await tx.appendEvent(id, "WorkflowCompleted", { result: data.result ?? null }, now);
  } else if (status === "FAILED") {
    await tx.updateExecution(id, { status, error: data.error ?? null, endedMs: now });
    await tx.appendEvent(id, "WorkflowFailed", { error: data.error ?? null }, now);
  } else {
    const reason = execution.cancelReason ?? "cancelled";
    await tx.updateExecution(id, { status, endedMs: now, ...(data.error !== undefined ? { error: data.error } : {}) });
    await tx.appendEvent(id, "WorkflowCancelled", { reason }, now);
  }
  await tx.updateTask(task.taskId, { state: "done" });
  return reread(tx, id);
}

/** Continue-as-new: the task ends, the execution stays RUNNING with run + 1, attempt 1 and the new input. */
export async function continueAsNew(
  tx: StoreOps,
  held: Held,
  now: number,
  input: JsonObject,
  newTaskId: string,
): Promise<Execution> {
  const { execution, task } = held;
  if (execution.cancelReason !== null && execution.status === "RUNNING") {
    // A cancel (or a timeout) came first: no next run; the answer, still RUNNING with the reason,
    // tells the worker to compensate (the worker protocol's continue route, docs/workflows.md).
    await tx.appendEvent(execution.executionId, "ContinueAfterCancel", { input }, now);
    return execution;
  }
  if (execution.cancelReason !== null || execution.status !== "RUNNING") {
    throw new OrbitError(
      "CONFLICT",
      `execution ${execution.executionId} cannot continue as new: it is ${execution.status}${execution.cancelReason !== null ? " with a cancel requested" : ""}`,
    );
  }
  const run = task.run + 1;
  await tx.updateTask(task.taskId, { state: "done" });
  await tx.updateExecution(execution.executionId, { run, attempt: 1, ...triggerPatch(execution, 1, now) });
  await tx.setExecutionInput(execution.executionId, input);
  await tx.insertTask(pendingTask(newTaskId, execution, run, now));
  await tx.appendEvent(execution.executionId, "WorkflowContinuedAsNew", { run, input }, now);
  return reread(tx, execution.executionId);
}

/** A cancel reached the worker: RUNNING → COMPENSATING (`CompensationStarted`). Idempotent. */
export async function startCompensating(tx: StoreOps, held: Held, now: number): Promise<Execution> {
  const { execution } = held;
  if (execution.cancelReason === null) {
    throw new OrbitError(
      "CONFLICT",
      `execution ${execution.executionId} has no cancel requested; nothing to compensate`,
    );
  }
  if (execution.status === "RUNNING") {
    await tx.updateExecution(execution.executionId, { status: "COMPENSATING" });
    await tx.appendEvent(execution.executionId, "CompensationStarted", { reason: execution.cancelReason }, now);
  }
  return reread(tx, execution.executionId);
}

/** One step's compensation ran (or failed, with the error). */
export async function recordCompensation(
  tx: StoreOps,
  held: Held,
  now: number,
  step: string,
  error: JsonObject | null,
): Promise<void> {
  const { execution, task } = held;
  if (execution.status !== "COMPENSATING") {
    throw new OrbitError("CONFLICT", `execution ${execution.executionId} is ${execution.status}, not COMPENSATING`);
  }
  if (error === null) {
    if (await tx.markStepCompensated(execution.executionId, task.run, step, now)) {
      await tx.appendEvent(execution.executionId, "CompensationCompleted", { step, run: task.run }, now);
    }
  } else {
    await tx.appendEvent(execution.executionId, "CompensationFailed", { step, run: task.run, error }, now);
  }
}

/** After the compensations and `onCancel`: CANCELLED with the reason (`WorkflowCancelled`). */
export async function finishCancel(
  tx: StoreOps,
  held: Held,
  now: number,
  onCancelError: JsonObject | null,
): Promise<Execution> {
  const { execution } = held;
  if (execution.cancelReason === null || !isActiveStatus(execution.status)) {
    throw new OrbitError("CONFLICT", `execution ${execution.executionId} has no cancel requested`);
  }
  if (onCancelError !== null) {
    await tx.appendEvent(execution.executionId, "CancelHandlerFailed", { error: onCancelError }, now);
  }
  const failed = await compensationFailures(tx, execution.executionId, held.task.run, onCancelError);
  // A timeout's cancel (timeouts.ts): compensated like a cancel, but it ends FAILED with the timeout
  // error, which also says what was not undone (it said only "run_timeout exceeded").
  if (isTimeoutError(execution.error)) {
    const timeout = execution.error as JsonObject;
    return endWith(tx, held, now, "FAILED", {
      error:
        failed === null
          ? timeout
          : {
              ...timeout,
              message: `${String(timeout.message)}; ${String(failed.message)}`,
              failures: failed.failures ?? [],
            },
    });
  }
  return endWith(tx, held, now, "CANCELLED", failed === null ? {} : { error: failed });
}

/**
 * A cancelled run whose compensations (or `onCancel`) failed ends CANCELLED with this as its error,
 * so `orbit status`, the API and the schedule's last outcome show it, not only the history:
 * `{type: "CompensationFailed", message: "compensation failed: charge: refund failed; …", failures}`.
 */
async function compensationFailures(
  tx: StoreOps,
  executionId: string,
  run: number,
  onCancelError: JsonObject | null,
): Promise<JsonObject | null> {
  const failures: JsonObject[] = [];
  for (const e of await tx.listEvents(executionId)) {
    if (e.type !== "CompensationFailed" || e.data.run !== run) continue;
    failures.push({ step: e.data.step ?? null, error: e.data.error ?? null });
  }
  if (onCancelError !== null) failures.push({ step: null, on_cancel: true, error: onCancelError });
  if (failures.length === 0) return null;
  const parts = failures.map((f) => {
    const error = f.error as JsonObject | null;
    const message = typeof error?.message === "string" ? error.message : JSON.stringify(error);
    return `${f.on_cancel === true ? "onCancel" : String(f.step)}: ${message}`;
  });
  return { type: "CompensationFailed", message: `compensation failed: ${parts.join("; ")}`, failures };
}
