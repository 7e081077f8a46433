/**
 * Outcome operations (src/store/outcome-store.ts) in portable SQL. Sits between TaskOps and SqlOps
 * so that both dialects get them.
 */
import type { JsonObject } from "../../domain/json.js";
import type {
  ExpiredDeadline,
  NewNotification,
  NotificationPatch,
  NotificationRow,
  NotificationState,
  OutcomeStoreOps,
  ScheduleOutcomeAggregate,
  ScheduleOutcomeFigures,
  TimeoutKind,
  WorkerRow,
} from "../outcome-store.js";
import type { ScheduleCounters, ScheduleOutcomes } from "../rows.js";
import type { WorkflowRef } from "../task-store.js";
import { arrayParam, jsonParam } from "./columns.js";
import type { SqlParam, SqlRow } from "./executor.js";
import { READ } from "./tables.js";
import { TaskOps } from "./task-ops.js";

const ACTIVE = "status IN ('RUNNING', 'COMPENSATING')";
type DeadlineColumn = "start_deadline_ms" | "run_deadline_ms";

const SET_OUTCOMES = `UPDATE orbit_schedules SET last_outcome = ?, last_success_ms = ?, last_failure_ms = ?,
  consecutive_failures = ?, failures = ? WHERE schedule_id = ?`;

function outcomeParams(scheduleId: string, o: ScheduleOutcomes): SqlParam[] {
  return [
    jsonParam(o.lastOutcome as unknown as JsonObject | null),
    o.lastSuccessMs,
    o.lastFailureMs,
    o.consecutiveFailures,
    o.failures,
    scheduleId,
  ];
}

export class OutcomeOps extends TaskOps implements OutcomeStoreOps {
  async setScheduleOutcomes(scheduleId: string, o: ScheduleOutcomes): Promise<boolean> {
    return (await this.exec.run(SET_OUTCOMES, outcomeParams(scheduleId, o))) > 0;
  }

  async setSchedulesOutcomes(entries: readonly { scheduleId: string; outcomes: ScheduleOutcomes }[]): Promise<void> {
    if (!entries.length) return;
    if (this.sqlDialect.batch === "rows") {
      // One prepared statement run per row, without an await between rows (a set-based UPDATE … FROM
      // json_each measured slower on SQLite: docs/benchmarks.md § End to end, Run F).
      await this.exec.runMany(
        SET_OUTCOMES,
        entries.map((e) => outcomeParams(e.scheduleId, e.outcomes)),
      );
      return;
    }
    const column = <T>(f: (o: ScheduleOutcomes) => T) => arrayParam(entries.map((e) => f(e.outcomes) as SqlParam));
    await this.exec.run(
      `UPDATE orbit_schedules AS s SET last_outcome = u.last_outcome::jsonb, last_success_ms = u.last_success_ms,
         last_failure_ms = u.last_failure_ms, consecutive_failures = u.consecutive_failures, failures = u.failures
       FROM unnest(?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::int[], ?::int[])
         AS u(schedule_id, last_outcome, last_success_ms, last_failure_ms, consecutive_failures, failures)
       WHERE s.schedule_id = u.schedule_id`,
      [
        arrayParam(entries.map((e) => e.scheduleId)),
        column((o) => jsonParam(o.lastOutcome as unknown as JsonObject | null)),
        column((o) => o.lastSuccessMs),
        column((o) => o.lastFailureMs),
        column((o) => o.consecutiveFailures),
        column((o) => o.failures),
      ],
    );
  }

  async lockScheduleCounters(
    scheduleIds: readonly string[],
  ): Promise<Map<string, ScheduleCounters & { createdMs: number }>> {
    const counters = new Map<string, ScheduleCounters & { createdMs: number }>();
    if (!scheduleIds.length) return counters;
    const ids = this.sqlDialect.inList("schedule_id", scheduleIds);
    const rows = await this.exec.all(
      `SELECT schedule_id, created_ms, last_success_ms, last_failure_ms, consecutive_failures, failures FROM orbit_schedules
       WHERE ${ids.sql} ORDER BY schedule_id${this.sqlDialect.forUpdate}`,
      [ids.param],
    );
    for (const r of rows) {
      counters.set(String(r.schedule_id), {
        lastSuccessMs: r.last_success_ms == null ? null : Number(r.last_success_ms),
        lastFailureMs: r.last_failure_ms == null ? null : Number(r.last_failure_ms),
        consecutiveFailures: Number(r.consecutive_failures ?? 0),
        failures: Number(r.failures ?? 0),
        createdMs: Number(r.created_ms),
      });
    }
    return counters;
  }

