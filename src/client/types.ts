/**
 * The JSON the server answers with (docs/api.md), as the client sees it. Kept here rather than
 * imported from the server's modules: the client (CLI, worker SDK) depends on the contract only.
 */
import type { JsonObject, JsonValue } from "../domain/json.js";

/** Schedule settings as sent in a create or an update (docs/design.md § Settings); `null` unsets in an update. */
export type ScheduleSettingsBody = Record<string, JsonValue>;

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
  /** A started row: its execution's status now (final once it ended). */
  status?: string;
  recorded_at: string;
}

/** The last execution of a schedule that ended (docs/outcomes.md). */
export interface ScheduleOutcomeJson {
  status: ExecutionStatus | (string & {});
  execution_id: string;
  ended_at: string;
  /** The error message (FAILED) or cancel reason (CANCELLED); null for COMPLETED. */
  error: string | null;
  /** The error's type, e.g. `Timeout`. */
  error_type?: string;
}

/** A schedule as the server reads it (src/scheduler/view.ts); optional settings only when set. */
export interface ScheduleJson {
  schedule_id: string;
  workflow: string;
  version?: string;
  input: JsonObject;
  cron?: string;
  interval?: string;
  timezone?: string;
  dst?: string;
  overlap: string;
  concurrency_key?: string;
  catchup: string;
  max_catch_up?: number;
  catchup_window?: string;
  start_at?: string;
  end_at?: string;
  jitter?: string;
  paused: boolean;
  pause_note?: string;
  description?: string;
  run_timeout?: string;
  start_timeout?: string;
  pause_on_failure?: number;
  max_runs?: number;
  notify?: Array<{ url: string; events?: string[] }>;
  /** Names to values (docs/cli.md § orbit schedule apply). */
  labels?: Record<string, string>;
  next_fire_at: string | null;
  next_fire_times: string[];
  last_fire_at: string | null;
  last_execution_id: string | null;
  fired: number;
  skipped: number;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  state: "active" | "paused" | "ended" | (string & {});
  revision: number;
  /** Outcome fields (docs/outcomes.md); absent from servers before them. */
  last_outcome?: ScheduleOutcomeJson | null;
  last_success_at?: string | null;
  last_failure_at?: string | null;
  consecutive_failures?: number;
  failures?: number;
  last_tick: OccurrenceJson | null;
  dead_letters: OccurrenceJson[];
}

export type ApplyAction = "create" | "update" | "unchanged" | "delete";

/** One step of `POST /v1/schedules/apply`: an entry of the file, or a pruned schedule. */
export interface ApplyStepJson {
  action: ApplyAction;
  schedule_id: string;
  changes?: Array<{ setting: string; from: JsonValue; to: JsonValue }>;
  /** With allow_unregistered: why the schedule cannot start executions yet. */
  waiting?: string;
}

export interface ApplyResultJson {
  dry_run: boolean;
  scope: Record<string, string>;
  workflows: Array<{ action: "register" | "unchanged"; name: string; version: string }>;
  steps: ApplyStepJson[];
  created: number;
  updated: number;
  unchanged: number;
  deleted: number;
}

/** The body of `POST /v1/schedules/apply` (docs/api.md). */
export interface ApplyRequestJson {
  schedules: ScheduleSettingsBody[];
  /** `kind: workflow` entries of the file. */
  workflows?: RegisterWorkflowBody[];
  allow_unregistered?: boolean;
  scope?: Record<string, string>;
  prune?: boolean;
  dry_run?: boolean;
}

export interface SchedulePage {
  schedules: ScheduleJson[];
  next_cursor: string | null;
}

export interface OccurrencePage {
  occurrences: OccurrenceJson[];
  next_cursor: string | null;
}

export interface TriggerResultJson {
  started: boolean;
  execution_id: string | null;
  /** Why nothing started (`not started: the previous execution of … is still running (overlap: skip)`). */
  message?: string;
  overlap: string;
}

export interface BackfillResultJson {
  start_at: string;
  end_at: string;
  occurrences: number;
  started: number;
  already_existed: number;
}

export type ExecutionStatus = "RUNNING" | "COMPENSATING" | "COMPLETED" | "FAILED" | "CANCELLED";

/** An execution (src/engine/serialize.ts). */
export interface ExecutionJson {
  execution_id: string;
  workflow: string;
  version: string;
  input: JsonObject;
  status: ExecutionStatus | (string & {});
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
  run?: number;
  /** Worker attempt of the current run. */
  attempt?: number;
  /** Why a running execution is not being worked on (docs/outcomes.md § Stalls). */
  waiting?: { reason: string; message: string };
}

export interface ExecutionPage {
  executions: ExecutionJson[];
  next_cursor: string | null;
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

export interface WorkflowVersionsJson {
  name: string;
  versions: WorkflowJson[];
}

export interface StartExecutionBody {
  execution_id?: string;
  workflow: string;
  version?: string;
  input: JsonObject;
}

export interface RegisterWorkflowBody {
  name: string;
  version: string;
  input_schema?: JsonObject;
  description?: string;
}

/** A worker as `GET /v1/workers` lists it (docs/outcomes.md). */
export interface WorkerJson {
  worker_id: string;
  status: "live" | "gone" | (string & {});
  workflows: Array<{ name: string; version: string }>;
  first_seen_at: string;
  last_seen_at: string;
  running_tasks: number;
}
