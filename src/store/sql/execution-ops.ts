/**
 * Workflow, execution, event and worker-task operations, written once in portable SQL for both
 * dialects. Each method is one statement (see Store), so it is atomic outside a transaction too.
 */
import semver from "semver";
import type { Execution, ExecutionEvent, ExecutionStatus } from "../../domain/execution.js";
import type { JsonObject } from "../../domain/json.js";
import type { Workflow } from "../../domain/workflow.js";
import type { WorkerTask, WorkerTaskPatch } from "../rows.js";
import type { DialectName, ExecutionFilter, ExecutionPatch, LockOption, NewEvent, TransactionEnd } from "../store.js";
import { batchInsertSql, type ColumnSet, columnSet, fieldsExcept, jsonParam } from "./columns.js";
import type { SqlDialect } from "./dialect.js";
import type { SqlExecutor, SqlParam } from "./executor.js";
import { RowMapper } from "./row-mappers.js";
import { EXECUTION_ALL, EXECUTIONS, READ, TASK_ALL, TASKS } from "./tables.js";
import type { TransactionEnds } from "./transaction-ends.js";

const INSERT_EXECUTION = batchInsertSql(EXECUTIONS, EXECUTION_ALL, {
  tail: "ON CONFLICT (execution_id) DO NOTHING",
});
/** The created instant of the execution whose id is the one `?`: what its events and tasks are keyed by on SQLite. */
const CREATED_OF = "(SELECT created_ms FROM orbit_executions WHERE execution_id = ?)";
/** {@link CREATED_OF} for each row `u` of a PostgreSQL `unnest` that has an `execution_id` column. */
export const CREATED_OF_UNNESTED =
  "(SELECT x.created_ms FROM orbit_executions AS x WHERE x.execution_id = u.execution_id)";
/**
 * A task row with its execution's created instant (`execution_created_ms`, read from the
 * execution's row; migration 0015). `single` takes the task's parameters and then its execution id.
 */
const INSERT_TASK = batchInsertSql(TASKS, TASK_ALL, {
  derived: {
    column: "execution_created_ms",
    single: CREATED_OF,
    unnested: CREATED_OF_UNNESTED,
  },
});
const insertTaskParams = (t: WorkerTask): SqlParam[] => [...TASK_ALL.params(t), t.executionId];
/**
 * The list's summary (ExecutionFilter.summary): every column but input and result, which may be
 * megabytes each (a 900 KB result made a page of 50 a 43 MB answer); each row then carries input
 * `{}` and result null.
 */
const SUMMARY_COLUMNS = columnSet(EXECUTIONS, fieldsExcept(EXECUTIONS, ["input", "result"])).list;

/** A statement's SQL with the parameters it takes for its subject. */
interface SqlFor<T> {
  sql: string;
  params: (subject: T) => SqlParam[];
}

/**
 * Where one execution's events and tasks are, in `WHERE` form with the parameters it takes for an
 * id. SQLite keys events by (execution_created_ms, execution_id, seq) and indexes tasks by
 * (execution_created_ms, execution_id) (migrations 0014 and 0015, docs/storage.md § Events in
 * creation order), so it finds the execution's created instant first; PostgreSQL keeps the keys
 * that start with execution_id.
 */
const OF_EXECUTION: Record<DialectName, SqlFor<string>> = {
  sqlite: { sql: `execution_created_ms = ${CREATED_OF} AND execution_id = ?`, params: (id) => [id, id] },
  postgres: { sql: "execution_id = ?", params: (id) => [id] },
};

/**
 * One event at its execution's next seq (`RETURNING seq` when `returning`), and its parameters.
 * The created instant is read from the execution's row (an event of an execution that does not
 * exist takes its own instant). A scalar subquery inside VALUES (not INSERT … SELECT) so
 * PostgreSQL types each parameter from its target column (the JSON text becomes jsonb).
 */
