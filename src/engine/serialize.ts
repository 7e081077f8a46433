/**
 * The API's JSON views of engine records: the field names of docs/design.md § Executions and tasks,
 * RFC 3339 UTC instants.
 */

import type { ExecutionEventJson, ExecutionJson, ExecutionSummaryJson, WorkflowJson } from "../domain/api-json.js";
import type { Execution, ExecutionEvent } from "../domain/execution.js";
import type { JsonValue } from "../domain/json.js";
import { cutText } from "../domain/worker-error.js";
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

/** The most of an error's message an execution summary carries, in UTF-16 units (docs/api.md § Executions). */
export const SUMMARY_MESSAGE_CHARS = 1000;

/**
 * An execution as the list's `view=summary` answers it: the fields of {@link executionToJson} but
 * `input` and `result` (the store did not read them: ExecutionFilter.summary), and of the error
 * its `type`, `message` and `step`, the message cut to {@link SUMMARY_MESSAGE_CHARS} (an error is
 * stored up to 64 K characters, its stack included).
 */
export function executionSummaryToJson(e: Execution): ExecutionSummaryJson {
  const { input: _input, result: _result, ...rest } = executionToJson(e);
  return { ...rest, error: errorSummary(e.error) };
}

/**
 * An error's type, message and step, each cut to {@link SUMMARY_MESSAGE_CHARS} (`truncated: true`
 * then, or when the stored error already was: domain/worker-error.ts). Orbit stores errors as
 * objects; anything else is taken as the message.
 */
function errorSummary(error: JsonValue | null): ExecutionSummaryJson["error"] {
  if (error === null) return null;
  const given = typeof error === "object" && !Array.isArray(error) ? error : { message: error };
  let cut = given.truncated === true;
  const shortened = (text: string): string => {
    const out = cutText(text, SUMMARY_MESSAGE_CHARS);
    if (out !== text) cut = true;
    return out;
  };
  const m = given.message;
  const message = shortened(typeof m === "string" ? m : m === undefined || m === null ? "" : JSON.stringify(m));
  return {
    ...(typeof given.type === "string" ? { type: shortened(given.type) } : {}),
    message,
    ...(typeof given.step === "string" ? { step: shortened(given.step) } : {}),
    ...(cut ? { truncated: true as const } : {}),
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

export type { ExecutionEventJson, ExecutionJson, ExecutionSummaryJson, WorkflowJson };
