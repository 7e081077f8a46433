/**
 * The API's JSON views of engine records: the field names of docs/design.md § Executions and tasks,
 * RFC 3339 UTC instants.
 */

import type { ExecutionEventJson, ExecutionJson, WorkflowJson } from "../domain/api-json.js";
import type { Execution, ExecutionEvent } from "../domain/execution.js";
import type { Workflow } from "../domain/workflow.js";
import { formatInstant, formatInstantOrNull } from "../time/format.js";

export function executionToJson(e: Execution): ExecutionJson {
  return {
    execution_id: e.executionId,
    workflow: e.workflow,
    version: e.version,
    input: e.input,
    status: e.status,
    schedule_id: e.scheduleId,
    trigger: e.trigger,
    result: e.result,
    error: e.error,
    created_at: formatInstant(e.createdMs),
    started_at: formatInstantOrNull(e.startedMs),
    ended_at: formatInstantOrNull(e.endedMs),
    ...(e.cancelReason !== null ? { cancel_reason: e.cancelReason } : {}),
    run: e.run,
    attempt: e.attempt,
  };
}

export function eventToJson(e: ExecutionEvent): ExecutionEventJson {
  return { seq: e.seq, type: e.type, at: formatInstant(e.atMs), data: e.data };
}

export function workflowToJson(w: Workflow): WorkflowJson {
  return {
    name: w.name,
    version: w.version,
    input_schema: w.inputSchema,
    description: w.description,
    created_at: formatInstant(w.createdMs),
    deprecated_at: formatInstantOrNull(w.deprecatedMs ?? null),
  };
}

export type { ExecutionEventJson, ExecutionJson, WorkflowJson };