function appendEvent(dialect: DialectName, returning: boolean): SqlFor<NewEvent> {
  const where = OF_EXECUTION[dialect];
  return {
    sql: `INSERT INTO orbit_execution_events (execution_id, seq, type, data, at_ms, execution_created_ms)
      VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM orbit_execution_events WHERE ${where.sql}), ?, ?, ?,
        COALESCE(${CREATED_OF}, ?))${returning ? " RETURNING seq" : ""}`,
    params: (e) => [
      e.executionId,
      ...where.params(e.executionId),
      e.type,
      jsonParam(e.data),
      e.atMs,
      e.executionId,
      e.atMs,
    ],
  };
}

/** {@link appendEvent}, built once per dialect: without RETURNING (a batch) and with it (one event). */
const APPEND_EVENT: Record<DialectName, { batch: SqlFor<NewEvent>; one: SqlFor<NewEvent> }> = {
  sqlite: { batch: appendEvent("sqlite", false), one: appendEvent("sqlite", true) },
  postgres: { batch: appendEvent("postgres", false), one: appendEvent("postgres", true) },
};

/** The statement that appends each event of a batch on `dialect` (TaskOps.appendEvents, SQLite). */
export const appendEventSql = (dialect: SqlDialect): SqlFor<NewEvent> => APPEND_EVENT[dialect.name].batch;

/**
 * The data of `WorkflowCreated` built from the execution's row (insertCreatedEvents): its
 * `{workflow, version, input}`, plus `schedule_id` and `trigger` when set. So a start's input and
 * trigger are encoded and sent once, with the execution, not again inside its event (a third of
 * the bytes of a fire's statements on PostgreSQL; docs/benchmarks.md § Firing). SQLite: the text
 * JSON.stringify writes for that object, put together from the stored JSON texts (copied, not
 * parsed again); PostgreSQL the same, as a JSON value (which keeps the text's key order).
 */
const CREATED_DATA: Record<DialectName, string> = {
  sqlite: `'{"workflow":' || json_quote(workflow) || ',"version":' || json_quote(version)
    || ',"input":' || COALESCE(input, 'null')
    || CASE WHEN schedule_id IS NULL THEN '' ELSE ',"schedule_id":' || json_quote(schedule_id) END
    || CASE WHEN "trigger" IS NULL THEN '' ELSE ',"trigger":' || "trigger" END || '}'`,
  postgres: `('{"workflow":' || to_json(workflow)::text || ',"version":' || to_json(version)::text
    || ',"input":' || COALESCE(input::text, 'null')
    || CASE WHEN schedule_id IS NULL THEN '' ELSE ',"schedule_id":' || to_json(schedule_id)::text END
    || CASE WHEN "trigger" IS NULL THEN '' ELSE ',"trigger":' || "trigger"::text END || '}')::json`,
};

/** The columns an execution patch may set, by the patch's field. */
const EXECUTION_PATCH: readonly (keyof ExecutionPatch & keyof Execution)[] = [
  "status",
  "result",
  "error",
  "cancelReason",
  "run",
  "attempt",
  "startedMs",
  "endedMs",
  "trigger",
];
const TASK_PATCH: readonly (keyof WorkerTaskPatch)[] = [
  "state",
  "attempt",
  "leaseOwner",
  "leaseUntilMs",
  "leaseIdentity",
  "availableMs",
];

/** Highest semver first; SQL orders by the numeric parts, this settles prereleases exactly. */
function bySemverDesc(a: Workflow, b: Workflow): number {
  return a.name === b.name ? semver.rcompare(a.version, b.version) : a.name < b.name ? -1 : 1;
}

export class ExecutionOps {
  protected readonly map: RowMapper;

  constructor(
    protected readonly exec: SqlExecutor,
    protected readonly sqlDialect: SqlDialect,
    /** A top-level transaction's end hooks (StoreOps.onEnd); null outside one or in a nested one. */
    private readonly ends: TransactionEnds | null = null,
  ) {
    this.map = new RowMapper(sqlDialect);
  }

  onEnd(end: TransactionEnd): boolean {
    if (this.ends === null) return false;
    this.ends.add(end);
    return true;
  }

