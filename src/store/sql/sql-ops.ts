/**
 * The complete set of Store operations in portable SQL: execution operations (execution-ops.ts)
 * plus schedules, the occurrence ledger and idempotency keys. A store runs an instance of this
 * class over its connection for plain calls, and a fresh one over the transaction's connection
 * for each transaction.
 */
import type { IdempotencyRecord, NewOccurrence, OccurrenceRow, ScheduleRow } from "../rows.js";
import type {
  DueScheduleQuery,
  LockOption,
  OccurrenceQuery,
  PruneQuery,
  ScheduleAdvance,
  ScheduleCas,
  ScheduleSearchFilter,
  StoreOps,
} from "../store.js";
import { pgColumn } from "./batch.js";
import type { SqlParam } from "./executor.js";
import { OutcomeOps } from "./outcome-ops.js";
import { endedCutoffKeeping, pruneExecutionsBatch } from "./retention-ops.js";
import { jsonParam, SCHEDULE_MUTABLE_COLUMNS, scheduleParams } from "./row-mappers.js";
import { scheduleSearchSql } from "./schedule-search-sql.js";

const SCHEDULE_INSERT_COLUMNS = ["schedule_id", ...SCHEDULE_MUTABLE_COLUMNS, "revision", "created_ms"].join(", ");
const SCHEDULE_INSERT_MARKS = Array.from({ length: SCHEDULE_MUTABLE_COLUMNS.length + 3 }, () => "?").join(", ");
/** The columns a fire changes (advanceSchedules), bound in this order after the CAS. */
const ADVANCE_COLUMNS = [
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
] as const;
const ADVANCE_SQLITE = `UPDATE orbit_schedules SET ${ADVANCE_COLUMNS.map((c) => `${c} = ?`).join(", ")}, revision = revision + 1
  WHERE schedule_id = ? AND revision = ? AND next_fire_ms IS NOT DISTINCT FROM ?`;
const ADVANCE_POSTGRES = `UPDATE orbit_schedules AS s SET ${ADVANCE_COLUMNS.map((c) => `${c} = u.${c}${c === "buffered" ? "::jsonb" : ""}`).join(", ")},
    revision = s.revision + 1
  FROM unnest(?::text[], ?::int[], ?::bigint[], ?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::int[], ?::int[],
              ?::bigint[], ?::text[], ?::text[], ?::text[])
    AS u(schedule_id, expected_revision, expected_next_fire_ms, ${ADVANCE_COLUMNS.join(", ")})
  WHERE s.schedule_id = u.schedule_id AND s.revision = u.expected_revision
    AND s.next_fire_ms IS NOT DISTINCT FROM u.expected_next_fire_ms
  RETURNING s.schedule_id`;

function advanceParams(row: ScheduleRow): SqlParam[] {
  return [
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
  ];
}

const OCCURRENCE_COLUMNS =
  "schedule_id, kind, occurrence_ms, range_from_ms, range_to_ms, count, reason, execution_id, error, recorded_ms";

function occurrenceParams(o: NewOccurrence): SqlParam[] {
  return [
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
  ];
}

const SCHEDULE_SETS = [...SCHEDULE_MUTABLE_COLUMNS.map((c) => `${c} = ?`), "revision = ?"].join(", ");

export class SqlOps extends OutcomeOps implements StoreOps {
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

