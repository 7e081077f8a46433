/**
 * The tables' columns, each declared once (see columns.ts). The key order is the column order
 * of every generated statement. Columns a table has but no record carries (a workflow's
 * version parts, a schedule's outcome counters, an execution's deadlines) are written by the
 * statements that own them.
 */
import type { Execution, ExecutionEvent, ExecutionStatus } from "../../domain/execution.js";
import type { JsonObject, JsonValue } from "../../domain/json.js";
import type { Workflow } from "../../domain/workflow.js";
import type {
  IdempotencyRecord,
  OccurrenceKind,
  OccurrenceRow,
  ScheduleRow,
  ScheduleState,
  WorkerTask,
  WorkerTaskState,
} from "../rows.js";
import { col, columnSet, fieldsExcept, table } from "./columns.js";

export const WORKFLOWS = table<Workflow>("orbit_workflows", {
  name: col.text("name"),
  version: col.text("version"),
  inputSchema: col.json<JsonObject | null>("input_schema"),
  description: col.optText("description"),
  createdMs: col.ms("created_ms"),
  deprecatedMs: col.optMs("deprecated_ms"),
});

export const EXECUTIONS = table<Execution>("orbit_executions", {
  executionId: col.text("execution_id"),
  workflow: col.text("workflow"),
  version: col.text("version"),
  input: col.asGiven(col.jsonObject("input")),
  status: col.text<ExecutionStatus>("status"),
  scheduleId: col.optText("schedule_id"),
  trigger: col.asGiven(col.json<JsonObject | null>("trigger")),
  result: col.asGiven(col.json("result")),
  error: col.asGiven(col.json("error")),
  cancelReason: col.optText("cancel_reason"),
  concurrencyKey: col.optText("concurrency_key"),
  run: col.int("run"),
  attempt: col.int("attempt"),
  createdMs: col.ms("created_ms"),
  startedMs: col.optMs("started_ms"),
  endedMs: col.optMs("ended_ms"),
  traceParent: col.optText("trace_parent"),
});
export const EXECUTION_ALL = columnSet(EXECUTIONS);

export const EVENTS = table<ExecutionEvent>("orbit_execution_events", {
  executionId: col.text("execution_id"),
  seq: col.int("seq"),
  type: col.text("type"),
  data: col.asGiven(col.jsonObject("data")),
  atMs: col.ms("at_ms"),
});

export const TASKS = table<WorkerTask>("orbit_worker_tasks", {
  taskId: col.text("task_id"),
  executionId: col.text("execution_id"),
  run: col.int("run"),
  workflow: col.text("workflow"),
  version: col.text("version"),
  state: col.text<WorkerTaskState>("state"),
  attempt: col.int("attempt"),
  leaseOwner: col.optText("lease_owner"),
  leaseUntilMs: col.optMs("lease_until_ms"),
  leaseIdentity: col.optText("lease_identity"),
  availableMs: col.ms("available_ms"),
  createdMs: col.ms("created_ms"),
});
export const TASK_ALL = columnSet(TASKS);

/** A schedule's own columns; its outcome columns are read beside them (row-mappers.ts). */
export type ScheduleColumns = Omit<ScheduleRow, "outcomes">;

export const SCHEDULES = table<ScheduleColumns>("orbit_schedules", {
  scheduleId: col.text("schedule_id"),
  workflow: col.text("workflow"),
  version: col.optText("version"),
  input: col.asGiven(col.jsonObject("input")),
  spec: col.jsonObject("spec"),
  paused: col.bool("paused"),
  pauseNote: col.optText("pause_note"),
  state: col.text<ScheduleState>("state"),
  nextFireMs: col.optMs("next_fire_ms"),
  dueMs: col.optMs("due_ms"),
  retryMs: col.optMs("retry_ms"),
  revision: col.int("revision"),
  fired: col.int("fired"),
  skipped: col.int("skipped"),
  runs: col.int("runs"),
  lastFireMs: col.optMs("last_fire_ms"),
  lastExecutionId: col.optText("last_execution_id"),
  lastError: col.optText("last_error"),
  buffered: col.jsonOr<JsonValue[]>("buffered", () => []),
  concurrencyKey: col.optText("concurrency_key"),
  createdMs: col.ms("created_ms"),
  updatedMs: col.ms("updated_ms"),
});
export const SCHEDULE_ALL = columnSet(SCHEDULES);
/** What an update writes: everything but the id, the revision (the guard sets it) and created_ms. */
export const SCHEDULE_UPDATE = columnSet(SCHEDULES, fieldsExcept(SCHEDULES, ["scheduleId", "revision", "createdMs"]));
/** What a fire changes (advanceSchedules). */
export const SCHEDULE_ADVANCE = columnSet(SCHEDULES, [
  "state",
  "nextFireMs",
  "dueMs",
  "retryMs",
  "fired",
  "skipped",
  "runs",
  "lastFireMs",
  "lastExecutionId",
  "lastError",
  "buffered",
]);

export const OCCURRENCES = table<OccurrenceRow>("orbit_occurrences", {
  id: col.int("id", "bigint"),
  scheduleId: col.text("schedule_id"),
  kind: col.text<OccurrenceKind>("kind"),
  occurrenceMs: col.optMs("occurrence_ms"),
  rangeFromMs: col.optMs("range_from_ms"),
  rangeToMs: col.optMs("range_to_ms"),
  count: col.int("count"),
  reason: col.optText("reason"),
  executionId: col.optText("execution_id"),
  error: col.optText("error"),
  recordedMs: col.ms("recorded_ms"),
});
/** A new ledger row: every column but the id, which the database assigns in insertion order. */
export const OCCURRENCE_NEW = columnSet(OCCURRENCES, fieldsExcept(OCCURRENCES, ["id"]));

export const IDEMPOTENCY_KEYS = table<IdempotencyRecord>("orbit_idempotency_keys", {
  scope: col.text("scope"),
  key: col.text("key"),
  requestHash: col.text("request_hash"),
  response: col.json("response"),
  status: col.int("status"),
  createdMs: col.ms("created_ms"),
});
export const IDEMPOTENCY_ALL = columnSet(IDEMPOTENCY_KEYS);

/**
 * What each SELECT and RETURNING reads, named: never `*`. On PostgreSQL a prepared statement's
 * result type is fixed when it is first prepared on a connection, so a `SELECT *` fails with
 * "cached plan must not change result type" once another server's additive migration adds a
 * column: a rolling upgrade would stop older servers (docs/operations.md § Upgrade).
 */
export const READ = {
  workflows: columnSet(WORKFLOWS).list,
  events: columnSet(EVENTS).list,
  tasks: TASK_ALL.list,
  /** A task with its retry policy (task-ops.ts `lease`). */
  leases: `${TASK_ALL.list}, max_attempts, backoff_ms`,
  /** A schedule with its outcome columns (row-mappers.ts `schedule`). */
  schedules: `${SCHEDULE_ALL.list}, last_outcome, last_success_ms, last_failure_ms, consecutive_failures, failures`,
  occurrences: columnSet(OCCURRENCES).list,
  idempotency: IDEMPOTENCY_ALL.list,
  steps: "execution_id, run, step, seq, result, error, has_compensation, compensated_ms, completed_ms",
  workers: "worker_id, workflows, first_seen_ms, last_poll_ms, left_ms",
  notifications:
    "id, schedule_id, workflow, event, url, payload, state, attempts, next_attempt_ms, last_error, created_ms, delivered_ms",
} as const;