  async lockExecutionsAndTasks(executionIds: readonly string[]): Promise<void> {
    if (this.sqlDialect.name !== "postgres" || !executionIds.length) return;
    const ids = [arrayParam(executionIds)];
    await this.exec.all(
      "SELECT execution_id FROM orbit_executions WHERE execution_id = ANY(?::text[]) ORDER BY execution_id FOR UPDATE",
      ids,
    );
    await this.exec.all(
      "SELECT task_id FROM orbit_worker_tasks WHERE execution_id = ANY(?::text[]) ORDER BY task_id FOR UPDATE",
      ids,
    );
  }

  async lockSchedulesForEnd(of: { executionIds?: readonly string[]; taskIds?: readonly string[] }): Promise<void> {
    // SQLite has no row locks: its one writer already holds them all.
    if (this.sqlDialect.name !== "postgres") return;
    const executionIds = of.executionIds ?? [];
    const taskIds = of.taskIds ?? [];
    if (!executionIds.length && !taskIds.length) return;
    // The key siblings are those the wake-up's UPDATE would match (wakeBufferedSchedules), read
    // without a lock; one that gains a buffer after this read is taken by that UPDATE itself.
    // Each part reads by a key (an OR of the two lists scanned every execution). Locked through the
    // primary key, in its order: the sort runs below the row locks.
    await this.exec.all(
      `WITH ending AS (
         SELECT schedule_id, concurrency_key FROM orbit_executions WHERE execution_id = ANY(?::text[])
         UNION ALL
         SELECT e.schedule_id, e.concurrency_key FROM orbit_worker_tasks t
           JOIN orbit_executions e ON e.execution_id = t.execution_id
         WHERE t.task_id = ANY(?::text[]))
       SELECT s.schedule_id FROM orbit_schedules s
       WHERE s.schedule_id IN (
         SELECT schedule_id FROM ending WHERE schedule_id IS NOT NULL
         UNION
         SELECT k.schedule_id FROM orbit_schedules k JOIN ending ON k.concurrency_key = ending.concurrency_key
         WHERE k.state = 'active' AND NOT k.paused AND k.buffered <> '[]')
       ORDER BY s.schedule_id FOR UPDATE OF s`,
      [arrayParam(executionIds), arrayParam(taskIds)],
    );
  }

  async setExecutionDeadlines(
    executionIds: readonly string[],
    startDeadlineMs: number | null,
    runDeadlineMs: number | null,
  ): Promise<void> {
    await this.setStartAndRun(executionIds, ["start_deadline_ms", "run_deadline_ms"], startDeadlineMs, runDeadlineMs);
  }

  /** Sets a start and a run column (deadlines, or the timeouts given) of the executions. */
  private async setStartAndRun(
    executionIds: readonly string[],
    [startColumn, runColumn]: readonly [string, string],
    startMs: number | null,
    runMs: number | null,
  ): Promise<void> {
    if (executionIds.length === 0) return;
    const ids = this.sqlDialect.inList("execution_id", executionIds);
    await this.exec.run(`UPDATE orbit_executions SET ${startColumn} = ?, ${runColumn} = ? WHERE ${ids.sql}`, [
      startMs,
      runMs,
      ids.param,
    ]);
  }

  async shiftExecutionDeadlines(ms: number, leaseCapMs?: number): Promise<number> {
    const whole = Math.round(ms);
    if (leaseCapMs !== undefined) {
      const cap = Math.round(leaseCapMs);
      await this.exec.run(
        "UPDATE orbit_worker_tasks SET lease_until_ms = ? WHERE state = 'leased' AND lease_until_ms > ?",
        [cap, cap],
      );
    }
    return this.exec.run(
      `UPDATE orbit_executions SET start_deadline_ms = start_deadline_ms + ?, run_deadline_ms = run_deadline_ms + ?
       WHERE status IN ('RUNNING', 'COMPENSATING') AND (start_deadline_ms IS NOT NULL OR run_deadline_ms IS NOT NULL)`,
      [whole, whole],
    );
  }

  async setGivenTimeouts(
    executionIds: readonly string[],
    startTimeoutMs: number | null,
    runTimeoutMs: number | null,
  ): Promise<void> {
    await this.setStartAndRun(executionIds, ["start_timeout_ms", "run_timeout_ms"], startTimeoutMs, runTimeoutMs);
  }

