/** A leased task as a poll answers it (docs/workflows.md § Protocol). */
import type { Execution } from "../domain/execution.js";
import { markSpan } from "../domain/tracing.js";
import type { TaskJson } from "../domain/worker-protocol.js";
import type { StepResultRow, TaskLease } from "../store/task-store.js";

/** The task, its execution and its run's journaled steps, with the lease and heartbeat periods. */
export function taskAnswer(
  task: TaskLease,
  execution: Execution,
  steps: readonly StepResultRow[],
  leaseMs: number,
  heartbeatMs: number,
): TaskJson {
  markSpan("orbit.task.lease", execution.traceParent, {
    "orbit.execution_id": execution.executionId,
    "orbit.task_id": task.taskId,
    "orbit.run": task.run,
    "orbit.attempt": task.attempt,
  });
  return {
    task_id: task.taskId,
    execution_id: execution.executionId,
    workflow: execution.workflow,
    version: execution.version,
    run: task.run,
    attempt: task.attempt,
    input: execution.input,
    trigger: execution.trigger,
    schedule_id: execution.scheduleId,
    status: execution.status === "COMPENSATING" ? "COMPENSATING" : "RUNNING",
    cancel_requested: execution.cancelReason,
    steps: steps.map((s) => ({
      name: s.step,
      seq: s.seq,
      result: s.result,
      compensable: s.hasCompensation,
      compensated: s.compensatedMs !== null,
    })),
    lease_ms: leaseMs,
    heartbeat_ms: heartbeatMs,
    ...(execution.traceParent !== null ? { traceparent: execution.traceParent } : {}),
  };
}
