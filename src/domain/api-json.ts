/**
 * The JSON the HTTP API answers with (docs/api.md), declared once for both sides: the server's
 * views (src/scheduler/view.ts, src/engine/serialize.ts) build these types, and the client (the
 * CLI, the worker SDK, embedders) reads them through src/client/types.ts. Types only.
 */
import type { ExecutionStatus } from "./execution.js";
import type { JsonObject, JsonValue } from "./json.js";
import type { ScheduleSettings } from "./schedule.js";

/** A ledger row (`GET /v1/schedules/{id}/occurrences`). */
export interface OccurrenceJson {
  id: number;
  kind: "started" | "skipped" | "buffered" | "dead_letter" | (string & {});
  occurrence: string | null;
  execution_id?: string;
  reason?: string;
  count?: number;
  range_from?: string;
  range_to?: string;
  error?: string;
  /** A started row: its execution's status now (final once it ended; docs/outcomes.md). */
  status?: string;
  /** A started row whose execution FAILED: its error's type (`Timeout` for a run timeout). */
  error_type?: string;
  recorded_at: string;
}

/** The last execution of a schedule that ended (docs/outcomes.md). */
export interface ScheduleOutcomeJson {
  status: ExecutionStatus;
  execution_id: string;
  ended_at: string;
  /** The error message (FAILED) or cancel reason (CANCELLED); null for COMPLETED. */
  error: string | null;
  /** The error's type, e.g. `Timeout`. */
  error_type?: string;
  /** The step whose function threw, when one did. */
  error_step?: string;
}

/** A schedule's outcome fields (docs/outcomes.md). */
export interface ScheduleOutcomesJson {
  last_outcome: ScheduleOutcomeJson | null;
  last_success_at: string | null;
  last_failure_at: string | null;
  consecutive_failures: number;
  failures: number;
}

/**
 * A schedule as the server reads it: its settings as stored (docs/design.md § Settings; optional
 * ones only when set), then its state.
 */
export interface ScheduleJson extends ScheduleSettings, ScheduleOutcomesJson {
  /** With max_runs: occurrences still to start before the schedule ends (docs/outcomes.md). */
  remaining_runs?: number;
  next_fire_at: string | null;
  next_fire_times: string[];
  last_fire_at: string | null;
  last_execution_id: string | null;
  fired: number;
  skipped: number;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  state: "active" | "paused" | "ended";
  revision: number;
  last_tick: OccurrenceJson | null;
  dead_letters: OccurrenceJson[];
  /** GET of one schedule: its newest tried webhook delivery failed or is being retried after an error. */
  notify_failure?: {
    event: string;
    url: string;
    state: "failed" | "retrying";
    attempts: number;
    error: string;
    created_at: string;
  };
  /** Occurrences held by the overlap buffer, oldest first (RFC 3339). */
  buffered: string[];
}

/** An execution (docs/design.md § Executions and tasks). */
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
  /** Why a running execution is not being worked on (docs/outcomes.md § Stalls). */
  waiting?: { reason: string; message: string };
}

/**
 * An execution as `GET /v1/executions?view=summary` lists it: without `input` and `result`, which
 * may be megabytes each and which a list does not show, and with its error's `type`, `message`
 * (cut to 1,000 characters, `truncated` then: src/engine/serialize.ts) and `step` only.
 */
export interface ExecutionSummaryJson extends Omit<ExecutionJson, "input" | "result" | "error" | "waiting"> {
  error: { type?: string; message: string; step?: string; truncated?: true } | null;
}

export interface ExecutionEventJson {
  seq: number;
  type: string;
  at: string;
  data: JsonObject;
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