  async getGivenTimeouts(executionId: string): Promise<{ startTimeoutMs: number | null; runTimeoutMs: number | null }> {
    const [startTimeoutMs, runTimeoutMs] = await this.startAndRun(executionId, ["start_timeout_ms", "run_timeout_ms"]);
    return { startTimeoutMs, runTimeoutMs };
  }

  /** A start and a run column of the execution ({@link setStartAndRun}'s), null each when unset or no row. */
  private async startAndRun(
    executionId: string,
    [startColumn, runColumn]: readonly [string, string],
  ): Promise<[number | null, number | null]> {
    const rows = await this.exec.all(
      `SELECT ${startColumn} AS s, ${runColumn} AS r FROM orbit_executions WHERE execution_id = ?`,
      [executionId],
    );
    const r = rows[0];
    return [r?.s == null ? null : Number(r.s), r?.r == null ? null : Number(r.r)];
  }

  async clearDeadlines(executionId: string, which: "start" | "both"): Promise<void> {
    const sets = which === "start" ? "start_deadline_ms = NULL" : "start_deadline_ms = NULL, run_deadline_ms = NULL";
    await this.exec.run(`UPDATE orbit_executions SET ${sets} WHERE execution_id = ?`, [executionId]);
  }

  async getExecutionDeadlines(
    executionId: string,
  ): Promise<{ startDeadlineMs: number | null; runDeadlineMs: number | null }> {
    const [startDeadlineMs, runDeadlineMs] = await this.startAndRun(executionId, [
      "start_deadline_ms",
      "run_deadline_ms",
    ]);
    return { startDeadlineMs, runDeadlineMs };
  }

  async listExpiredDeadlines(atOrBeforeMs: number, limit: number): Promise<ExpiredDeadline[]> {
    // Two index range reads (one per partial index), merged here.
    const read = async (column: DeadlineColumn, kind: TimeoutKind) =>
      (
        await this.exec.all(
          `SELECT execution_id, ${column} AS at FROM orbit_executions${this.deadlineIndex(column)}
           WHERE ${ACTIVE} AND ${column} IS NOT NULL AND ${column} <= ? ORDER BY ${column} LIMIT ?`,
          [atOrBeforeMs, limit],
        )
      ).map((r) => ({ executionId: String(r.execution_id), kind, at: Number(r.at) }));
    const all = [
      ...(await read("start_deadline_ms", "start_timeout")),
      ...(await read("run_deadline_ms", "run_timeout")),
    ];
    all.sort((a, b) => a.at - b.at);
    const seen = new Set<string>();
    const out: ExpiredDeadline[] = [];
    for (const d of all) {
      if (seen.has(d.executionId)) continue;
      seen.add(d.executionId);
      out.push({ executionId: d.executionId, kind: d.kind });
    }
    return out.slice(0, limit);
  }

  /**
   * SQLite's planner, without statistics, reads these through the status index, every running
   * execution per call, and the sweeper asks after every change of a deadline: the partial index of
   * the column is named (PostgreSQL picks it by itself; docs/benchmarks.md § End to end, Run AQ).
   */
  private deadlineIndex(column: DeadlineColumn): string {
    if (this.sqlDialect.name !== "sqlite") return "";
    return ` INDEXED BY ${column === "start_deadline_ms" ? "orbit_executions_start_deadline" : "orbit_executions_run_deadline"}`;
  }

  async nextDeadlineMs(): Promise<number | null> {
    const rows = await this.exec.all(
      `SELECT (SELECT MIN(start_deadline_ms) FROM orbit_executions${this.deadlineIndex("start_deadline_ms")}
                 WHERE ${ACTIVE} AND start_deadline_ms IS NOT NULL) AS s,
              (SELECT MIN(run_deadline_ms) FROM orbit_executions${this.deadlineIndex("run_deadline_ms")}
                 WHERE ${ACTIVE} AND run_deadline_ms IS NOT NULL) AS r`,
      [],
    );
    const s = rows[0]?.s == null ? null : Number(rows[0].s);
    const r = rows[0]?.r == null ? null : Number(rows[0].r);
    if (s === null) return r;
    if (r === null) return s;
    return Math.min(s, r);
  }

  async upsertWorker(workerId: string, workflows: readonly WorkflowRef[], nowMs: number): Promise<void> {
    const list = workflows.map((w) => ({ name: w.name, version: w.version }));
    await this.exec.run(
      `INSERT INTO orbit_workers (worker_id, workflows, first_seen_ms, last_poll_ms) VALUES (?, ?, ?, ?)
       ON CONFLICT (worker_id) DO UPDATE SET workflows = excluded.workflows, last_poll_ms = excluded.last_poll_ms, left_ms = NULL`,
      [workerId, JSON.stringify(list), nowMs, nowMs],
    );
  }

