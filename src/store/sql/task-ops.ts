/**
 * Worker-protocol operations (see src/store/task-store.ts) in portable SQL: task leases and the
 * step journal. Sits between ExecutionOps and SqlOps so that both dialects get them.
 */
import type { Execution } from "../../domain/execution.js";
import type { JsonObject, JsonValue } from "../../domain/json.js";
import type { WorkerTaskState } from "../rows.js";
import type { LockOption, NewEvent } from "../store.js";
import type {
  ClaimableTaskQuery,
  ClaimCandidate,
  CompletionWrites,
  GracedLeases,
  NewLease,
  ReadyTasks,
  StepResultRow,
  TaskLease,
  TaskStoreOps,
  WorkflowRef,
} from "../task-store.js";
import { arrayParam, type Columns, jsonParam, quote, rowReader } from "./columns.js";
import { appendEventSql, CREATED_OF_UNNESTED, ExecutionOps } from "./execution-ops.js";
import type { SqlParam, SqlRow } from "./executor.js";
import { EXECUTION_ALL, EXECUTIONS, READ, TASKS } from "./tables.js";

/** `((workflow = ? AND version = ?) OR …)` for a worker's workflow versions (`t.workflow` with a prefix). */
function workflowFilter(workflows: readonly WorkflowRef[], prefix = ""): { sql: string; params: SqlParam[] } {
  if (!workflows.length) throw new Error("a task query needs at least one workflow");
  return {
    sql: `(${workflows.map(() => `(${prefix}workflow = ? AND ${prefix}version = ?)`).join(" OR ")})`,
    params: workflows.flatMap((w) => [w.name, w.version]),
  };
}

/** PostgreSQL: one event per execution from four arrays ({@link eventArrays}), each at its next seq. */
const APPEND_EVENTS_UNNEST = `INSERT INTO orbit_execution_events (execution_id, seq, type, data, at_ms, execution_created_ms)
  SELECT u.execution_id,
         (SELECT COALESCE(MAX(e.seq), 0) + 1 FROM orbit_execution_events e WHERE e.execution_id = u.execution_id),
         u.type, u.data::json, u.at_ms,
         ${CREATED_OF_UNNESTED}
  FROM unnest(?::text[], ?::text[], ?::text[], ?::bigint[]) AS u(execution_id, type, data, at_ms)`;

function eventArrays(events: readonly NewEvent[]): SqlParam[] {
  return [
    arrayParam(events.map((e) => e.executionId)),
    arrayParam(events.map((e) => e.type)),
    arrayParam(events.map((e) => jsonParam(e.data))),
    arrayParam(events.map((e) => e.atMs)),
  ];
}

function checkOneEventEach(events: readonly NewEvent[]): void {
  if (new Set(events.map((e) => e.executionId)).size !== events.length) {
    // One statement sees the events as they were before it: two rows of one execution would take the same seq.
    throw new Error("appendEvents takes at most one event per execution");
  }
}

/** The execution's columns beside a task's in one row (`e_<column>`), for {@link TaskOps.listClaimable}. */
const CLAIM_EXECUTION_COLUMNS = EXECUTION_ALL.names.map((n) => `e.${quote(n)} AS e_${n}`).join(", ");

/**
 * Row readers generated once (columns.ts rowReader), so that a poll's and a batched complete's 100
 * rows are each read into one object literal: a task with its retry policy (READ.leases), and an
 * execution from its `e_<column>` aliases (no intermediate row object per candidate).
 */
const readLease = rowReader(TASKS.columns, TASKS.fields, {
  maxAttempts: (row) => Number(row.max_attempts),
  backoffMs: (row) => Number(row.backoff_ms),
});
const readClaimExecution = rowReader(
  Object.fromEntries(
    EXECUTIONS.fields.map((f) => [f, { ...EXECUTIONS.columns[f], name: `e_${EXECUTIONS.columns[f].name}` }]),
  ) as unknown as Columns<Execution>,
  EXECUTIONS.fields,
);

export class TaskOps extends ExecutionOps implements TaskStoreOps {
  private lease(row: SqlRow): TaskLease {
    return readLease(row, this.sqlDialect);
  }

  private step(row: SqlRow): StepResultRow {
    const result = row.result == null ? null : this.sqlDialect.readJson(row.result);
    return {
      executionId: String(row.execution_id),
      run: Number(row.run),
      step: String(row.step),
      seq: Number(row.seq),
      result: result as StepResultRow["result"],
      hasCompensation: Boolean(row.has_compensation),
      compensatedMs: row.compensated_ms == null ? null : Number(row.compensated_ms),
      completedMs: Number(row.completed_ms),
    };
  }

