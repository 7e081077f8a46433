/**
 * A batch of completion reports in one transaction with a constant number of statements, whatever
 * its size (docs/workflows.md § Batched completes): the schedule rows the ended-hook writes, the
 * executions and the tasks locked, in that order (one statement each; the first on PostgreSQL
 * only), the checks of each report in memory, then the executions, tasks and events written (one
 * statement on PostgreSQL) and the ended-hook once for the batch. Each report is checked and ended
 * exactly as a single complete (task-transitions.ts holdTask, completeAttempt, endWith): a task the
 * worker no longer holds is answered with the same error and the others still complete; a refused
 * report writes nothing, so it leaves nothing half-written in the shared transaction.
 */
import { isDeepStrictEqual } from "node:util";
import { OrbitError } from "../domain/errors.js";
import type { Execution } from "../domain/execution.js";
import type { JsonObject, JsonValue } from "../domain/json.js";
import type { NewEvent, StoreOps } from "../store/store.js";
import type { TaskLease } from "../store/task-store.js";
import { isResentCompletion, saidAfterCancel } from "./resent-reports.js";
import { cancelWins, type LeaseHolder, leaseRefusal } from "./task-transitions.js";
import type { CompleteAnswer } from "./tasks.js";

export interface CompleteItem {
  task_id: string;
  result: JsonValue;
  /** The attempt the report is about (LeaseHolder.attempt), when the worker says. */
  attempt?: number;
}

export interface CompletedBatch {
  /** One answer per task id (a repeated id: the answer of its last report). */
  answers: Record<string, CompleteAnswer>;
  /** The executions the batch completed, as stored by it (for the listeners, after the commit). */
  ended: Execution[];
}

/**
 * Completes the reports of `holder` (its worker_id and identity) inside `tx`; `onEnded` runs once, inside `tx`, with every
 * execution the batch completed.
 */
export async function completeBatch(
  tx: StoreOps,
  holder: LeaseHolder,
  items: readonly CompleteItem[],
  now: number,
  onEnded: (tx: StoreOps, ended: readonly Execution[], now: number) => Promise<void>,
): Promise<CompletedBatch> {
  const taskIds = [...new Set(items.map((i) => i.task_id))];
  // The schedule rows the ended-hook writes, before the executions (docs/storage.md § Locking):
  // one statement for the batch.
  await tx.lockSchedulesForEnd({ taskIds });
  const locked = await tx.lockTasksAndExecutions(taskIds);
  const tasks = new Map<string, TaskLease>(locked.tasks.map((t) => [t.taskId, t]));
  const executions = new Map<string, Execution>(locked.executions.map((e) => [e.executionId, e]));
  // What was reported since the cancel of each execution a cancel wins (rare): a resent report is
  // recorded once (saidAfterCancel).
  const said = new Map<string, JsonObject[]>();
  for (const e of locked.executions) {
    if (cancelWins(e)) said.set(e.executionId, await saidAfterCancel(tx, e.executionId));
  }
  const answers: Record<string, CompleteAnswer> = {};
  const ended: Execution[] = [];
  const events: NewEvent[] = [];
  const completedTasks: string[] = [];
  // A task reported twice in one batch: the second report sees the first's effect, as it would in
  // a second request (a completed task is no longer leased; a cancel's answer is the same again).
  const reported = new Map<string, CompleteAnswer>();
  for (const item of items) {
    const id = item.task_id;
    const before = reported.get(id);
    if (before !== undefined) {
      answers[id] =
        "status" in before && before.status === "COMPLETED"
          ? refusal(new OrbitError("CONFLICT", notLeasedMessage(id, tasks.get(id)!, holder)))
          : before;
      continue;
    }
    const answer = decide(item);
    reported.set(id, answer);
    answers[id] = answer;
  }
  await tx.writeCompletions(
    {
      executions: ended.map((e) => ({ executionId: e.executionId, result: e.result })),
      doneTaskIds: completedTasks,
      events,
    },
    now,
  );
  await onEnded(tx, ended, now);
  return { answers, ended };

  function decide(item: CompleteItem): CompleteAnswer {
    const task = tasks.get(item.task_id);
    if (task === undefined) return refusal(new OrbitError("NOT_FOUND", `worker task ${item.task_id} does not exist`));
    const execution = executions.get(task.executionId);
    if (execution === undefined) {
      return refusal(new OrbitError("NOT_FOUND", `execution ${task.executionId} does not exist`));
    }
    const reporter = item.attempt === undefined ? holder : { ...holder, attempt: item.attempt };
    if (isResentCompletion(task, execution, reporter, item.result)) return { status: "COMPLETED" };
    const refused = leaseRefusal(item.task_id, task.executionId, task, reporter, now);
    if (refused !== null) return refusal(refused);
    if (cancelWins(execution)) {
      // A cancel was requested first: the worker compensates instead (T.completeAttempt).
      const report = { type: "CompletionAfterCancel", result: item.result };
      const before = said.get(execution.executionId) ?? [];
      if (!before.some((e) => isDeepStrictEqual(e, report))) {
        before.push(report);
        said.set(execution.executionId, before);
        events.push({
          executionId: execution.executionId,
          type: "CompletionAfterCancel",
          data: { result: item.result },
          atMs: now,
        });
      }
      return { status: "CANCEL_REQUESTED", cancel_requested: execution.cancelReason ?? "" };
    }
    if (execution.status !== "RUNNING") {
      const message = `execution ${execution.executionId} is ${execution.status}; it cannot become COMPLETED`;
      return refusal(new OrbitError("CONFLICT", message));
    }
    // error: null clears a timeout's marker when the code completed before it saw the cancel (T.endWith).
    const done: Execution = { ...execution, status: "COMPLETED", result: item.result, error: null, endedMs: now };
    executions.set(execution.executionId, done);
    ended.push(done);
    completedTasks.push(task.taskId);
    events.push({
      executionId: execution.executionId,
      type: "WorkflowCompleted",
      data: { result: item.result },
      atMs: now,
    });
    return { status: "COMPLETED" };
  }
}

function refusal(err: OrbitError): CompleteAnswer {
  return { code: err.code, message: err.message };
}

function notLeasedMessage(taskId: string, task: TaskLease, holder: LeaseHolder): string {
  return (
    leaseRefusal(taskId, task.executionId, { ...task, state: "done" }, holder, 0)?.message ??
    `worker task ${taskId} has ended`
  );
}
