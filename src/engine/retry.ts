/**
 * Retry (docs/outcomes.md § Retry): a FAILED or CANCELLED execution runs again as run + 1 of the
 * same execution id. Its history is kept (a `WorkflowRetried` event names the previous status and
 * error); the new run starts with attempt 1, an empty step journal and fresh deadlines.
 */

import { OrbitError } from "../domain/errors.js";
import { type Execution, isActiveStatus } from "../domain/execution.js";
import type { JsonObject } from "../domain/json.js";
import type { StoreOps } from "../store/store.js";
import { pendingTask } from "./start-records.js";
import { triggerPatch } from "./task-transitions.js";

export async function retryExecution(
  tx: StoreOps,
  executionId: string,
  now: number,
  newTaskId: string,
  deadlines: { startTimeoutMs: number | null; runTimeoutMs: number | null },
): Promise<Execution> {
  const execution = await tx.getExecution(executionId, { forUpdate: true });
  if (!execution) throw new OrbitError("NOT_FOUND", `execution ${executionId} does not exist`);
  if (execution.status !== "FAILED" && execution.status !== "CANCELLED") {
    throw new OrbitError(
      "CONFLICT",
      `execution ${executionId} is ${execution.status}; only a FAILED or CANCELLED execution can be retried`,
    );
  }
  const run = execution.run + 1;
  const task = await tx.getTaskForExecution(executionId, { forUpdate: true });
  if (task && (task.state === "pending" || task.state === "leased"))
    await tx.updateTask(task.taskId, { state: "done" });
  await tx.updateExecution(executionId, {
    status: "RUNNING",
    result: null,
    error: null,
    cancelReason: null,
    run,
    attempt: 1,
    endedMs: null,
    ...triggerPatch(execution, 1, now),
  });
  await tx.insertTask(pendingTask(newTaskId, execution, run, now));
  const { startTimeoutMs, runTimeoutMs } = deadlines;
  await tx.setExecutionDeadlines(
    [executionId],
    startTimeoutMs === null ? null : now + startTimeoutMs,
    runTimeoutMs === null ? null : now + runTimeoutMs,
  );
  const data: JsonObject = { run, previous_status: execution.status, previous_run: execution.run };
  if (execution.error !== null) data.previous_error = execution.error;
  if (execution.cancelReason !== null) data.previous_cancel_reason = execution.cancelReason;
  await tx.appendEvent(executionId, "WorkflowRetried", data, now);
  const after = await tx.getExecution(executionId);
  if (!after) throw new Error(`execution ${executionId} vanished inside its own transaction`);
  return after;
}

/**
 * A retried scheduled execution takes its schedule's overlap slot (`last_execution_id`, what the
 * next fire's overlap policy reads) unless a newer execution of the schedule still runs: under
 * `skip` the next occurrence then waits for the retry instead of running beside it
 * (docs/outcomes.md § Retry). Locks the schedule row before the execution's (docs/storage.md § Locking).
 */
export async function takeOverlapSlot(tx: StoreOps, execution: Execution): Promise<void> {
  if (execution.scheduleId === null) return;
  const row = await tx.getSchedule(execution.scheduleId, { forUpdate: true });
  if (row === null || row.lastExecutionId === execution.executionId) return;
  if (row.lastExecutionId !== null) {
    const last = await tx.getExecution(row.lastExecutionId);
    if (last !== null && isActiveStatus(last.status)) return;
  }
  await tx.updateSchedule({ ...row, lastExecutionId: execution.executionId }, { expectedRevision: row.revision });
}