  async listClaimableTasks(q: ClaimableTaskQuery): Promise<TaskLease[]> {
    const f = workflowFilter(q.workflows);
    const rows = await this.exec.all(
      `SELECT ${READ.leases} FROM orbit_worker_tasks WHERE state = 'pending' AND available_ms <= ? AND ${f.sql}
       ORDER BY available_ms, created_ms LIMIT ?${q.skipLocked ? this.sqlDialect.forUpdateSkipLocked : ""}`,
      [q.availableAtOrBeforeMs, ...f.params, q.limit],
    );
    return rows.map((r) => this.lease(r));
  }

  async listClaimable(q: ClaimableTaskQuery): Promise<ClaimCandidate[]> {
    const f = workflowFilter(q.workflows);
    // The tasks are chosen (and locked) first, in a subquery with its LIMIT, so that the join and the
    // step check run for the chosen rows only, not for every pending task before the sort. Named
    // columns, not *: t.* is then fixed whatever later migrations add (docs/storage.md § Migrations).
    const rows = await this.exec.all(
      `SELECT t.*, ${CLAIM_EXECUTION_COLUMNS},
         EXISTS (SELECT 1 FROM orbit_step_results s WHERE s.execution_id = t.execution_id AND s.run = t.run) AS has_steps
       FROM (SELECT ${READ.leases} FROM orbit_worker_tasks WHERE state = 'pending' AND available_ms <= ? AND ${f.sql}
             ORDER BY available_ms, created_ms LIMIT ?${q.skipLocked ? this.sqlDialect.forUpdateSkipLocked : ""}) AS t
       JOIN orbit_executions e ON e.execution_id = t.execution_id
       ORDER BY t.available_ms, t.created_ms${q.skipLocked ? this.sqlDialect.forUpdateOfSkipLocked("e") : ""}`,
      [q.availableAtOrBeforeMs, ...f.params, q.limit],
    );
    return rows.map((r) => ({
      task: this.lease(r),
      execution: readClaimExecution(r, this.sqlDialect),
      hasSteps: Boolean(r.has_steps),
    }));
  }

  async listLeasedTo(
    owner: string,
    identity: string | null,
    instance: string | null,
    nowMs: number,
    limit: number,
  ): Promise<ClaimCandidate[]> {
    // As extendLeases judges a heartbeat's leases; and only the polling process's own (another
    // process under the same worker_id runs the others).
    const byIdentity = identity === null ? "" : "AND (lease_identity IS NULL OR lease_identity = ?)";
    const byInstance = instance === null ? "" : "AND lease_instance = ?";
    const rows = await this.exec.all(
      `SELECT t.*, ${CLAIM_EXECUTION_COLUMNS},
         EXISTS (SELECT 1 FROM orbit_step_results s WHERE s.execution_id = t.execution_id AND s.run = t.run) AS has_steps
       FROM (SELECT ${READ.leases} FROM orbit_worker_tasks
             WHERE state = 'leased' AND lease_owner = ? AND lease_until_ms >= ? ${byIdentity} ${byInstance}
             ORDER BY task_id LIMIT ?) AS t
       JOIN orbit_executions e ON e.execution_id = t.execution_id
       ORDER BY t.task_id`,
      [owner, nowMs, ...(identity === null ? [] : [identity]), ...(instance === null ? [] : [instance]), limit],
    );
    return rows.map((r) => ({
      task: this.lease(r),
      execution: readClaimExecution(r, this.sqlDialect),
      hasSteps: Boolean(r.has_steps),
    }));
  }

  async nextAvailableTaskMs(workflows: readonly WorkflowRef[]): Promise<number | null> {
    const f = workflowFilter(workflows);
    const rows = await this.exec.all(
      `SELECT MIN(available_ms) AS next FROM orbit_worker_tasks WHERE state = 'pending' AND ${f.sql}`,
      f.params,
    );
    const next = rows[0]?.next;
    return next == null ? null : Number(next);
  }

  async readyTasksByWorkflow(nowMs: number): Promise<ReadyTasks[]> {
    // The registered workflows read 0 when none of their tasks waits, so a drained backlog is a 0,
    // not a series that went away.
    const rows = await this.exec.all(
      `SELECT workflow, COUNT(*) AS n, MIN(available_ms) AS oldest FROM orbit_worker_tasks
        WHERE state = 'pending' AND available_ms <= ? GROUP BY workflow
       UNION ALL SELECT DISTINCT name, 0, CAST(NULL AS BIGINT) FROM orbit_workflows`,
      [nowMs],
    );
    const out = new Map<string, ReadyTasks>();
    for (const r of rows) {
      const workflow = String(r.workflow);
      if (out.has(workflow) && Number(r.n) === 0) continue;
      out.set(workflow, {
        workflow,
        ready: Number(r.n),
        oldestAvailableMs: r.oldest == null ? null : Number(r.oldest),
      });
    }
    return [...out.values()];
  }

