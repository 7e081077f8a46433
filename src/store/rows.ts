/**
 * Row shapes the Store reads and writes besides the domain's workflows and executions: schedules,
 * the occurrence ledger, worker tasks and idempotency keys. Instants are epoch milliseconds.
 * The scheduler owns the meaning of the schedule columns; the store only persists them.
 */
import type { ExecutionStatus } from "../domain/execution.js";
import type { JsonObject, JsonValue } from "../domain/json.js";

export type ScheduleState = "active" | "paused" | "ended";

export interface ScheduleRow {
  scheduleId: string;
  workflow: string;
  /** `null`: the latest version at each start. */
  version: string | null;
  input: JsonObject;
  /** Every setting of docs/design.md § Settings as the user gave it (cron or interval, timezone, overlap …). */
  spec: JsonObject;
  paused: boolean;
  pauseNote: string | null;
  state: ScheduleState;
  /** The next nominal occurrence, or `null` when there is none (ended). */
  nextFireMs: number | null;
  /** `nextFireMs` plus jitter (or a retry time): when the loop should fire. Indexed for active rows. */
  dueMs: number | null;
  retryMs: number | null;
  /** Moves on every change and every fire; the compare-and-set guard. */
  revision: number;
  fired: number;
  skipped: number;
  /** Occurrences the timing started (triggers and backfills excluded): what `max_runs` counts. */
  runs: number;
  lastFireMs: number | null;
  lastExecutionId: string | null;
  lastError: string | null;
  /** Pending buffered occurrences (overlap `buffer_one` / `buffer_all`), oldest first. */
  buffered: JsonValue[];
  /** The `concurrency_key` setting, as a column so an ending execution can wake the schedules waiting on it. */
  concurrencyKey: string | null;
  createdMs: number;
  updatedMs: number;
  /**
   * What its executions came to (docs/outcomes.md). Read from the database; written only by the
   * execution-ended hook ({@link StoreOps.setScheduleOutcomes}), never by updates or fires, so a
   * row built in code may leave it out.
   */
  outcomes?: ScheduleOutcomes;
}

/** The last execution of a schedule that ended. */
export interface ScheduleOutcome {
  status: ExecutionStatus;
  executionId: string;
  endedMs: number;
  /** The error's message, for FAILED (and the cancel reason for CANCELLED). */
  error: string | null;
  /** The error's `type` (e.g. `Timeout`), when it has one. */
  errorType: string | null;
  /** The step whose function threw, when the error names one (absent in outcomes stored before it). */
  errorStep?: string | null;
}

export interface ScheduleOutcomes {
  lastOutcome: ScheduleOutcome | null;
  lastSuccessMs: number | null;
  lastFailureMs: number | null;
  /** FAILED executions since the last COMPLETED one (CANCELLED ones count neither way). */
  consecutiveFailures: number;
  /** Every FAILED execution of the schedule (the metric `orbit_schedule_failures_total`). */
  failures: number;
}

/** A schedule's outcome counters without its last outcome (what a completion keeps of them). */
export type ScheduleCounters = Omit<ScheduleOutcomes, "lastOutcome">;

export const NO_OUTCOMES: ScheduleOutcomes = {
  lastOutcome: null,
  lastSuccessMs: null,
  lastFailureMs: null,
  consecutiveFailures: 0,
  failures: 0,
};

export type OccurrenceKind = "started" | "skipped" | "buffered" | "dead_letter";

/** A ledger row to append; `id` is assigned by the database, increasing per table. */
export interface NewOccurrence {
  scheduleId: string;
  kind: OccurrenceKind;
  /** The nominal occurrence, for a single one. */
  occurrenceMs: number | null;
  /** For a skipped range (`count` > 1): the first and last nominal occurrences, inclusive. */
  rangeFromMs?: number | null;
  rangeToMs?: number | null;
  /** How many occurrences the row stands for. Default 1. */
  count?: number;
  /** For `skipped`: `overlap`, `concurrency`, `missed`, `buffer_full`. */
  reason?: string | null;
  executionId?: string | null;
  /** For `dead_letter`: the start's error message. */
  error?: string | null;
  recordedMs: number;
}

export interface OccurrenceRow extends Required<NewOccurrence> {
  id: number;
}

export type WorkerTaskState = "pending" | "leased" | "done" | "cancelled";

/** A unit of work for workers: one run of one execution, leased by one worker at a time. */
export interface WorkerTask {
  taskId: string;
  executionId: string;
  run: number;
  workflow: string;
  version: string;
  state: WorkerTaskState;
  attempt: number;
  leaseOwner: string | null;
  leaseUntilMs: number | null;
  /** The identity the lease holder authenticated as (docs/security.md); null without identities. */
  leaseIdentity: string | null;
  /** Not handed out before this instant (retry back-off). */
  availableMs: number;
  createdMs: number;
}

export type WorkerTaskPatch = Partial<
  Pick<WorkerTask, "state" | "attempt" | "leaseOwner" | "leaseUntilMs" | "leaseIdentity" | "availableMs">
>;

/** The first answer given to a request carrying an `Idempotency-Key`. */
export interface IdempotencyRecord {
  /** What the key is scoped to, e.g. `POST /v1/schedules` plus the caller identity. */
  scope: string;
  key: string;
  /** A hash of the request body: a reuse of the key with another body is refused (422). */
  requestHash: string;
  response: JsonValue | null;
  status: number;
  createdMs: number;
}