  protected lock(lock: LockOption | undefined): string {
    return lock?.forUpdate ? this.sqlDialect.forUpdate : "";
  }

  /**
   * Inserts `rows` with a statement whose conflicts are skipped (`ON CONFLICT … DO NOTHING`) and
   * returns the keys of the rows inserted, in the rows' order, each once: row by row on SQLite, one
   * `unnest` statement on PostgreSQL whatever the number of rows.
   */
  protected async insertSkippingConflicts<R>(
    sql: { single: string; unnest: string },
    set: ColumnSet<R>,
    rows: readonly R[],
    key: { column: string; of: (row: R) => string },
  ): Promise<string[]> {
    if (rows.length === 0) return [];
    if (this.sqlDialect.batch === "rows") {
      const changed = await this.exec.runMany(sql.single, rows.map(set.params));
      return rows.filter((_, i) => changed[i] === 1).map(key.of);
    }
    const inserted = await this.exec.all(`${sql.unnest} RETURNING ${key.column}`, set.arrays(rows));
    const keys = new Set(inserted.map((r) => String(r[key.column])));
    return rows.map(key.of).filter((k) => keys.delete(k));
  }

  // Workflows

  async insertWorkflow(w: Workflow): Promise<boolean> {
    const v = semver.parse(w.version);
    if (!v) throw new Error(`workflow version ${w.version} is not semver`);
    const changed = await this.exec.run(
      `INSERT INTO orbit_workflows (name, version, version_major, version_minor, version_patch, version_prerelease, input_schema, description, created_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name, version) DO NOTHING`,
      [
        w.name,
        w.version,
        v.major,
        v.minor,
        v.patch,
        v.prerelease.length ? v.prerelease.join(".") : null,
        jsonParam(w.inputSchema),
        w.description,
        w.createdMs,
      ],
    );
    return changed === 1;
  }

  async getWorkflow(name: string, version: string): Promise<Workflow | null> {
    const rows = await this.exec.all(`SELECT ${READ.workflows} FROM orbit_workflows WHERE name = ? AND version = ?`, [
      name,
      version,
    ]);
    return rows[0] ? this.map.workflow(rows[0]) : null;
  }

  async listWorkflowVersions(name: string): Promise<Workflow[]> {
    const rows = await this.exec.all(
      `SELECT ${READ.workflows} FROM orbit_workflows WHERE name = ? ORDER BY version_major DESC, version_minor DESC, version_patch DESC`,
      [name],
    );
    return rows.map((r) => this.map.workflow(r)).sort(bySemverDesc);
  }

  async listWorkflows(): Promise<Workflow[]> {
    const rows = await this.exec.all(
      `SELECT ${READ.workflows} FROM orbit_workflows ORDER BY name, version_major DESC, version_minor DESC, version_patch DESC`,
      [],
    );
    return rows.map((r) => this.map.workflow(r)).sort(bySemverDesc);
  }

  // Executions

  async insertExecution(e: Execution): Promise<boolean> {
    return (await this.exec.run(INSERT_EXECUTION.single, EXECUTION_ALL.params(e))) === 1;
  }

  async insertExecutions(executions: readonly Execution[]): Promise<string[]> {
    return this.insertSkippingConflicts(INSERT_EXECUTION, EXECUTION_ALL, executions, {
      column: "execution_id",
      of: (e) => e.executionId,
    });
  }

  async getExecutionStatuses(executionIds: readonly string[]): Promise<Map<string, ExecutionStatus>> {
    const statuses = new Map<string, ExecutionStatus>();
    if (executionIds.length === 0) return statuses;
    const ids = this.sqlDialect.inList("execution_id", executionIds);
    const rows = await this.exec.all(`SELECT execution_id, status FROM orbit_executions WHERE ${ids.sql}`, [ids.param]);
    for (const row of rows) statuses.set(String(row.execution_id), String(row.status) as ExecutionStatus);
    return statuses;
  }