  async getTaskLease(taskId: string, lock?: LockOption): Promise<TaskLease | null> {
    const rows = await this.exec.all(
      `SELECT ${READ.leases} FROM orbit_worker_tasks WHERE task_id = ?${this.lock(lock)}`,
      [taskId],
    );
    return rows[0] ? this.lease(rows[0]) : null;
  }

  async leaseTask(taskId: string, l: NewLease): Promise<boolean> {
    const changed = await this.exec.run(
      `UPDATE orbit_worker_tasks SET state = 'leased', lease_owner = ?, lease_identity = ?, lease_instance = ?,
         lease_until_ms = ?, max_attempts = ?, backoff_ms = ?
       WHERE task_id = ? AND state = 'pending'`,
      [l.owner, l.identity, l.instance, l.leaseUntilMs, l.maxAttempts, l.backoffMs, taskId],
    );
    return changed === 1;
  }

  async leaseTasks(taskIds: readonly string[], l: NewLease): Promise<string[]> {
    if (!taskIds.length) return [];
    const ids = this.sqlDialect.inList("task_id", taskIds);
    // SQLite: `+state` keeps the planner on the key; on `state = 'pending'` it scanned the whole
    // (state, …) index, every pending task of a herd, for each poll (docs/benchmarks.md § End to end, Run F).
    const state = this.sqlDialect.name === "sqlite" ? "+state" : "state";
    const rows = await this.exec.all(
      `UPDATE orbit_worker_tasks SET state = 'leased', lease_owner = ?, lease_identity = ?, lease_instance = ?,
         lease_until_ms = ?, max_attempts = ?, backoff_ms = ?
       WHERE ${ids.sql} AND ${state} = 'pending' RETURNING task_id`,
      [l.owner, l.identity, l.instance, l.leaseUntilMs, l.maxAttempts, l.backoffMs, ids.param],
    );
    return rows.map((r) => String(r.task_id));
  }

  async lockExecutionsIfFree(executionIds: readonly string[]): Promise<Execution[]> {
    if (!executionIds.length) return [];
    const ids = this.sqlDialect.inList("execution_id", executionIds);
    const rows = await this.exec.all(
      `SELECT ${EXECUTION_ALL.list} FROM orbit_executions WHERE ${ids.sql}${this.sqlDialect.forUpdateSkipLocked}`,
      [ids.param],
    );
    return rows.map((r) => this.map.execution(r));
  }

  async appendEvents(events: readonly NewEvent[]): Promise<void> {
    if (!events.length) return;
    checkOneEventEach(events);
    if (this.sqlDialect.batch === "rows") {
      const append = appendEventSql(this.sqlDialect);
      await this.exec.runMany(append.sql, events.map(append.params));
      return;
    }
    await this.exec.run(APPEND_EVENTS_UNNEST, eventArrays(events));
  }

  async lockTasksAndExecutions(taskIds: readonly string[]): Promise<{ tasks: TaskLease[]; executions: Execution[] }> {
    if (!taskIds.length) return { tasks: [], executions: [] };
    const ids = this.sqlDialect.inList("task_id", taskIds);
    const executions = await this.exec.all(
      `SELECT ${EXECUTION_ALL.list} FROM orbit_executions
       WHERE execution_id IN (SELECT execution_id FROM orbit_worker_tasks WHERE ${ids.sql})
       ORDER BY execution_id${this.sqlDialect.forUpdate}`,
      [ids.param],
    );
    const tasks = await this.exec.all(
      `SELECT ${READ.leases} FROM orbit_worker_tasks WHERE ${ids.sql} ORDER BY task_id${this.sqlDialect.forUpdate}`,
      [ids.param],
    );
    return { tasks: tasks.map((r) => this.lease(r)), executions: executions.map((r) => this.map.execution(r)) };
  }

