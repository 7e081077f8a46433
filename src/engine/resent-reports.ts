/**
 * Reports a worker sends again because their answers were lost on the way (a connection reset after
 * the commit; docs/workflows.md § Batched completes): a completion that landed is answered as it was,
 * and a report made after a cancel is recorded once.
 */
import { isDeepStrictEqual } from "node:util";
import type { Execution } from "../domain/execution.js";
import type { JsonObject, JsonValue } from "../domain/json.js";
import type { StoreOps } from "../store/store.js";
import type { TaskLease } from "../store/task-store.js";
import type { LeaseHolder } from "./task-transitions.js";

/**
 * Whether a completion is one `holder` made before, sent again because its answer was lost on the
 * way (a connection reset after the commit; docs/workflows.md § Batched completes): the task ended
 * under this worker's lease (of this attempt, when it says) and its execution COMPLETED with this
 * very result. It is answered COMPLETED as it was then, not CONFLICT, which made the worker warn of
 * a lost lease for a run that had been recorded.
 */
export function isResentCompletion(
  task: TaskLease,
  execution: Execution,
  holder: LeaseHolder,
  result: JsonValue,
): boolean {
  return (
    task.state === "done" &&
    task.leaseOwner === holder.workerId &&
    task.leaseIdentity === holder.identity &&
    (holder.attempt === undefined || holder.attempt === task.attempt) &&
    execution.status === "COMPLETED" &&
    isDeepStrictEqual(execution.result, result)
  );
}

/** The execution a resent completion of `taskId` by `holder` completed (isResentCompletion), or null. */
export async function resentCompletion(
  tx: StoreOps,
  taskId: string,
  holder: LeaseHolder,
  result: JsonValue,
): Promise<Execution | null> {
  const task = await tx.getTaskLease(taskId);
  const execution = task === null ? null : await tx.getExecution(task.executionId);
  return task !== null && execution !== null && isResentCompletion(task, execution, holder, result) ? execution : null;
}

/**
 * The events a report recorded since the execution's latest cancel request, by type: a report the
 * worker sends again (its answer lost) is recorded once (it wrote `CompletionAfterCancel` two or
 * three times, a tester's dropping proxy). Read only for a report after a cancel, which is rare.
 */
export async function saidAfterCancel(tx: StoreOps, executionId: string): Promise<JsonObject[]> {
  const events = await tx.listEvents(executionId);
  const cancelAt = events.findLastIndex((e) => e.type === "CancelRequested");
  return events
    .slice(cancelAt + 1)
    .filter((e) => e.type === "CompletionAfterCancel" || e.type === "FailureAfterCancel")
    .map((e) => ({ type: e.type, ...e.data }));
}

/** Appends a report made after the cancel, unless the same report was recorded since it. */
export async function appendAfterCancel(
  tx: StoreOps,
  executionId: string,
  type: "CompletionAfterCancel" | "FailureAfterCancel",
  data: JsonObject,
  now: number,
): Promise<void> {
  const said = await saidAfterCancel(tx, executionId);
  if (said.some((e) => isDeepStrictEqual(e, { type, ...data }))) return;
  await tx.appendEvent(executionId, type, data, now);
}