  async getExecutionErrorTypes(executionIds: readonly string[]): Promise<Map<string, string>> {
    const types = new Map<string, string>();
    if (executionIds.length === 0) return types;
    const ids = this.sqlDialect.inList("execution_id", executionIds);
    const type = this.sqlDialect.jsonText("error", "type");
    const rows = await this.exec.all(
      `SELECT execution_id, ${type} AS error_type FROM orbit_executions WHERE ${ids.sql} AND error IS NOT NULL`,
      [ids.param],
    );
    for (const row of rows) if (typeof row.error_type === "string") types.set(String(row.execution_id), row.error_type);
    return types;
  }

  async getExecution(executionId: string, lock?: LockOption): Promise<Execution | null> {
    const rows = await this.exec.all(
      `SELECT ${EXECUTION_ALL.list} FROM orbit_executions WHERE execution_id = ?${this.lock(lock)}`,
      [executionId],
    );
    return rows[0] ? this.map.execution(rows[0]) : null;
  }

  async updateExecution(executionId: string, patch: ExecutionPatch): Promise<boolean> {
    const fields = EXECUTION_PATCH.filter((k) => patch[k] !== undefined);
    if (!fields.length) return (await this.getExecution(executionId)) !== null;
    const set = columnSet(EXECUTIONS, fields);
    const params = set.params(patch as Execution);
    return (
      (await this.exec.run(`UPDATE orbit_executions SET ${set.sets} WHERE execution_id = ?`, [
        ...params,
        executionId,
      ])) > 0
    );
  }