  async completeExecutions(
    rows: readonly { executionId: string; result: JsonValue }[],
    endedMs: number,
  ): Promise<void> {
    if (!rows.length) return;
    if (this.sqlDialect.batch === "rows") {
      await this.exec.runMany(
        `UPDATE orbit_executions SET status = 'COMPLETED', result = ?, error = NULL, ended_ms = ? WHERE execution_id = ?`,
        rows.map((r) => [jsonParam(r.result), endedMs, r.executionId]),
      );
      return;
    }
    await this.exec.run(
      `UPDATE orbit_executions AS e SET status = 'COMPLETED', result = u.result::json, error = NULL, ended_ms = ?
       FROM unnest(?::text[], ?::text[]) AS u(execution_id, result) WHERE e.execution_id = u.execution_id`,
      [endedMs, arrayParam(rows.map((r) => r.executionId)), arrayParam(rows.map((r) => jsonParam(r.result)))],
    );
  }

  async writeCompletions(batch: CompletionWrites, endedMs: number): Promise<void> {
    if (this.sqlDialect.batch === "rows" || !batch.executions.length || !batch.events.length) {
      await this.completeExecutions(batch.executions, endedMs);
      await this.setTasksState(batch.doneTaskIds, "done");
      await this.appendEvents(batch.events);
      return;
    }
    checkOneEventEach(batch.events);
    // Data-modifying CTEs all run, on the statement's one snapshot: the events' seq reads the
    // journal as before the statement, as appendEvents does.
    await this.exec.run(
      `WITH ended AS (
         UPDATE orbit_executions AS e SET status = 'COMPLETED', result = u.result::json, error = NULL, ended_ms = ?
         FROM unnest(?::text[], ?::text[]) AS u(execution_id, result) WHERE e.execution_id = u.execution_id
       ), done AS (
         UPDATE orbit_worker_tasks SET state = 'done' WHERE task_id = ANY(?::text[])
       )
       ${APPEND_EVENTS_UNNEST}`,
      [
        endedMs,
        arrayParam(batch.executions.map((r) => r.executionId)),
        arrayParam(batch.executions.map((r) => jsonParam(r.result))),
        arrayParam(batch.doneTaskIds),
        ...eventArrays(batch.events),
      ],
    );
  }

  async setTasksState(taskIds: readonly string[], state: WorkerTaskState): Promise<void> {
    if (!taskIds.length) return;
    const ids = this.sqlDialect.inList("task_id", taskIds);
    await this.exec.run(`UPDATE orbit_worker_tasks SET state = ? WHERE ${ids.sql}`, [state, ids.param]);
  }

  async listStepResultsOf(executionIds: readonly string[]): Promise<StepResultRow[]> {
    if (!executionIds.length) return [];
    const ids = this.sqlDialect.inList("execution_id", executionIds);
    const rows = await this.exec.all(
      `SELECT ${READ.steps} FROM orbit_step_results WHERE ${ids.sql} ORDER BY execution_id, run, seq, completed_ms`,
      [ids.param],
    );
    return rows.map((r) => this.step(r));
  }

  async extendLeases(
    owner: string,
    identity: string | null,
    taskIds: readonly string[],
    leaseUntilMs: number,
    nowMs: number,
  ): Promise<string[]> {
    if (!taskIds.length) return [];
    const byIdentity = identity === null ? "" : "AND (lease_identity IS NULL OR lease_identity = ?)";
    // The rows are locked in task id order first (PostgreSQL), the order a batched complete locks
    // them in (lockTasksAndExecutions): an UPDATE alone locks in the table's physical order, and a
    // complete holding one of the tasks while this held another was a deadlock (40P01).
    const rows = await this.exec.all(
      `UPDATE orbit_worker_tasks SET lease_until_ms = ?
       WHERE task_id IN (
         SELECT task_id FROM orbit_worker_tasks
         WHERE lease_owner = ? AND state = 'leased' AND lease_until_ms >= ? ${byIdentity}
           AND task_id IN (${taskIds.map(() => "?").join(", ")})
         ORDER BY task_id${this.sqlDialect.forUpdate})
       RETURNING task_id`,
      [leaseUntilMs, owner, nowMs, ...(identity === null ? [] : [identity]), ...taskIds],
    );
    return rows.map((r) => String(r.task_id));
  }

  async cancelReasonsOfTasks(taskIds: readonly string[]): Promise<Map<string, string | null>> {
    const reasons = new Map<string, string | null>();
    if (!taskIds.length) return reasons;
    const ids = this.sqlDialect.inList("t.task_id", taskIds);
    const rows = await this.exec.all(
      `SELECT t.task_id, e.cancel_reason FROM orbit_worker_tasks t
       JOIN orbit_executions e ON e.execution_id = t.execution_id WHERE ${ids.sql}`,
      [ids.param],
    );
    for (const r of rows) reasons.set(String(r.task_id), r.cancel_reason == null ? null : String(r.cancel_reason));
    return reasons;
  }

