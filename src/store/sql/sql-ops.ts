/**
 * The complete set of Store operations in portable SQL: execution operations (execution-ops.ts)
 * plus schedules, the occurrence ledger and idempotency keys. A store runs an instance of this
 * class over its connection for plain calls, and a fresh one over the transaction's connection
 * for each transaction.
 */
import type { IdempotencyRecord, NewOccurrence, OccurrenceRow, ScheduleRow } from "../rows.js";
import type { DueScheduleQuery, LockOption, OccurrenceQuery, ScheduleCas, StoreOps } from "../store.js";
import { ExecutionOps } from "./execution-ops.js";
import type { SqlParam } from "./executor.js";
import { jsonParam, SCHEDULE_MUTABLE_COLUMNS, scheduleParams } from "./row-mappers.js";

const SCHEDULE_INSERT_COLUMNS = ["schedule_id", ...SCHEDULE_MUTABLE_COLUMNS, "revision", "created_ms"].join(", ");
const SCHEDULE_INSERT_MARKS = Array.from({ length: SCHEDULE_MUTABLE_COLUMNS.length + 3 }, () => "?").join(", ");
const SCHEDULE_SETS = [...SCHEDULE_MUTABLE_COLUMNS.map((c) => `${c} = ?`), "revision = ?"].join(", ");

export class SqlOps extends ExecutionOps implements StoreOps {
  // Schedules

  async insertSchedule(row: ScheduleRow): Promise<boolean> {
    const changed = await this.exec.run(
      `INSERT INTO orbit_schedules (${SCHEDULE_INSERT_COLUMNS}) VALUES (${SCHEDULE_INSERT_MARKS})
       ON CONFLICT (schedule_id) DO NOTHING`,
      [row.scheduleId, ...scheduleParams(row), row.revision, row.createdMs],
    );
    return changed === 1;
  }

  async getSchedule(scheduleId: string, lock?: LockOption): Promise<ScheduleRow | null> {
    const rows = await this.exec.all(`SELECT * FROM orbit_schedules WHERE schedule_id = ?${this.lock(lock)}`, [
      scheduleId,
    ]);
    return rows[0] ? this.map.schedule(rows[0]) : null;
  }

  async listSchedules(opts: { afterId?: string; limit: number }): Promise<ScheduleRow[]> {
    const rows =
      opts.afterId === undefined
        ? await this.exec.all("SELECT * FROM orbit_schedules ORDER BY schedule_id LIMIT ?", [opts.limit])
        : await this.exec.all("SELECT * FROM orbit_schedules WHERE schedule_id > ? ORDER BY schedule_id LIMIT ?", [
            opts.afterId,
            opts.limit,
          ]);
    return rows.map((r) => this.map.schedule(r));
  }

  async updateSchedule(row: ScheduleRow, cas: ScheduleCas): Promise<ScheduleRow | null> {
    const params: SqlParam[] = [...scheduleParams(row), cas.expectedRevision + 1, row.scheduleId, cas.expectedRevision];
    let guard = "schedule_id = ? AND revision = ?";
    if (cas.expectedNextFireMs !== undefined) {
      guard += " AND next_fire_ms IS NOT DISTINCT FROM ?";
      params.push(cas.expectedNextFireMs);
    }
    const rows = await this.exec.all(`UPDATE orbit_schedules SET ${SCHEDULE_SETS} WHERE ${guard} RETURNING *`, params);
    return rows[0] ? this.map.schedule(rows[0]) : null;
  }

  async deleteSchedule(scheduleId: string, expectedRevision?: number): Promise<boolean> {
    const changed =
      expectedRevision === undefined
        ? await this.exec.run("DELETE FROM orbit_schedules WHERE schedule_id = ?", [scheduleId])
        : await this.exec.run("DELETE FROM orbit_schedules WHERE schedule_id = ? AND revision = ?", [
            scheduleId,
            expectedRevision,
          ]);
    return changed > 0;
  }

  async listDueSchedules(query: DueScheduleQuery): Promise<ScheduleRow[]> {
    // `state = 'active'` is a literal so SQLite can use the partial index orbit_schedules_due.
    const rows = await this.exec.all(
      `SELECT * FROM orbit_schedules WHERE state = 'active' AND due_ms IS NOT NULL AND due_ms <= ?
       ORDER BY due_ms, schedule_id LIMIT ?${query.skipLocked ? this.sqlDialect.forUpdateSkipLocked : ""}`,
      [query.dueAtOrBeforeMs, query.limit],
    );
    return rows.map((r) => this.map.schedule(r));
  }

