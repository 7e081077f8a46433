/**
 * What a new execution is made of, built in one place for every way of starting one (a single
 * start, a fire batch): the execution (RUNNING, run 1, attempt 1) and its pending worker task. Pure:
 * the caller writes them, and the store writes the first event, `WorkflowCreated`, from the
 * execution (StoreOps.insertCreatedEvents).
 */
import { SpanKind } from "@opentelemetry/api";
import type { Execution } from "../domain/execution.js";
import type { JsonObject } from "../domain/json.js";
import { traceparentOf, tracer } from "../domain/tracing.js";
import type { Workflow } from "../domain/workflow.js";
import type { WorkerTask } from "../store/rows.js";

/** A start whose workflow is resolved and whose input is validated (defaults applied). */
export interface CheckedStart {
  readonly executionId: string;
  readonly workflow: Workflow;
  readonly input: JsonObject;
  readonly scheduleId: string | null;
  readonly trigger: JsonObject | null;
  readonly concurrencyKey: string | null;
}

/** The execution a checked start creates; its pending task is {@link pendingTask}, built once it is inserted. */
export function newExecution(s: CheckedStart, now: number): Execution {
  // The execution's trace starts here, as a child of the active span (a fire, a request).
  const span = tracer().startSpan("orbit.execution.start", { kind: SpanKind.PRODUCER });
  // On the start path of every fire: the attributes are built only when an SDK records.
  if (span.isRecording()) {
    span.setAttributes({
      "orbit.execution_id": s.executionId,
      "orbit.workflow": s.workflow.name,
      "orbit.workflow_version": s.workflow.version,
      ...(s.scheduleId !== null ? { "orbit.schedule_id": s.scheduleId } : {}),
    });
  }
  span.end();
  return {
    executionId: s.executionId,
    workflow: s.workflow.name,
    version: s.workflow.version,
    input: s.input,
    status: "RUNNING",
    scheduleId: s.scheduleId,
    trigger: s.trigger,
    result: null,
    error: null,
    cancelReason: null,
    concurrencyKey: s.concurrencyKey,
    run: 1,
    attempt: 1,
    createdMs: now,
    // RUNNING covers "waiting for a worker": the execution has started once it exists.
    startedMs: now,
    endedMs: null,
    traceParent: traceparentOf(span),
  };
}

/** The pending task of a run of an execution (its first, a retry's, a continue-as-new's): attempt 1, due now. */
export function pendingTask(
  taskId: string,
  execution: Pick<Execution, "executionId" | "workflow" | "version">,
  run: number,
  now: number,
): WorkerTask {
  return {
    taskId,
    executionId: execution.executionId,
    run,
    workflow: execution.workflow,
    version: execution.version,
    state: "pending",
    attempt: 1,
    leaseOwner: null,
    leaseUntilMs: null,
    leaseIdentity: null,
    availableMs: now,
    createdMs: now,
  };
}
