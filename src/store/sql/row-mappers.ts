/**
 * Turns driver rows into typed records, from the tables' declarations (tables.ts). Both drivers
 * return numbers for integer columns (the PostgreSQL store installs a BIGINT parser); JSON columns
 * go through the dialect.
 */
import type { Execution, ExecutionEvent } from "../../domain/execution.js";
import type { Workflow } from "../../domain/workflow.js";
import type { IdempotencyRecord, OccurrenceRow, ScheduleOutcome, ScheduleRow, WorkerTask } from "../rows.js";
import { readRow } from "./columns.js";
import type { SqlDialect } from "./dialect.js";
import type { SqlRow } from "./executor.js";
import { EVENTS, EXECUTIONS, IDEMPOTENCY_KEYS, OCCURRENCES, SCHEDULES, TASKS, WORKFLOWS } from "./tables.js";

const optNumber = (v: unknown): number | null => (v == null ? null : Number(v));

export class RowMapper {
  constructor(private readonly dialect: SqlDialect) {}

  workflow(row: SqlRow): Workflow {
    return readRow(WORKFLOWS, row, this.dialect);
  }

  execution(row: SqlRow): Execution {
    return readRow(EXECUTIONS, row, this.dialect);
  }

  event(row: SqlRow): ExecutionEvent {
    return readRow(EVENTS, row, this.dialect);
  }

  task(row: SqlRow): WorkerTask {
    return readRow(TASKS, row, this.dialect);
  }

  /** A schedule with its outcome columns (migration 0005; written only by setScheduleOutcomes). */
  schedule(row: SqlRow): ScheduleRow {
    const lastOutcome = row.last_outcome == null ? null : this.dialect.readJson(row.last_outcome);
    return {
      ...readRow(SCHEDULES, row, this.dialect),
      outcomes: {
        lastOutcome: lastOutcome as ScheduleOutcome | null,
        lastSuccessMs: optNumber(row.last_success_ms),
        lastFailureMs: optNumber(row.last_failure_ms),
        consecutiveFailures: Number(row.consecutive_failures ?? 0),
        failures: Number(row.failures ?? 0),
      },
    };
  }

  occurrence(row: SqlRow): OccurrenceRow {
    return readRow(OCCURRENCES, row, this.dialect);
  }

  idempotency(row: SqlRow): IdempotencyRecord {
    return readRow(IDEMPOTENCY_KEYS, row, this.dialect);
  }
}