  async countActiveExecutions(): Promise<number> {
    const rows = await this.exec.all(
      "SELECT COUNT(*) AS n FROM orbit_executions WHERE status IN ('RUNNING', 'COMPENSATING')",
      [],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async countExecutionsByStatus(): Promise<Partial<Record<ExecutionStatus, number>>> {
    const rows = await this.exec.all("SELECT status, COUNT(*) AS n FROM orbit_executions GROUP BY status", []);
    const counts: Partial<Record<ExecutionStatus, number>> = {};
    for (const row of rows) counts[String(row.status) as ExecutionStatus] = Number(row.n);
    return counts;
  }

  async findActiveExecutionWithKey(key: string, otherThan: string | null = null): Promise<Execution | null> {
    // One of another schedule first: which holder answers decides skip vs cancel (docs/scheduling.md).
    const rows = await this.exec.all(
      `SELECT ${EXECUTION_ALL.list} FROM orbit_executions
       WHERE concurrency_key = ? AND status IN ('RUNNING', 'COMPENSATING')
       ORDER BY CASE WHEN schedule_id = ? THEN 1 ELSE 0 END LIMIT 1`,
      [key, otherThan],
    );
    return rows[0] ? this.map.execution(rows[0]) : null;
  }

  async lockExecutionAdmission(): Promise<void> {
    if (this.sqlDialect.admissionLock) await this.exec.all(this.sqlDialect.admissionLock, []);
  }

  async lockConcurrencyKey(key: string): Promise<void> {
    if (this.sqlDialect.concurrencyKeyLock) await this.exec.all(this.sqlDialect.concurrencyKeyLock, [key]);
  }

  async lockApplyScope(scope: string): Promise<void> {
    if (this.sqlDialect.applyScopeLock) await this.exec.all(this.sqlDialect.applyScopeLock, [scope]);
  }

  async listExecutions(filter: ExecutionFilter): Promise<Execution[]> {
    const where: string[] = [];
    const params: SqlParam[] = [];
    const equal = (column: string, value: string | undefined): void => {
      if (value === undefined) return;
      where.push(`${column} = ?`);
      params.push(value);
    };
    equal("workflow", filter.workflow);
    if (filter.workflows !== undefined) {
      const list = this.sqlDialect.inList("workflow", filter.workflows);
      where.push(list.sql);
      params.push(list.param);
    }
    equal("status", filter.status);
    equal("schedule_id", filter.scheduleId);
    if (filter.createdFromMs !== undefined) {
      where.push("created_ms >= ?");
      params.push(filter.createdFromMs);
    }
    if (filter.createdToMs !== undefined) {
      where.push("created_ms < ?");
      params.push(filter.createdToMs);
    }
    if (filter.before) {
      where.push("(created_ms, execution_id) < (?, ?)");
      params.push(filter.before.createdMs, filter.before.executionId);
    }
    params.push(filter.limit);
    const columns = filter.summary === true ? SUMMARY_COLUMNS : EXECUTION_ALL.list;
    const rows = await this.exec.all(
      `SELECT ${columns} FROM orbit_executions${where.length ? ` WHERE ${where.join(" AND ")}` : ""}
       ORDER BY created_ms DESC, execution_id DESC LIMIT ?`,
      params,
    );
    // A summary row has no input or result: the reader takes them as NULL ({} and null).
    return rows.map((r) => this.map.execution(r));
  }

  /** Tells every server, when this transaction commits, that a cancel was requested (SqlDialect.cancelNotify). */
  async notifyCancelRequested(): Promise<void> {
    if (this.sqlDialect.cancelNotify) await this.exec.all(this.sqlDialect.cancelNotify, []);
  }

  async appendEvent(executionId: string, type: string, data: JsonObject, atMs: number): Promise<ExecutionEvent> {
    const append = APPEND_EVENT[this.sqlDialect.name].one;
    const rows = await this.exec.all(append.sql, append.params({ executionId, type, data, atMs }));
    return { executionId, seq: Number(rows[0]?.seq), type, data, atMs };
  }

  async insertCreatedEvents(executions: readonly Execution[]): Promise<void> {
    if (executions.length === 0) return;
    const ids = this.sqlDialect.inList(
      "execution_id",
      executions.map((e) => e.executionId),
    );
    await this.exec.run(
      `INSERT INTO orbit_execution_events (execution_id, seq, type, data, at_ms, execution_created_ms)
       SELECT execution_id, 1, 'WorkflowCreated', ${CREATED_DATA[this.sqlDialect.name]}, created_ms, created_ms
       FROM orbit_executions WHERE ${ids.sql}`,
      [ids.param],
    );
  }

  async listEvents(executionId: string): Promise<ExecutionEvent[]> {
    const where = OF_EXECUTION[this.sqlDialect.name];
    const rows = await this.exec.all(
      `SELECT ${READ.events} FROM orbit_execution_events WHERE ${where.sql} ORDER BY seq`,
      where.params(executionId),
    );
    return rows.map((r) => this.map.event(r));
  }

  // Worker tasks

  async insertTask(t: WorkerTask): Promise<void> {
    await this.exec.run(INSERT_TASK.single, insertTaskParams(t));
  }

  async insertTasks(tasks: readonly WorkerTask[]): Promise<void> {
    if (tasks.length === 0) return;
    if (this.sqlDialect.batch === "rows") {
      await this.exec.runMany(INSERT_TASK.single, tasks.map(insertTaskParams));
      return;
    }
    await this.exec.run(INSERT_TASK.unnest, TASK_ALL.arrays(tasks));
  }

  async getTaskForExecution(executionId: string, lock?: LockOption): Promise<WorkerTask | null> {
    const where = OF_EXECUTION[this.sqlDialect.name];
    const rows = await this.exec.all(
      `SELECT ${READ.tasks} FROM orbit_worker_tasks WHERE ${where.sql} ORDER BY run DESC, created_ms DESC LIMIT 1${this.lock(lock)}`,
      where.params(executionId),
    );
    return rows[0] ? this.map.task(rows[0]) : null;
  }

  async updateTask(taskId: string, patch: WorkerTaskPatch): Promise<boolean> {
    const fields = TASK_PATCH.filter((k) => patch[k] !== undefined);
    if (!fields.length) return false;
    const set = columnSet(TASKS, fields);
    return (
      (await this.exec.run(`UPDATE orbit_worker_tasks SET ${set.sets} WHERE task_id = ?`, [
        ...set.params(patch as WorkerTask),
        taskId,
      ])) > 0
    );
  }
}
