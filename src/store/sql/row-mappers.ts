/**
 * Turns driver rows into typed records and back. Both drivers return numbers for integer columns
 * (the PostgreSQL store installs a BIGINT parser); JSON columns go through the dialect.
 */
import type { Execution, ExecutionEvent, ExecutionStatus } from "../../domain/execution.js";
import type { JsonObject, JsonValue } from "../../domain/json.js";
import type { Workflow } from "../../domain/workflow.js";
import type {
  IdempotencyRecord,
  OccurrenceKind,
  OccurrenceRow,
  ScheduleOutcome,
  ScheduleRow,
  ScheduleState,
  WorkerTask,
  WorkerTaskState,
} from "../rows.js";
import type { SqlDialect } from "./dialect.js";
import type { SqlParam, SqlRow } from "./executor.js";

function str(row: SqlRow, key: string): string {
  const v = row[key];
  if (typeof v !== "string") throw new Error(`column ${key}: expected text, got ${typeof v}`);
  return v;
}
function optStr(row: SqlRow, key: string): string | null {
  return row[key] == null ? null : str(row, key);
}
function num(row: SqlRow, key: string): number {
  const v = row[key];
  if (typeof v !== "number") throw new Error(`column ${key}: expected a number, got ${typeof v}`);
  return v;
}
function optNum(row: SqlRow, key: string): number | null {
  return row[key] == null ? null : num(row, key);
}

/** Encodes a JSON column value for binding (both dialects take the JSON text). */
export function jsonParam(value: JsonValue | null | undefined): string | null {
  return value == null ? null : JSON.stringify(value);
}

export class RowMapper {
  constructor(private readonly dialect: SqlDialect) {}

  private json(row: SqlRow, key: string): JsonValue | null {
    const v = row[key];
    return v == null ? null : (this.dialect.readJson(v) as JsonValue);
  }
  private jsonObject(row: SqlRow, key: string): JsonObject {
    return (this.json(row, key) ?? {}) as JsonObject;
  }

  workflow(row: SqlRow): Workflow {
    return {
      name: str(row, "name"),
      version: str(row, "version"),
      inputSchema: this.json(row, "input_schema") as JsonObject | null,
      description: optStr(row, "description"),
      createdMs: num(row, "created_ms"),
    };
  }

  execution(row: SqlRow): Execution {
    return {
      executionId: str(row, "execution_id"),
      workflow: str(row, "workflow"),
      version: str(row, "version"),
      input: this.jsonObject(row, "input"),
      status: str(row, "status") as ExecutionStatus,
      scheduleId: optStr(row, "schedule_id"),
      trigger: this.json(row, "trigger") as JsonObject | null,
      result: this.json(row, "result"),
      error: this.json(row, "error"),
      cancelReason: optStr(row, "cancel_reason"),
      concurrencyKey: optStr(row, "concurrency_key"),
      run: num(row, "run"),
      attempt: num(row, "attempt"),
      createdMs: num(row, "created_ms"),
      startedMs: optNum(row, "started_ms"),
      endedMs: optNum(row, "ended_ms"),
    };
  }

  event(row: SqlRow): ExecutionEvent {
    return {
      executionId: str(row, "execution_id"),
      seq: num(row, "seq"),
      type: str(row, "type"),
      data: this.jsonObject(row, "data"),
      atMs: num(row, "at_ms"),
    };
  }

  task(row: SqlRow): WorkerTask {
    return {
      taskId: str(row, "task_id"),
      executionId: str(row, "execution_id"),
      run: num(row, "run"),
      workflow: str(row, "workflow"),
      version: str(row, "version"),
      state: str(row, "state") as WorkerTaskState,
      attempt: num(row, "attempt"),
      leaseOwner: optStr(row, "lease_owner"),
      leaseUntilMs: optNum(row, "lease_until_ms"),
      availableMs: num(row, "available_ms"),
      createdMs: num(row, "created_ms"),
    };
  }

  schedule(row: SqlRow): ScheduleRow {
    return {
      scheduleId: str(row, "schedule_id"),
      workflow: str(row, "workflow"),
      version: optStr(row, "version"),
      input: this.jsonObject(row, "input"),
      spec: this.jsonObject(row, "spec"),
      paused: Boolean(row.paused),
      pauseNote: optStr(row, "pause_note"),
      state: str(row, "state") as ScheduleState,
      nextFireMs: optNum(row, "next_fire_ms"),
      dueMs: optNum(row, "due_ms"),
      retryMs: optNum(row, "retry_ms"),
      revision: num(row, "revision"),
      fired: num(row, "fired"),
      skipped: num(row, "skipped"),
      lastFireMs: optNum(row, "last_fire_ms"),
      lastExecutionId: optStr(row, "last_execution_id"),
      lastError: optStr(row, "last_error"),
      buffered: (this.json(row, "buffered") ?? []) as JsonValue[],
      concurrencyKey: optStr(row, "concurrency_key"),
      createdMs: num(row, "created_ms"),
      updatedMs: num(row, "updated_ms"),
      outcomes: {
        lastOutcome: this.json(row, "last_outcome") as unknown as ScheduleOutcome | null,
        lastSuccessMs: optNum(row, "last_success_ms"),
        lastFailureMs: optNum(row, "last_failure_ms"),
        consecutiveFailures: row.consecutive_failures == null ? 0 : num(row, "consecutive_failures"),
        failures: row.failures == null ? 0 : num(row, "failures"),
      },
    };
  }

  occurrence(row: SqlRow): OccurrenceRow {
    return {
      id: num(row, "id"),
      scheduleId: str(row, "schedule_id"),
      kind: str(row, "kind") as OccurrenceKind,
      occurrenceMs: optNum(row, "occurrence_ms"),
      rangeFromMs: optNum(row, "range_from_ms"),
      rangeToMs: optNum(row, "range_to_ms"),
      count: num(row, "count"),
      reason: optStr(row, "reason"),
      executionId: optStr(row, "execution_id"),
      error: optStr(row, "error"),
      recordedMs: num(row, "recorded_ms"),
    };
  }

  idempotency(row: SqlRow): IdempotencyRecord {
    return {
      scope: str(row, "scope"),
      key: str(row, "key"),
      requestHash: str(row, "request_hash"),
      response: this.json(row, "response"),
      status: num(row, "status"),
      createdMs: num(row, "created_ms"),
    };
  }
}

/** The schedule columns an update writes, in the order {@link scheduleParams} binds them. */
export const SCHEDULE_MUTABLE_COLUMNS = [
  "workflow",
  "version",
  "input",
  "spec",
  "paused",
  "pause_note",
  "state",
  "next_fire_ms",
  "due_ms",
  "retry_ms",
  "fired",
  "skipped",
  "last_fire_ms",
  "last_execution_id",
  "last_error",
  "buffered",
  "concurrency_key",
  "updated_ms",
] as const;

export function scheduleParams(row: ScheduleRow): SqlParam[] {
  return [
    row.workflow,
    row.version,
    jsonParam(row.input),
    jsonParam(row.spec),
    row.paused ? 1 : 0,
    row.pauseNote,
    row.state,
    row.nextFireMs,
    row.dueMs,
    row.retryMs,
    row.fired,
    row.skipped,
    row.lastFireMs,
    row.lastExecutionId,
    row.lastError,
    jsonParam(row.buffered),
    row.concurrencyKey,
    row.updatedMs,
  ];
}