  async searchSchedules(
    filter: ScheduleSearchFilter,
  ): Promise<{ rows: ScheduleRow[]; counts: Record<string, number> }> {
    const q = scheduleSearchSql(this.sqlDialect.name, filter);
    const [rows, counts] = [
      await this.exec.all(q.page.sql, q.page.params),
      await this.exec.all(q.counts.sql, q.counts.params),
    ];
    return {
      rows: rows.map((r) => this.map.schedule(r)),
      counts: Object.fromEntries(counts.map((c) => [String(c.state), Number(c.n)])),
    };
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

  async advanceSchedules(advances: readonly ScheduleAdvance[]): Promise<string[]> {
    if (advances.length === 0) return [];
    if (this.sqlDialect.name !== "postgres") {
      const changed = await this.exec.runMany(
        ADVANCE_SQLITE,
        advances.map((a) => [...advanceParams(a.row), a.row.scheduleId, a.expectedRevision, a.expectedNextFireMs]),
      );
      return advances.filter((_, i) => changed[i] === 1).map((a) => a.row.scheduleId);
    }
    const columns = advances.map((a) => [
      a.row.scheduleId,
      a.expectedRevision,
      a.expectedNextFireMs,
      ...advanceParams(a.row),
    ]);
    const rows = await this.exec.all(
      ADVANCE_POSTGRES,
      Array.from({ length: 3 + ADVANCE_COLUMNS.length }, (_, i) => pgColumn(columns, (c) => c[i] ?? null)),
    );
    return rows.map((r) => String(r.schedule_id));
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
    // Due at the oldest buffered occurrence (it is in the past): the loop fires due rows oldest
    // first, so waiters on a concurrency key are served in the order of their occurrences, not
    // by schedule id (docs/scheduling.md, "Concurrency keys").
    const oldest =
      this.sqlDialect.name === "postgres"
        ? "(buffered->>0)::bigint"
        : "CAST(json_extract(buffered, '$[0]') AS INTEGER)";
    const wakeAt = `(CASE WHEN ${oldest} < ? THEN ${oldest} ELSE ? END)`;
    return this.exec.run(
      `UPDATE orbit_schedules SET due_ms = ${wakeAt}, revision = revision + 1
       WHERE ${column} = ? AND state = 'active' AND NOT paused AND buffered <> '[]'
         AND (due_ms IS NULL OR due_ms > ${wakeAt})`,
      [dueMs, dueMs, value, dueMs, dueMs],
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

  async countOverdueSchedules(dueBeforeMs: number): Promise<number> {
    const rows = await this.exec.all(
      `SELECT COUNT(*) AS n FROM orbit_schedules
       WHERE state = 'active' AND NOT paused AND due_ms IS NOT NULL AND (due_ms < ? OR retry_ms IS NOT NULL)`,
      [dueBeforeMs],
    );
    return Number(rows[0]?.n ?? 0);
  }

  // Occurrence ledger

  async appendOccurrence(o: NewOccurrence): Promise<OccurrenceRow> {
    const rows = await this.exec.all(
      `INSERT INTO orbit_occurrences (${OCCURRENCE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      occurrenceParams(o),
    );
    if (!rows[0]) throw new Error("INSERT … RETURNING returned no row");
    return this.map.occurrence(rows[0]);
  }

  async appendOccurrences(occurrences: readonly NewOccurrence[]): Promise<void> {
    if (occurrences.length === 0) return;
    if (this.sqlDialect.name !== "postgres") {
      await this.exec.runMany(
        `INSERT INTO orbit_occurrences (${OCCURRENCE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        occurrences.map(occurrenceParams),
      );
      return;
    }
    const columns = occurrences.map(occurrenceParams);
    // WITH ORDINALITY … ORDER BY: ids are assigned in the order given.
    await this.exec.run(
      `INSERT INTO orbit_occurrences (${OCCURRENCE_COLUMNS})
       SELECT u.schedule_id, u.kind, u.occurrence_ms, u.range_from_ms, u.range_to_ms, u.count, u.reason, u.execution_id,
              u.error, u.recorded_ms
       FROM unnest(?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::int[], ?::text[], ?::text[],
                   ?::text[], ?::bigint[]) WITH ORDINALITY
         AS u(schedule_id, kind, occurrence_ms, range_from_ms, range_to_ms, count, reason, execution_id, error,
              recorded_ms, ord)
       ORDER BY u.ord`,
      Array.from({ length: 10 }, (_, i) => pgColumn(columns, (c) => c[i] ?? null)),
    );
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

  async setIdempotencyAnswer(scope: string, key: string, status: number, response: string | null): Promise<boolean> {
    const changed = await this.exec.run(
      "UPDATE orbit_idempotency_keys SET status = ?, response = ? WHERE scope = ? AND key = ?",
      [status, jsonParam(response), scope, key],
    );
    return changed === 1;
  }

  async deleteIdempotencyKey(scope: string, key: string): Promise<boolean> {
    return (await this.exec.run("DELETE FROM orbit_idempotency_keys WHERE scope = ? AND key = ?", [scope, key])) === 1;
  }

  async deleteIdempotencyKeysBefore(createdBeforeMs: number): Promise<number> {
    return this.exec.run("DELETE FROM orbit_idempotency_keys WHERE created_ms < ?", [createdBeforeMs]);
  }

  pruneExecutions(query: PruneQuery): Promise<number> {
    return pruneExecutionsBatch(this.exec, query);
  }

  endedCutoffKeeping(keep: number): Promise<number | null> {
    return endedCutoffKeeping(this.exec, keep);
  }

  async databaseNow(): Promise<number> {
    const rows = await this.exec.all(`SELECT ${this.sqlDialect.nowMs} AS now`, []);
    return Number(rows[0]?.now);
  }
}
