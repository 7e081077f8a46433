/** Executions, their events and statuses (docs/design.md § The model; words in glossary.ts). */
import type { JsonObject, JsonValue } from "./json.js";

export const EXECUTION_STATUSES = ["RUNNING", "COMPENSATING", "COMPLETED", "FAILED", "CANCELLED"] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

/** The statuses that count as "running" for overlap policies and `--max-active-executions`. */
export const ACTIVE_STATUSES: readonly ExecutionStatus[] = ["RUNNING", "COMPENSATING"];

export function isExecutionStatus(value: string): value is ExecutionStatus {
  return (EXECUTION_STATUSES as readonly string[]).includes(value);
}

export function isActiveStatus(status: ExecutionStatus): boolean {
  return status === "RUNNING" || status === "COMPENSATING";
}

/** One execution of a workflow version. Instants are epoch milliseconds. */
export interface Execution {
  executionId: string;
  workflow: string;
  version: string;
  /** The validated input, defaults applied. */
  input: JsonObject;
  status: ExecutionStatus;
  /** The schedule that started it, if one did. */
  scheduleId: string | null;
  /** What started it (docs/design.md § What the execution receives), when a schedule did. */
  trigger: JsonObject | null;
  result: JsonValue | null;
  error: JsonValue | null;
  /** Set when a cancel was requested (the execution may still be running its compensations). */
  cancelReason: string | null;
  /** The schedule's concurrency key, held while the execution runs (docs/design.md § Overlap). */
  concurrencyKey: string | null;
  /** Continue-as-new counter: 1 for the first run. */
  run: number;
  /** Worker attempt of the current run: 1 for the first, +1 each time a lost lease is retried. */
  attempt: number;
  createdMs: number;
  startedMs: number | null;
  endedMs: number | null;
  /** The W3C traceparent of its creation span, when an OpenTelemetry SDK records (domain/tracing.ts). */
  traceParent: string | null;
}

/** Event types the engine writes today; workers add more later. */
export type ExecutionEventType =
  | "WorkflowCreated"
  | "CancelRequested"
  | "WorkflowCancelled"
  | "WorkflowCompleted"
  | "WorkflowFailed"
  | (string & {});

/** One entry in an execution's history, numbered from 1 per execution. */
export interface ExecutionEvent {
  executionId: string;
  seq: number;
  type: ExecutionEventType;
  data: JsonObject;
  atMs: number;
}
