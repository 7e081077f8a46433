/**
 * Execution state transitions, each run inside a transaction by the caller. Every one locks the
 * execution row first (and the task row second, always in that order, so two transitions cannot
 * deadlock) and appends its event under that lock, which keeps event sequence numbers gap-free.
 * One that may end the execution locks the schedule rows its end writes before all of them
 * (docs/storage.md § Locking).
 */
import { OrbitError } from "../domain/errors.js";
import { type Execution, isActiveStatus } from "../domain/execution.js";
import type { JsonValue } from "../domain/json.js";
import type { StoreOps } from "../store/store.js";

/**
 * The execution, locked, after the schedule rows its end may write (its outcome, the buffers it
 * wakes): schedule rows before execution rows, the order a fire takes (docs/storage.md § Locking).
 */
async function lockToEnd(tx: StoreOps, executionId: string): Promise<Execution> {
  await tx.lockSchedulesForEnd({ executionIds: [executionId] });
  const execution = await tx.getExecution(executionId, { forUpdate: true });
  if (!execution) throw new OrbitError("NOT_FOUND", `execution ${executionId} does not exist`);
  return execution;
}

async function reread(tx: StoreOps, executionId: string): Promise<Execution> {
  const execution = await tx.getExecution(executionId);
  if (!execution) throw new Error(`execution ${executionId} vanished inside its own transaction`);
  return execution;
}

/**
 * Whether a worker has run the execution's current run, so that a cancel or a timeout must leave
 * it to a worker to compensate: its task is leased now, or is a retry waiting for its back-off, or
 * was handed back (`release`, a worker closing for a deploy) after journaling steps. A task handed
 * back keeps its attempt, so only its journal tells.
 */
export async function workerRan(
  tx: StoreOps,
  task: { state: string; attempt: number },
  execution: Execution,
): Promise<boolean> {
  if (task.state !== "pending" || task.attempt > 1) return true;
  return (await tx.listStepResults(execution.executionId, execution.run)).length > 0;
}

export async function cancelExecution(
  tx: StoreOps,
  executionId: string,
  reason: string,
  now: number,
): Promise<Execution> {
  const execution = await lockToEnd(tx, executionId);
  // Finished, or already asked: cancelling again changes nothing and is not an error.
  if (!isActiveStatus(execution.status) || execution.cancelReason !== null) return execution;
  await tx.appendEvent(executionId, "CancelRequested", { reason }, now);
  const task = await tx.getTaskForExecution(executionId, { forUpdate: true });
  // A worker holds it, or held it before: a worker is told, runs the compensations and reports CANCELLED.
  if (task && (await workerRan(tx, task, execution))) {
    if (task.state === "pending") await tx.updateTask(task.taskId, { availableMs: now }); // no back-off for a cancel
    await tx.updateExecution(executionId, { cancelReason: reason });
    return reread(tx, executionId);
  }
  // No worker has started it, so there is nothing to compensate: it ends here.
  if (task) await tx.updateTask(task.taskId, { state: "cancelled" });
  await tx.updateExecution(executionId, { status: "CANCELLED", cancelReason: reason, endedMs: now });
  await tx.appendEvent(executionId, "WorkflowCancelled", { reason }, now);
  return reread(tx, executionId);
}

export type Outcome = { status: "COMPLETED"; result: JsonValue } | { status: "FAILED"; error: JsonValue };

export async function finishExecution(
  tx: StoreOps,
  executionId: string,
  outcome: Outcome,
  now: number,
): Promise<Execution> {
  const execution = await lockToEnd(tx, executionId);
  const allowed = outcome.status === "COMPLETED" ? execution.status === "RUNNING" : isActiveStatus(execution.status);
  if (!allowed) {
    throw new OrbitError(
      "CONFLICT",
      `execution ${executionId} is ${execution.status}; it cannot become ${outcome.status}`,
    );
  }
  if (outcome.status === "COMPLETED") {
    await tx.updateExecution(executionId, { status: "COMPLETED", result: outcome.result, endedMs: now });
    await tx.appendEvent(executionId, "WorkflowCompleted", { result: outcome.result }, now);
  } else {
    await tx.updateExecution(executionId, { status: "FAILED", error: outcome.error, endedMs: now });
    await tx.appendEvent(executionId, "WorkflowFailed", { error: outcome.error }, now);
  }
  const task = await tx.getTaskForExecution(executionId, { forUpdate: true });
  if (task && (task.state === "pending" || task.state === "leased"))
    await tx.updateTask(task.taskId, { state: "done" });
  return reread(tx, executionId);
}
