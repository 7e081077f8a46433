/**
 * Workflow, execution, event and worker-task operations, written once in portable SQL for both
 * dialects. Each method is one statement (see Store), so it is atomic outside a transaction too.
 */
import semver from "semver";
import type { Execution, ExecutionEvent, ExecutionStatus } from "../../domain/execution.js";
import type { JsonObject } from "../../domain/json.js";
import type { Workflow } from "../../domain/workflow.js";
import type { WorkerTask, WorkerTaskPatch } from "../rows.js";
import type { ExecutionFilter, ExecutionPatch, FirstEvent, LockOption } from "../store.js";
import { pgColumn } from "./batch.js";
import type { SqlDialect } from "./dialect.js";
import type { SqlExecutor, SqlParam } from "./executor.js";
import { jsonParam, RowMapper } from "./row-mappers.js";

const EXECUTION_COLUMNS =
  'execution_id, workflow, version, input, status, schedule_id, "trigger", result, error, cancel_reason, concurrency_key, run, attempt, created_ms, started_ms, ended_ms';

const EXECUTION_PATCH_COLUMNS: Record<keyof ExecutionPatch, string> = {
  status: "status",
  result: "result",
  error: "error",
  cancelReason: "cancel_reason",
  run: "run",
  attempt: "attempt",
  startedMs: "started_ms",
  endedMs: "ended_ms",
  trigger: '"trigger"',
};

const TASK_PATCH_COLUMNS: Record<keyof WorkerTaskPatch, string> = {
  state: "state",
  attempt: "attempt",
  leaseOwner: "lease_owner",
  leaseUntilMs: "lease_until_ms",
  availableMs: "available_ms",
};

const INSERT_EXECUTION = `INSERT INTO orbit_executions (${EXECUTION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (execution_id) DO NOTHING`;

function executionParams(e: Execution): SqlParam[] {
  return [
    e.executionId,
    e.workflow,
    e.version,
    jsonParam(e.input),
    e.status,
    e.scheduleId,
    jsonParam(e.trigger),
    jsonParam(e.result),
    jsonParam(e.error),
    e.cancelReason,
    e.concurrencyKey,
    e.run,
    e.attempt,
    e.createdMs,
    e.startedMs,
    e.endedMs,
  ];
}

