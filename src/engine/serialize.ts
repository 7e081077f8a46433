/**
 * The API's JSON views of engine records: the field names of docs/design.md § Executions and tasks,
 * RFC 3339 UTC instants.
 */
import type { Execution, ExecutionEvent, ExecutionStatus } from "../domain/execution.js";
import type { JsonObject, JsonValue } from "../domain/json.js";
import type { Workflow } from "../domain/workflow.js";
import { formatInstant, formatInstantOrNull } from "../time/format.js";

export interface ExecutionJson {
  execution_id: string;
  workflow: string;
  version: string;
  input: JsonObject;
  status: ExecutionStatus;
  schedule_id: string | null;
  trigger: JsonObject | null;
  result: JsonValue | null;
  error: JsonValue | null;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  /** Present only once a cancel was requested. */
  cancel_reason?: string;
  /** Continue-as-new and retry counter: 1 for the first run. */
  run: number;
  /** Worker attempt of the current run. */
  attempt: number;
}

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

export interface ExecutionEventJson {
  seq: number;
  type: string;
  at: string;
  data: JsonObject;
}

export function eventToJson(e: ExecutionEvent): ExecutionEventJson {
  return { seq: e.seq, type: e.type, at: formatInstant(e.atMs), data: e.data };
}

export interface WorkflowJson {
  name: string;
  version: string;
  input_schema: JsonObject | null;
  description: string | null;
  created_at: string;
  /** When it was deprecated ("latest" skips it), or null. */
  deprecated_at: string | null;
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
