/**
 * The JSON the server answers with (docs/api.md), as the client sees it. The shapes the server's
 * views also build are declared once in src/domain/api-json.ts (the contract, types only) and
 * re-exported here; the request bodies and the answers only the client reads are here.
 */
import type {
  ExecutionEventJson,
  ExecutionJson,
  ExecutionSummaryJson,
  OccurrenceJson,
  ScheduleJson,
  ScheduleOutcomeJson,
  WorkflowJson,
} from "../domain/api-json.js";
import type { ExecutionStatus } from "../domain/execution.js";
import type { JsonObject, JsonValue } from "../domain/json.js";
import type { NotifyEvent, OverlapPolicy, ScheduleSettings } from "../domain/schedule.js";

export type {
  ExecutionEventJson,
  ExecutionJson,
  ExecutionStatus,
  ExecutionSummaryJson,
  OccurrenceJson,
  ScheduleJson,
  ScheduleOutcomeJson,
  WorkflowJson,
};

/**
 * Schedule settings as built from flags or a file, keyed by name (docs/design.md § Settings): the
 * CLI's and `apply`'s form, checked by the server. Code writes {@link ScheduleCreateBody} and
 * {@link ScheduleUpdateBody}, which the compiler checks.
 */
export type ScheduleSettingsBody = Record<string, JsonValue>;

/** A webhook as a request names it: its URL, or the URL and the events it is called on. */
export type NotifyTarget = string | { url: string; events?: NotifyEvent[] };

/** The settings a request sets, in the forms a request may write them (`notify`: one target or a list). */
type Settable = Omit<ScheduleSettings, "schedule_id" | "workflow" | "notify"> & {
  notify: NotifyTarget | NotifyTarget[];
};

/**
 * The body of a create (`POST /v1/schedules`, docs/api.md): its id, the workflow and a `cron` or an
 * `interval`; every other setting is optional and takes its default. A misspelt setting or policy
 * (`overlap: "skipp"`) is a compile error; what types cannot say (a cron with an interval, a
 * duration's text) the server refuses with its reason.
 */
export type ScheduleCreateBody = { schedule_id: string; workflow: string } & { [K in keyof Settable]?: Settable[K] };

/** The body of an update (`PATCH /v1/schedules/{id}`): the settings it changes; `null` unsets one. */
export type ScheduleUpdateBody = { workflow?: string } & { [K in keyof Settable]?: Settable[K] | null };

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

/** `GET /v1/doctor`: the server's checks (docs/operations.md § Doctor). */
export interface DoctorCheckJson {
  name: string;
  status: "ok" | "warn" | "fail";
  message: string;
  hint?: string;
}

export interface DoctorReportJson {
  server_time: string;
  checks: DoctorCheckJson[];
}

export interface SchedulePage {
  schedules: ScheduleJson[];
  next_cursor: string | null;
}

export interface OccurrencePage {
  occurrences: OccurrenceJson[];
  next_cursor: string | null;
}

/**
 * `POST /v1/schedules/{id}/trigger` (docs/api.md § Schedules): 201 with the execution started, or
 * 200 with none and why. Narrow on `started` to read `execution_id` as text.
 */
export type TriggerResultJson =
  | { started: true; execution_id: string; overlap: OverlapPolicy }
  | {
      started: false;
      execution_id: null;
      /** Why nothing started (`not started: the previous execution of … is still running (overlap: skip)`). */
      message: string;
      overlap: OverlapPolicy;
    };

export interface BackfillResultJson {
  start_at: string;
  end_at: string;
  occurrences: number;
  started: number;
  already_existed: number;
}

export interface ExecutionPage {
  executions: ExecutionJson[];
  next_cursor: string | null;
}

/** A page of `GET /v1/executions?view=summary`: the executions without input and result. */
export interface ExecutionSummaryPage {
  executions: ExecutionSummaryJson[];
  next_cursor: string | null;
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
  /** A duration (`30m`), 1s–365d; default: the workflow's (docs/outcomes.md § Timeouts). */
  run_timeout?: string | null;
  start_timeout?: string | null;
}

/**
 * The body of `POST /v1/workflows`. An optional field may be `undefined`, meaning absent, so a
 * definition's own `input` and `description` pass as they are under `exactOptionalPropertyTypes`
 * (JSON leaves an undefined field out).
 */
export interface RegisterWorkflowBody {
  name: string;
  version: string;
  input_schema?: JsonObject | undefined;
  description?: string | undefined;
}

/** A worker as `GET /v1/workers` lists it (docs/outcomes.md). */
export interface WorkerJson {
  worker_id: string;
  status: "live" | "gone" | (string & {});
  workflows: Array<{ name: string; version: string }>;
  first_seen_at: string;
  last_seen_at: string;
  running_tasks: number;
  /** Free slots at its last poll on this server; null when unknown (older servers: absent). */
  free_slots?: number | null;
  /** No free slot yet no task held: hung code keeps its slots (older servers: absent). */
  stuck?: boolean;
}