  async listWorkers(seenSinceMs: number): Promise<WorkerRow[]> {
    const rows = await this.exec.all(
      `SELECT ${READ.workers} FROM orbit_workers WHERE last_poll_ms >= ? ORDER BY worker_id LIMIT 10000`,
      [seenSinceMs],
    );
    return rows.map((r) => this.workerRow(r));
  }

  async getWorker(workerId: string): Promise<WorkerRow | null> {
    const rows = await this.exec.all(`SELECT ${READ.workers} FROM orbit_workers WHERE worker_id = ?`, [workerId]);
    return rows[0] === undefined ? null : this.workerRow(rows[0]);
  }

  private workerRow(r: SqlRow): WorkerRow {
    return {
      workerId: String(r.worker_id),
      workflows: this.sqlDialect.readJson(r.workflows) as WorkflowRef[],
      firstSeenMs: Number(r.first_seen_ms),
      lastPollMs: Number(r.last_poll_ms),
      leftMs: r.left_ms == null ? null : Number(r.left_ms),
    };
  }

  async markWorkerLeft(workerId: string, nowMs: number): Promise<void> {
    await this.exec.run("UPDATE orbit_workers SET left_ms = ? WHERE worker_id = ?", [nowMs, workerId]);
  }

  async countLeasedTasks(): Promise<Map<string, Map<string, number>>> {
    const rows = await this.exec.all(
      `SELECT lease_owner, workflow, COUNT(*) AS n FROM orbit_worker_tasks WHERE state = 'leased'
       GROUP BY lease_owner, workflow`,
      [],
    );
    const out = new Map<string, Map<string, number>>();
    for (const r of rows) {
      const owner = String(r.lease_owner);
      const counts = out.get(owner) ?? new Map<string, number>();
      counts.set(String(r.workflow), Number(r.n));
      out.set(owner, counts);
    }
    return out;
  }

  async getWorkflowSettings(name: string): Promise<JsonObject> {
    const rows = await this.exec.all("SELECT settings FROM orbit_workflow_settings WHERE name = ?", [name]);
    return rows[0] ? (this.sqlDialect.readJson(rows[0].settings) as JsonObject) : {};
  }

  async putWorkflowSettings(name: string, settings: JsonObject, nowMs: number): Promise<void> {
    await this.exec.run(
      `INSERT INTO orbit_workflow_settings (name, settings, updated_ms) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET settings = excluded.settings, updated_ms = excluded.updated_ms`,
      [name, JSON.stringify(settings), nowMs],
    );
  }

  async setWorkflowDeprecated(name: string, version: string, deprecatedMs: number | null): Promise<boolean> {
    const changed = await this.exec.run("UPDATE orbit_workflows SET deprecated_ms = ? WHERE name = ? AND version = ?", [
      deprecatedMs,
      name,
      version,
    ]);
    return changed > 0;
  }

  async insertNotifications(rows: readonly NewNotification[], firstAttemptMs: number): Promise<void> {
    if (rows.length === 0) return;
    await this.exec.runMany(
      `INSERT INTO orbit_notifications (schedule_id, workflow, event, url, payload, state, attempts, next_attempt_ms, created_ms)
       VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?)`,
      rows.map((n): SqlParam[] => [
        n.scheduleId,
        n.workflow,
        n.event,
        n.url,
        JSON.stringify(n.payload),
        firstAttemptMs,
        n.createdMs,
      ]),
    );
  }

  async listDueNotifications(atOrBeforeMs: number, limit: number): Promise<NotificationRow[]> {
    const rows = await this.exec.all(
      `SELECT ${READ.notifications} FROM orbit_notifications WHERE state = 'pending' AND next_attempt_ms <= ?
       ORDER BY next_attempt_ms, id LIMIT ?`,
      [atOrBeforeMs, limit],
    );
    return rows.map((r) => this.notification(r));
  }

  async pruneNotificationsOf(scheduleId: string | null, workflow: string, keep: number): Promise<number> {
    // By the (schedule_id, id DESC) index: the newest `keep` ids, then the ended rows past them.
    const whose = scheduleId === null ? "schedule_id IS NULL AND workflow = ?" : "schedule_id = ?";
    const who = scheduleId === null ? workflow : scheduleId;
    return this.exec.run(
      `DELETE FROM orbit_notifications WHERE ${whose} AND state <> 'pending' AND id <= (
         SELECT id FROM orbit_notifications WHERE ${whose} ORDER BY id DESC LIMIT 1 OFFSET ?)`,
      [who, who, keep],
    );
  }

