/**
 * Turns driver rows into typed records, from the tables' declarations (tables.ts). Both drivers
 * return numbers for integer columns (the PostgreSQL store installs a BIGINT parser); JSON columns
 * go through the dialect.
 */
import type { Execution, ExecutionEvent } from "../../domain/execution.js";
import type { Workflow } from "../../domain/workflow.js";
import type { IdempotencyRecord, OccurrenceRow, ScheduleOutcome, ScheduleRow, WorkerTask } from "../rows.js";
import { col, rowReader } from "./columns.js";
import type { SqlDialect } from "./dialect.js";
import type { SqlRow } from "./executor.js";
import { EVENTS, EXECUTIONS, IDEMPOTENCY_KEYS, OCCURRENCES, SCHEDULES, TASKS, WORKFLOWS } from "./tables.js";

const optNumber = (v: unknown): number | null => (v == null ? null : Number(v));

/** How many distinct stored settings texts a schedule read keeps parsed: two pages of the largest size. */
const SPECS_KEPT = 2000;

/**
 * A schedule with its outcome columns (migration 0005; written only by setScheduleOutcomes), its
 * settings interned: a row read again unchanged (a page the web UI refreshes) brings back the
 * settings object already checked. Not the firing loop's due rows (SCHEDULES.read): a herd is
 * thousands of rows read once each, for which the look-up would only add work.
 */
const readSchedule = rowReader(
  { ...SCHEDULES.columns, spec: col.internedJsonObject("spec", SPECS_KEPT) },
  SCHEDULES.fields,
  {
    outcomes: (row, dialect): ScheduleRow["outcomes"] => ({
      lastOutcome: (row.last_outcome == null ? null : dialect.readJson(row.last_outcome)) as ScheduleOutcome | null,
      lastSuccessMs: optNumber(row.last_success_ms),
      lastFailureMs: optNumber(row.last_failure_ms),
      consecutiveFailures: Number(row.consecutive_failures ?? 0),
      failures: Number(row.failures ?? 0),
    }),
  },
);

export class RowMapper {
  constructor(private readonly dialect: SqlDialect) {}

  workflow(row: SqlRow): Workflow {
    return WORKFLOWS.read(row, this.dialect);
  }

  execution(row: SqlRow): Execution {
    return EXECUTIONS.read(row, this.dialect);
  }

  event(row: SqlRow): ExecutionEvent {
    return EVENTS.read(row, this.dialect);
  }

  task(row: SqlRow): WorkerTask {
    return TASKS.read(row, this.dialect);
  }

  schedule(row: SqlRow): ScheduleRow {
    return readSchedule(row, this.dialect);
  }

  occurrence(row: SqlRow): OccurrenceRow {
    return OCCURRENCES.read(row, this.dialect);
  }

  idempotency(row: SqlRow): IdempotencyRecord {
    return IDEMPOTENCY_KEYS.read(row, this.dialect);
  }
}