  async listExpiredLeases(beforeMs: number, limit: number, skipLocked = false): Promise<TaskLease[]> {
    // `state = 'leased'` is a literal so SQLite can use the partial index orbit_worker_tasks_lease.
    const rows = await this.exec.all(
      `SELECT ${READ.leases} FROM orbit_worker_tasks WHERE state = 'leased' AND lease_until_ms < ?
       ORDER BY lease_until_ms LIMIT ?${skipLocked ? this.sqlDialect.forUpdateSkipLocked : ""}`,
      [beforeMs, limit],
    );
    return rows.map((r) => this.lease(r));
  }

  async extendLapsedLeases(
    untilMs: number,
    passOver: readonly GracedLeases[] = [],
    heardWithinMs?: number,
  ): Promise<string[]> {
    let notGraced = "";
    const params: SqlParam[] = [untilMs, untilMs];
    for (const g of passOver) {
      if (g.taskIds.length === 0) continue;
      const ids = this.sqlDialect.inList("task_id", g.taskIds);
      notGraced += ` AND NOT (lease_until_ms = ? AND ${ids.sql})`;
      params.push(g.end, ids.param);
    }
    if (heardWithinMs !== undefined) {
      // Its worker's row (orbit_workers, written at most every few seconds while it polls or
      // heartbeats) older than the lease's last renewal: no live worker behind it (a crash loop).
      notGraced += ` AND NOT EXISTS (SELECT 1 FROM orbit_workers w
        WHERE w.worker_id = t.lease_owner AND w.last_poll_ms < t.lease_until_ms - ?)`;
      params.push(Math.round(heardWithinMs));
    }
    // In task id order (PostgreSQL), as a heartbeat locks them (extendLeases above).
    const rows = await this.exec.all(
      `UPDATE orbit_worker_tasks SET lease_until_ms = ?
       WHERE task_id IN (
         SELECT task_id FROM orbit_worker_tasks t WHERE state = 'leased' AND lease_until_ms < ?${notGraced}
         ORDER BY task_id${this.sqlDialect.forUpdate})
       RETURNING task_id`,
      params,
    );
    return rows.map((r) => String(r.task_id));
  }

  async nextLeaseExpiryMs(): Promise<number | null> {
    const rows = await this.exec.all(
      "SELECT MIN(lease_until_ms) AS next FROM orbit_worker_tasks WHERE state = 'leased'",
      [],
    );
    const next = rows[0]?.next;
    return next == null ? null : Number(next);
  }

  async lockExecutionIfFree(executionId: string): Promise<Execution | null> {
    const rows = await this.exec.all(
      `SELECT ${EXECUTION_ALL.list} FROM orbit_executions WHERE execution_id = ?${this.sqlDialect.forUpdateSkipLocked}`,
      [executionId],
    );
    return rows[0] ? this.map.execution(rows[0]) : null;
  }

  async setExecutionInput(executionId: string, input: JsonObject): Promise<boolean> {
    return (
      (await this.exec.run("UPDATE orbit_executions SET input = ? WHERE execution_id = ?", [
        jsonParam(input),
        executionId,
      ])) > 0
    );
  }

  async insertStepResult(s: StepResultRow): Promise<boolean> {
    const changed = await this.exec.run(
      `INSERT INTO orbit_step_results (execution_id, run, step, seq, result, error, has_compensation, compensated_ms, completed_ms)
       VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?) ON CONFLICT (execution_id, run, step) DO NOTHING`,
      [
        s.executionId,
        s.run,
        s.step,
        s.seq,
        jsonParam(s.result),
        s.hasCompensation ? 1 : 0,
        s.compensatedMs,
        s.completedMs,
      ],
    );
    return changed === 1;
  }

  async listStepResults(executionId: string, run: number): Promise<StepResultRow[]> {
    const rows = await this.exec.all(
      `SELECT ${READ.steps} FROM orbit_step_results WHERE execution_id = ? AND run = ? ORDER BY seq, completed_ms`,
      [executionId, run],
    );
    return rows.map((r) => this.step(r));
  }

  async markStepCompensated(executionId: string, run: number, step: string, atMs: number): Promise<boolean> {
    const changed = await this.exec.run(
      `UPDATE orbit_step_results SET compensated_ms = ?
       WHERE execution_id = ? AND run = ? AND step = ? AND compensated_ms IS NULL`,
      [atMs, executionId, run, step],
    );
    return changed === 1;
  }
}