  async nextNotificationMs(): Promise<number | null> {
    const rows = await this.exec.all(
      "SELECT MIN(next_attempt_ms) AS at FROM orbit_notifications WHERE state = 'pending'",
      [],
    );
    return rows[0]?.at == null ? null : Number(rows[0].at);
  }

  async claimNotification(
    id: number,
    seen: Pick<NotificationRow, "attempts" | "nextAttemptMs">,
    untilMs: number,
  ): Promise<boolean> {
    const changed = await this.exec.run(
      `UPDATE orbit_notifications SET next_attempt_ms = ?
       WHERE id = ? AND state = 'pending' AND attempts = ? AND next_attempt_ms = ?`,
      [untilMs, id, seen.attempts, seen.nextAttemptMs],
    );
    return changed === 1;
  }

  async updateNotification(id: number, p: NotificationPatch, claimedUntilMs?: number): Promise<boolean> {
    const claimed = claimedUntilMs === undefined ? "" : " AND state = 'pending' AND next_attempt_ms = ?";
    const changed = await this.exec.run(
      `UPDATE orbit_notifications SET state = ?, attempts = ?, next_attempt_ms = ?, last_error = ?, delivered_ms = ? WHERE id = ?${claimed}`,
      [
        p.state,
        p.attempts,
        p.nextAttemptMs,
        p.lastError,
        p.deliveredMs,
        id,
        ...(claimedUntilMs === undefined ? [] : [claimedUntilMs]),
      ],
    );
    return changed === 1;
  }

  async listNotifications(scheduleId: string, page: { limit: number; beforeId?: number }): Promise<NotificationRow[]> {
    const before = page.beforeId !== undefined ? " AND id < ?" : "";
    const rows = await this.exec.all(
      `SELECT ${READ.notifications} FROM orbit_notifications WHERE schedule_id = ?${before} ORDER BY id DESC LIMIT ?`,
      page.beforeId !== undefined ? [scheduleId, page.beforeId, page.limit] : [scheduleId, page.limit],
    );
    return rows.map((r) => this.notification(r));
  }

  private notification(r: SqlRow): NotificationRow {
    const num = (v: unknown) => (v == null ? null : Number(v));
    return {
      id: Number(r.id),
      scheduleId: r.schedule_id == null ? null : String(r.schedule_id),
      workflow: String(r.workflow),
      event: String(r.event),
      url: String(r.url),
      payload: this.sqlDialect.readJson(r.payload) as JsonObject,
      createdMs: Number(r.created_ms),
      state: String(r.state) as NotificationState,
      attempts: Number(r.attempts),
      nextAttemptMs: num(r.next_attempt_ms),
      lastError: r.last_error == null ? null : String(r.last_error),
      deliveredMs: num(r.delivered_ms),
    };
  }

  async listScheduleOutcomeFigures(limit: number): Promise<ScheduleOutcomeFigures[]> {
    const rows = await this.exec.all(
      `SELECT schedule_id, last_success_ms, consecutive_failures, failures FROM orbit_schedules
       ORDER BY schedule_id LIMIT ?`,
      [limit],
    );
    return rows.map((r) => ({
      scheduleId: String(r.schedule_id),
      lastSuccessMs: r.last_success_ms == null ? null : Number(r.last_success_ms),
      consecutiveFailures: Number(r.consecutive_failures ?? 0),
      failures: Number(r.failures ?? 0),
    }));
  }

  async aggregateScheduleOutcomes(): Promise<ScheduleOutcomeAggregate> {
    const [r] = await this.exec.all(
      `SELECT COUNT(*) AS n, MIN(last_success_ms) AS oldest, MAX(consecutive_failures) AS worst,
         COALESCE(SUM(failures), 0)
           + (SELECT COALESCE(SUM(failures), 0) FROM orbit_schedule_tombstones) AS failures
       FROM orbit_schedules`,
      [],
    );
    return {
      schedules: Number(r?.n ?? 0),
      oldestLastSuccessMs: r?.oldest == null ? null : Number(r.oldest),
      maxConsecutiveFailures: Number(r?.worst ?? 0),
      failures: Number(r?.failures ?? 0),
    };
  }
}