const INSERT_TASK = `INSERT INTO orbit_worker_tasks (task_id, execution_id, run, workflow, version, state, attempt, lease_owner, lease_until_ms, available_ms, created_ms)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

function taskParams(t: WorkerTask): SqlParam[] {
  return [
    t.taskId,
    t.executionId,
    t.run,
    t.workflow,
    t.version,
    t.state,
    t.attempt,
    t.leaseOwner,
    t.leaseUntilMs,
    t.availableMs,
    t.createdMs,
  ];
}

/** Highest semver first; SQL orders by the numeric parts, this settles prereleases exactly. */
function bySemverDesc(a: Workflow, b: Workflow): number {
  return a.name === b.name ? semver.rcompare(a.version, b.version) : a.name < b.name ? -1 : 1;
}

export class ExecutionOps {
  protected readonly map: RowMapper;

  constructor(
    protected readonly exec: SqlExecutor,
    protected readonly sqlDialect: SqlDialect,
  ) {
    this.map = new RowMapper(sqlDialect);
  }

  protected lock(lock: LockOption | undefined): string {
    return lock?.forUpdate ? this.sqlDialect.forUpdate : "";
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
    const rows = await this.exec.all("SELECT * FROM orbit_workflows WHERE name = ? AND version = ?", [name, version]);
    return rows[0] ? this.map.workflow(rows[0]) : null;
  }

  async listWorkflowVersions(name: string): Promise<Workflow[]> {
    const rows = await this.exec.all(
      "SELECT * FROM orbit_workflows WHERE name = ? ORDER BY version_major DESC, version_minor DESC, version_patch DESC",
      [name],
    );
    return rows.map((r) => this.map.workflow(r)).sort(bySemverDesc);
  }

  async listWorkflows(): Promise<Workflow[]> {
    const rows = await this.exec.all(
      "SELECT * FROM orbit_workflows ORDER BY name, version_major DESC, version_minor DESC, version_patch DESC",
      [],
    );
    return rows.map((r) => this.map.workflow(r)).sort(bySemverDesc);
  }

  // Executions

  async insertExecution(e: Execution): Promise<boolean> {
    return (await this.exec.run(INSERT_EXECUTION, executionParams(e))) === 1;
  }

  async insertExecutions(executions: readonly Execution[]): Promise<string[]> {
    if (executions.length === 0) return [];
    if (this.sqlDialect.name !== "postgres") {
      const changed = await this.exec.runMany(INSERT_EXECUTION, executions.map(executionParams));
      return executions.filter((_, i) => changed[i] === 1).map((e) => e.executionId);
    }
    const rows = await this.exec.all(
      `INSERT INTO orbit_executions (${EXECUTION_COLUMNS})
       SELECT u.execution_id, u.workflow, u.version, u.input::jsonb, u.status, u.schedule_id, u.trig::jsonb,
              u.result::jsonb, u.error::jsonb, u.cancel_reason, u.concurrency_key, u.run, u.attempt, u.created_ms,
              u.started_ms, u.ended_ms
       FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[],
                   ?::text[], ?::text[], ?::int[], ?::int[], ?::bigint[], ?::bigint[], ?::bigint[])
         AS u(execution_id, workflow, version, input, status, schedule_id, trig, result, error, cancel_reason,
              concurrency_key, run, attempt, created_ms, started_ms, ended_ms)
       ON CONFLICT (execution_id) DO NOTHING RETURNING execution_id`,
      [
        pgColumn(executions, (e) => e.executionId),
        pgColumn(executions, (e) => e.workflow),
        pgColumn(executions, (e) => e.version),
        pgColumn(executions, (e) => jsonParam(e.input)),
        pgColumn(executions, (e) => e.status),
        pgColumn(executions, (e) => e.scheduleId),
        pgColumn(executions, (e) => jsonParam(e.trigger)),
        pgColumn(executions, (e) => jsonParam(e.result)),
        pgColumn(executions, (e) => jsonParam(e.error)),
        pgColumn(executions, (e) => e.cancelReason),
        pgColumn(executions, (e) => e.concurrencyKey),
        pgColumn(executions, (e) => e.run),
        pgColumn(executions, (e) => e.attempt),
        pgColumn(executions, (e) => e.createdMs),
        pgColumn(executions, (e) => e.startedMs),
        pgColumn(executions, (e) => e.endedMs),
      ],
    );
    return rows.map((r) => String(r.execution_id));
  }

  async getExecutionStatuses(executionIds: readonly string[]): Promise<Map<string, ExecutionStatus>> {
    const statuses = new Map<string, ExecutionStatus>();
    if (executionIds.length === 0) return statuses;
    const rows =
      this.sqlDialect.name === "postgres"
        ? await this.exec.all("SELECT execution_id, status FROM orbit_executions WHERE execution_id = ANY(?::text[])", [
            pgColumn(executionIds, (id) => id),
          ])
        : await this.exec.all(
            "SELECT execution_id, status FROM orbit_executions WHERE execution_id IN (SELECT value FROM json_each(?))",
            [JSON.stringify(executionIds)],
          );
    for (const row of rows) statuses.set(String(row.execution_id), String(row.status) as ExecutionStatus);
    return statuses;
  }

  async getExecution(executionId: string, lock?: LockOption): Promise<Execution | null> {
    const rows = await this.exec.all(
      `SELECT ${EXECUTION_COLUMNS} FROM orbit_executions WHERE execution_id = ?${this.lock(lock)}`,
      [executionId],
    );
    return rows[0] ? this.map.execution(rows[0]) : null;
  }

  async updateExecution(executionId: string, patch: ExecutionPatch): Promise<boolean> {
    const sets: string[] = [];
    const params: SqlParam[] = [];
    for (const [key, column] of Object.entries(EXECUTION_PATCH_COLUMNS) as [keyof ExecutionPatch, string][]) {
      if (!(key in patch) || patch[key] === undefined) continue;
      sets.push(`${column} = ?`);
      const value = patch[key];
      params.push(
        key === "result" || key === "error" || key === "trigger" ? jsonParam(patch[key]) : (value as SqlParam),
      );
    }
    if (!sets.length) return (await this.getExecution(executionId)) !== null;
    params.push(executionId);
    return (await this.exec.run(`UPDATE orbit_executions SET ${sets.join(", ")} WHERE execution_id = ?`, params)) > 0;
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

  async findActiveExecutionWithKey(key: string): Promise<Execution | null> {
    const rows = await this.exec.all(
      `SELECT ${EXECUTION_COLUMNS} FROM orbit_executions
       WHERE concurrency_key = ? AND status IN ('RUNNING', 'COMPENSATING') LIMIT 1`,
      [key],
    );
    return rows[0] ? this.map.execution(rows[0]) : null;
  }

  async lockExecutionAdmission(): Promise<void> {
    if (this.sqlDialect.admissionLock) await this.exec.all(this.sqlDialect.admissionLock, []);
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
    const rows = await this.exec.all(
      `SELECT ${EXECUTION_COLUMNS} FROM orbit_executions${where.length ? ` WHERE ${where.join(" AND ")}` : ""}
       ORDER BY created_ms DESC, execution_id DESC LIMIT ?`,
      params,
    );
    return rows.map((r) => this.map.execution(r));
  }

  async appendEvent(executionId: string, type: string, data: JsonObject, atMs: number): Promise<ExecutionEvent> {
    // A scalar subquery inside VALUES (not INSERT … SELECT) so PostgreSQL types each parameter
    // from its target column (the JSON text becomes jsonb).
    const rows = await this.exec.all(
      `INSERT INTO orbit_execution_events (execution_id, seq, type, data, at_ms)
       VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM orbit_execution_events WHERE execution_id = ?), ?, ?, ?)
       RETURNING seq`,
      [executionId, executionId, type, jsonParam(data), atMs],
    );
    return { executionId, seq: Number(rows[0]?.seq), type, data, atMs };
  }

  async insertFirstEvents(events: readonly FirstEvent[]): Promise<void> {
    if (events.length === 0) return;
    if (this.sqlDialect.name !== "postgres") {
      await this.exec.runMany(
        "INSERT INTO orbit_execution_events (execution_id, seq, type, data, at_ms) VALUES (?, 1, ?, ?, ?)",
        events.map((e) => [e.executionId, e.type, jsonParam(e.data), e.atMs]),
      );
      return;
    }
    await this.exec.run(
      `INSERT INTO orbit_execution_events (execution_id, seq, type, data, at_ms)
       SELECT u.execution_id, 1, u.type, u.data::jsonb, u.at_ms
       FROM unnest(?::text[], ?::text[], ?::text[], ?::bigint[]) AS u(execution_id, type, data, at_ms)`,
      [
        pgColumn(events, (e) => e.executionId),
        pgColumn(events, (e) => e.type),
        pgColumn(events, (e) => jsonParam(e.data)),
        pgColumn(events, (e) => e.atMs),
      ],
    );
  }

  async listEvents(executionId: string): Promise<ExecutionEvent[]> {
    const rows = await this.exec.all("SELECT * FROM orbit_execution_events WHERE execution_id = ? ORDER BY seq", [
      executionId,
    ]);
    return rows.map((r) => this.map.event(r));
  }

  // Worker tasks

  async insertTask(t: WorkerTask): Promise<void> {
    await this.exec.run(INSERT_TASK, taskParams(t));
  }

  async insertTasks(tasks: readonly WorkerTask[]): Promise<void> {
    if (tasks.length === 0) return;
    if (this.sqlDialect.name !== "postgres") {
      await this.exec.runMany(INSERT_TASK, tasks.map(taskParams));
      return;
    }
    await this.exec.run(
      `INSERT INTO orbit_worker_tasks (task_id, execution_id, run, workflow, version, state, attempt, lease_owner, lease_until_ms, available_ms, created_ms)
       SELECT * FROM unnest(?::text[], ?::text[], ?::int[], ?::text[], ?::text[], ?::text[], ?::int[], ?::text[],
                            ?::bigint[], ?::bigint[], ?::bigint[])`,
      [
        pgColumn(tasks, (t) => t.taskId),
        pgColumn(tasks, (t) => t.executionId),
        pgColumn(tasks, (t) => t.run),
        pgColumn(tasks, (t) => t.workflow),
        pgColumn(tasks, (t) => t.version),
        pgColumn(tasks, (t) => t.state),
        pgColumn(tasks, (t) => t.attempt),
        pgColumn(tasks, (t) => t.leaseOwner),
        pgColumn(tasks, (t) => t.leaseUntilMs),
        pgColumn(tasks, (t) => t.availableMs),
        pgColumn(tasks, (t) => t.createdMs),
      ],
    );
  }

  async getTaskForExecution(executionId: string, lock?: LockOption): Promise<WorkerTask | null> {
    const rows = await this.exec.all(
      `SELECT * FROM orbit_worker_tasks WHERE execution_id = ? ORDER BY run DESC, created_ms DESC LIMIT 1${this.lock(lock)}`,
      [executionId],
    );
    return rows[0] ? this.map.task(rows[0]) : null;
  }

  async updateTask(taskId: string, patch: WorkerTaskPatch): Promise<boolean> {
    const sets: string[] = [];
    const params: SqlParam[] = [];
    for (const [key, column] of Object.entries(TASK_PATCH_COLUMNS) as [keyof WorkerTaskPatch, string][]) {
      if (patch[key] === undefined) continue;
      sets.push(`${column} = ?`);
      params.push(patch[key]);
    }
    if (!sets.length) return false;
    params.push(taskId);
    return (await this.exec.run(`UPDATE orbit_worker_tasks SET ${sets.join(", ")} WHERE task_id = ?`, params)) > 0;
  }
}