  async wakeBufferedSchedules(
    target: { scheduleId: string } | { concurrencyKey: string },
    dueMs: number,
  ): Promise<number> {
    const [column, value] =
      "scheduleId" in target ? ["schedule_id", target.scheduleId] : ["concurrency_key", target.concurrencyKey];
    return this.exec.run(
      `UPDATE orbit_schedules SET due_ms = ?, revision = revision + 1
       WHERE ${column} = ? AND state = 'active' AND NOT paused AND buffered <> '[]'
         AND (due_ms IS NULL OR due_ms > ?)`,
      [dueMs, value, dueMs],
    );
  }

  async nextDueMs(): Promise<number | null> {
    const rows = await this.exec.all(
      "SELECT MIN(due_ms) AS due FROM orbit_schedules WHERE state = 'active' AND due_ms IS NOT NULL",
      [],
    );
    const due = rows[0]?.due;
    return due == null ? null : Number(due);
  }

  // Occurrence ledger

  async appendOccurrence(o: NewOccurrence): Promise<OccurrenceRow> {
    const rows = await this.exec.all(
      `INSERT INTO orbit_occurrences (schedule_id, kind, occurrence_ms, range_from_ms, range_to_ms, count, reason, execution_id, error, recorded_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      [
        o.scheduleId,
        o.kind,
        o.occurrenceMs,
        o.rangeFromMs ?? null,
        o.rangeToMs ?? null,
        o.count ?? 1,
        o.reason ?? null,
        o.executionId ?? null,
        o.error ?? null,
        o.recordedMs,
      ],
    );
    if (!rows[0]) throw new Error("INSERT … RETURNING returned no row");
    return this.map.occurrence(rows[0]);
  }

  async listOccurrences(scheduleId: string, query: OccurrenceQuery): Promise<OccurrenceRow[]> {
    let sql = "SELECT * FROM orbit_occurrences WHERE schedule_id = ?";
    const params: SqlParam[] = [scheduleId];
    if (query.beforeId !== undefined) {
      sql += " AND id < ?";
      params.push(query.beforeId);
    }
    if (query.kinds?.length) {
      sql += ` AND kind IN (${query.kinds.map(() => "?").join(", ")})`;
      params.push(...query.kinds);
    }
    params.push(query.limit);
    const rows = await this.exec.all(`${sql} ORDER BY id DESC LIMIT ?`, params);
    return rows.map((r) => this.map.occurrence(r));
  }

  async pruneOccurrences(scheduleId: string, keep: number): Promise<number> {
    return this.exec.run(
      `DELETE FROM orbit_occurrences WHERE schedule_id = ? AND id <=
       (SELECT id FROM orbit_occurrences WHERE schedule_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`,
      [scheduleId, scheduleId, keep],
    );
  }

  // Idempotency keys

  async insertIdempotencyKey(r: IdempotencyRecord): Promise<boolean> {
    const changed = await this.exec.run(
      `INSERT INTO orbit_idempotency_keys (scope, key, request_hash, response, status, created_ms)
       VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (scope, key) DO NOTHING`,
      [r.scope, r.key, r.requestHash, jsonParam(r.response), r.status, r.createdMs],
    );
    return changed === 1;
  }

  async getIdempotencyKey(scope: string, key: string): Promise<IdempotencyRecord | null> {
    const rows = await this.exec.all("SELECT * FROM orbit_idempotency_keys WHERE scope = ? AND key = ?", [scope, key]);
    return rows[0] ? this.map.idempotency(rows[0]) : null;
  }

  async deleteIdempotencyKeysBefore(createdBeforeMs: number): Promise<number> {
    return this.exec.run("DELETE FROM orbit_idempotency_keys WHERE created_ms < ?", [createdBeforeMs]);
  }

  async databaseNow(): Promise<number> {
    const rows = await this.exec.all(`SELECT ${this.sqlDialect.nowMs} AS now`, []);
    return Number(rows[0]?.now);
  }
}
