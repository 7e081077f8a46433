/**
 * The complete set of Store operations in portable SQL: execution operations (execution-ops.ts)
 * plus schedules, the occurrence ledger and idempotency keys. A store runs an instance of this
 * class over its connection for plain calls, and a fresh one over the transaction's connection
 * for each transaction.
 */
import { MIGRATIONS_TABLE } from "../migrations.js";
import type { IdempotencyRecord, NewOccurrence, OccurrenceRow, ScheduleRow } from "../rows.js";
import type {
  DueSchedule,
  DueScheduleQuery,
  LedgerHead,
  ListSchedulesOptions,
  LockOption,
  OccurrenceQuery,
  PruneBatch,
  PruneQuery,
  ScheduleAdvance,
  ScheduleCas,
  ScheduleSearchFilter,
  StoreOps,
} from "../store.js";
import { arrayParam, batchInsertSql, jsonParam, quote } from "./columns.js";
import type { SqlParam } from "./executor.js";
import { OutcomeOps } from "./outcome-ops.js";
import { endedCutoffKeeping, pruneExecutionsBatch } from "./retention-ops.js";
import { overdueWhere, scheduleSearchSql } from "./schedule-search-sql.js";
import {
  IDEMPOTENCY_ALL,
  IDEMPOTENCY_KEYS,
  OCCURRENCE_NEW,
  OCCURRENCES,
  READ,
  SCHEDULE_ADVANCE,
  SCHEDULE_ALL,
  SCHEDULE_UPDATE,
  SCHEDULES,
} from "./tables.js";

const INSERT_SCHEDULE = batchInsertSql(SCHEDULES, SCHEDULE_ALL, { tail: "ON CONFLICT (schedule_id) DO NOTHING" });
/** A fire's compare-and-set: the schedule's revision and nominal next fire must be what it read. */
const ADVANCE_SQLITE = `UPDATE orbit_schedules SET ${SCHEDULE_ADVANCE.sets}, revision = revision + 1
  WHERE schedule_id = ? AND revision = ? AND next_fire_ms IS NOT DISTINCT FROM ?`;
const ADVANCE_POSTGRES = `UPDATE orbit_schedules AS s SET ${SCHEDULE_ADVANCE.setsFromUnnest},
    revision = s.revision + 1
  FROM unnest(?::text[], ?::int[], ?::bigint[], ${SCHEDULE_ADVANCE.arrayMarks})
    AS u(schedule_id, expected_revision, expected_next_fire_ms, ${SCHEDULE_ADVANCE.list})
  WHERE s.schedule_id = u.schedule_id AND s.revision = u.expected_revision
    AND s.next_fire_ms IS NOT DISTINCT FROM u.expected_next_fire_ms
  RETURNING s.schedule_id`;

/**
 * The due read: the schedule's own columns, without the outcome columns, which a fire neither reads
 * nor writes (the widest part of a row), qualified (an execution has columns of the same names); and
 * its last execution's status, which the fire needs for overlap, in the same statement rather than a
 * second read of the batch's executions (docs/benchmarks.md § Firing).
 */
const DUE_SELECT = `SELECT ${SCHEDULE_ALL.names.map((n) => `s.${quote(n)}`).join(", ")}, e.status AS last_status
  FROM orbit_schedules AS s LEFT JOIN orbit_executions AS e ON e.execution_id = s.last_execution_id
  WHERE s.state = 'active' AND s.due_ms IS NOT NULL AND s.due_ms <= ?
  ORDER BY s.due_ms, s.schedule_id LIMIT ?`;

/** Keeps a schedule's newest `keep` ledger rows: deletes from the (keep + 1)-th newest id down. */
const PRUNE_ONE = `DELETE FROM orbit_occurrences WHERE schedule_id = ? AND id <=
  (SELECT id FROM orbit_occurrences WHERE schedule_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`;
/** {@link PRUNE_ONE} for many schedules: each one's cut-off id found once, then one delete. */
const PRUNE_MANY_POSTGRES = `DELETE FROM orbit_occurrences AS o
  USING (SELECT u.schedule_id, (SELECT id FROM orbit_occurrences WHERE schedule_id = u.schedule_id
      ORDER BY id DESC LIMIT 1 OFFSET ?) AS cut FROM unnest(?::text[]) AS u(schedule_id)) AS c
  WHERE o.schedule_id = c.schedule_id AND o.id <= c.cut`;

/** A new ledger row with its defaults, in the table's shape (the id is the database's). */
function occurrence(o: NewOccurrence) {
  return {
    id: 0,
    scheduleId: o.scheduleId,
    kind: o.kind,
    occurrenceMs: o.occurrenceMs,
    rangeFromMs: o.rangeFromMs ?? null,
    rangeToMs: o.rangeToMs ?? null,
    count: o.count ?? 1,
    reason: o.reason ?? null,
    executionId: o.executionId ?? null,
    error: o.error ?? null,
    recordedMs: o.recordedMs,
  };
}
const occurrenceParams = (o: NewOccurrence): SqlParam[] => OCCURRENCE_NEW.params(occurrence(o));
/** Schedules per statement of ledgerHeads (a page of the list is up to 1,000). */
const LEDGER_HEADS_CHUNK = 500;

const INSERT_OCCURRENCE = batchInsertSql(OCCURRENCES, OCCURRENCE_NEW, { ordered: true });

const INSERT_IDEMPOTENCY_KEY = batchInsertSql(IDEMPOTENCY_KEYS, IDEMPOTENCY_ALL, {
  tail: "ON CONFLICT (scope, key) DO NOTHING",
});

export class SqlOps extends OutcomeOps implements StoreOps {
  // Schedules

  async insertSchedule(row: ScheduleRow): Promise<boolean> {
    return (await this.exec.run(INSERT_SCHEDULE.single, SCHEDULE_ALL.params(row))) === 1;
  }

  async insertSchedules(rows: readonly ScheduleRow[]): Promise<string[]> {
    return this.insertSkippingConflicts(INSERT_SCHEDULE, SCHEDULE_ALL, rows, {
      column: "schedule_id",
      of: (r) => r.scheduleId,
    });
  }

  async getSchedules(scheduleIds: readonly string[], lock?: LockOption): Promise<ScheduleRow[]> {
    if (scheduleIds.length === 0) return [];
    const ids = this.sqlDialect.inList("schedule_id", scheduleIds);
    const rows = await this.exec.all(
      `SELECT ${READ.schedules} FROM orbit_schedules WHERE ${ids.sql} ORDER BY schedule_id${this.lock(lock)}`,
      [ids.param],
    );
    return rows.map((r) => this.map.schedule(r));
  }

  async getSchedule(scheduleId: string, lock?: LockOption): Promise<ScheduleRow | null> {
    const bounded = lock?.forUpdate === true && lock.waitMs !== undefined && this.sqlDialect.name === "postgres";
    if (bounded) await this.exec.run(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(lock.waitMs ?? 0))}`, []);
    const rows = await this.exec.all(
      `SELECT ${READ.schedules} FROM orbit_schedules WHERE schedule_id = ?${this.lock(lock)}`,
      [scheduleId],
    );
    if (bounded) await this.exec.run("SET LOCAL lock_timeout TO DEFAULT", []);
    return rows[0] ? this.map.schedule(rows[0]) : null;
  }

  async listSchedules(opts: ListSchedulesOptions): Promise<ScheduleRow[]> {
    const q = listSchedulesSql(opts, READ.schedules);
    return (await this.exec.all(q.sql, q.params)).map((r) => this.map.schedule(r));
  }

  async scheduleSizes(query: ListSchedulesOptions | ScheduleSearchFilter): Promise<number[]> {
    const select = `${this.sqlDialect.textBytes("input")} + ${this.sqlDialect.textBytes("spec")} AS bytes`;
    const q =
      "sort" in query ? scheduleSearchSql(this.sqlDialect, query, select).page : listSchedulesSql(query, select);
    return (await this.exec.all(q.sql, q.params)).map((r) => Number(r.bytes));
  }

  async searchSchedules(
    filter: ScheduleSearchFilter,
  ): Promise<{ rows: ScheduleRow[]; counts: Record<string, number> }> {
    const q = scheduleSearchSql(this.sqlDialect, filter);
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
    const params: SqlParam[] = [
      ...SCHEDULE_UPDATE.params(row),
      cas.expectedRevision + 1,
      row.scheduleId,
      cas.expectedRevision,
    ];
    let guard = "schedule_id = ? AND revision = ?";
    if (cas.expectedNextFireMs !== undefined) {
      guard += " AND next_fire_ms IS NOT DISTINCT FROM ?";
      params.push(cas.expectedNextFireMs);
    }
    const rows = await this.exec.all(
      `UPDATE orbit_schedules SET ${SCHEDULE_UPDATE.sets}, revision = ? WHERE ${guard} RETURNING ${READ.schedules}`,
      params,
    );
    return rows[0] ? this.map.schedule(rows[0]) : null;
  }

  async advanceSchedules(advances: readonly ScheduleAdvance[]): Promise<string[]> {
    if (advances.length === 0) return [];
    if (this.sqlDialect.batch === "rows") {
      const changed = await this.exec.runMany(
        ADVANCE_SQLITE,
        advances.map((a) => {
          const params = SCHEDULE_ADVANCE.params(a.row);
          params.push(a.row.scheduleId, a.expectedRevision, a.expectedNextFireMs);
          return params;
        }),
      );
      return advances.filter((_, i) => changed[i] === 1).map((a) => a.row.scheduleId);
    }
    const guards = [
      advances.map((a) => a.row.scheduleId),
      advances.map((a) => a.expectedRevision),
      advances.map((a) => a.expectedNextFireMs),
    ] as unknown as SqlParam[];
    const rows = await this.exec.all(ADVANCE_POSTGRES, [
      ...guards,
      ...SCHEDULE_ADVANCE.arrays(advances.map((a) => a.row)),
    ]);
    return rows.map((r) => String(r.schedule_id));
  }

  async deleteSchedule(scheduleId: string, expectedRevision?: number): Promise<boolean> {
    const deleted =
      expectedRevision === undefined
        ? await this.exec.all("DELETE FROM orbit_schedules WHERE schedule_id = ? RETURNING revision, failures", [
            scheduleId,
          ])
        : await this.exec.all(
            "DELETE FROM orbit_schedules WHERE schedule_id = ? AND revision = ? RETURNING revision, failures",
            [scheduleId, expectedRevision],
          );
    if (deleted.length === 0) return false;
    // Its failures stay counted (the sum of orbit_schedule_failures_total never goes down, 0020).
    await this.exec.run(
      `INSERT INTO orbit_schedule_tombstones (schedule_id, revision, failures) VALUES (?, ?, ?)
       ON CONFLICT (schedule_id) DO UPDATE SET revision = excluded.revision,
         failures = orbit_schedule_tombstones.failures + excluded.failures`,
      [scheduleId, Number(deleted[0]?.revision), Number(deleted[0]?.failures ?? 0)],
    );
    // The ledger goes with its schedule: a schedule created later under the same id starts empty
    // (its last_tick and occurrences must not show the deleted one's decisions). Executions stay.
    await this.exec.run("DELETE FROM orbit_occurrences WHERE schedule_id = ?", [scheduleId]);
    return true;
  }

  async deletedRevisions(scheduleIds: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (!scheduleIds.length) return out;
    const ids = this.sqlDialect.inList("schedule_id", scheduleIds);
    const rows = await this.exec.all(`SELECT schedule_id, revision FROM orbit_schedule_tombstones WHERE ${ids.sql}`, [
      ids.param,
    ]);
    for (const r of rows) out.set(String(r.schedule_id), Number(r.revision));
    return out;
  }

  async listDueSchedules(query: DueScheduleQuery): Promise<DueSchedule[]> {
    // `state = 'active'` is a literal so SQLite can use the partial index orbit_schedules_due.
    const rows = await this.exec.all(
      `${DUE_SELECT}${query.skipLocked ? this.sqlDialect.forUpdateOfSkipLocked("s") : ""}`,
      [query.dueAtOrBeforeMs, query.limit],
    );
    return rows.map((r) => {
      const row = SCHEDULES.read(r, this.sqlDialect) as DueSchedule;
      row.lastStatus = r.last_status == null ? null : (String(r.last_status) as DueSchedule["lastStatus"]);
      return row;
    });
  }

  async wakeBufferedSchedules(
    target: { scheduleIds: readonly string[]; concurrencyKeys: readonly string[] },
    dueMs: number,
  ): Promise<number> {
    const which: string[] = [];
    const params: SqlParam[] = [];
    for (const [column, values] of [
      ["schedule_id", target.scheduleIds],
      ["concurrency_key", target.concurrencyKeys],
    ] as const) {
      if (!values.length) continue;
      const list = this.sqlDialect.inList(column, values);
      which.push(list.sql);
      params.push(list.param);
    }
    if (!which.length) return 0;
    // Due at the oldest buffered occurrence (it is in the past): the loop fires due rows oldest
    // first, so waiters on a concurrency key are served in the order of their occurrences, not
    // by schedule id (docs/scheduling.md, "Concurrency keys").
    const oldest = this.sqlDialect.jsonFirstInteger("buffered");
    const wakeAt = `(CASE WHEN ${oldest} < ? THEN ${oldest} ELSE ? END)`;
    return this.exec.run(
      `UPDATE orbit_schedules SET due_ms = ${wakeAt}, revision = revision + 1
       WHERE (${which.join(" OR ")}) AND state = 'active' AND NOT paused AND buffered <> '[]'
         AND (due_ms IS NULL OR due_ms > ${wakeAt})`,
      [dueMs, dueMs, ...params, dueMs, dueMs],
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
      `SELECT COUNT(*) AS n FROM orbit_schedules WHERE ${overdueWhere(this.sqlDialect)}`,
      [dueBeforeMs, dueBeforeMs],
    );
    return Number(rows[0]?.n ?? 0);
  }

  // Occurrence ledger

  async appendOccurrence(o: NewOccurrence): Promise<OccurrenceRow> {
    const rows = await this.exec.all(`${INSERT_OCCURRENCE.single} RETURNING ${READ.occurrences}`, occurrenceParams(o));
    if (!rows[0]) throw new Error("INSERT … RETURNING returned no row");
    return this.map.occurrence(rows[0]);
  }

  async appendOccurrences(occurrences: readonly NewOccurrence[]): Promise<void> {
    if (occurrences.length === 0) return;
    if (this.sqlDialect.batch === "rows") {
      await this.exec.runMany(INSERT_OCCURRENCE.single, occurrences.map(occurrenceParams));
      return;
    }
    // WITH ORDINALITY … ORDER BY: ids are assigned in the order given.
    await this.exec.run(INSERT_OCCURRENCE.unnest, OCCURRENCE_NEW.arrays(occurrences.map(occurrence)));
  }

  async listOccurrences(scheduleId: string, query: OccurrenceQuery): Promise<OccurrenceRow[]> {
    let sql = `SELECT ${READ.occurrences} FROM orbit_occurrences WHERE schedule_id = ?`;
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

  async lastDecidedOccurrenceMs(scheduleId: string): Promise<number | null> {
    // Down the (schedule_id, id) index: a schedule's ledger is bounded by its retention.
    const [row] = await this.exec.all(
      "SELECT MAX(COALESCE(range_to_ms, occurrence_ms)) AS last FROM orbit_occurrences WHERE schedule_id = ?",
      [scheduleId],
    );
    return row?.last == null ? null : Number(row.last);
  }

  async ledgerHeads(scheduleIds: readonly string[], deadLetters: number): Promise<Map<string, LedgerHead>> {
    const heads = new Map<string, LedgerHead>();
    const cols = READ.occurrences;
    for (let i = 0; i < scheduleIds.length; i += LEDGER_HEADS_CHUNK) {
      const ids = scheduleIds.slice(i, i + LEDGER_HEADS_CHUNK);
      const marks = ids.map(() => "?").join(", ");
      for (const id of ids) heads.set(id, { lastTick: null, deadLetters: [] });
      // Each schedule's newest row is one step down its (schedule_id, id DESC) index. The ids are
      // given as rows (VALUES names its column column1 in both dialects), not read from
      // orbit_schedules: a deleted schedule's view still shows its ledger.
      const ticks = await this.exec.all(
        `SELECT ${cols} FROM orbit_occurrences WHERE id IN (
           SELECT (SELECT o.id FROM orbit_occurrences AS o WHERE o.schedule_id = v.column1 ORDER BY o.id DESC LIMIT 1)
             FROM (VALUES ${ids.map(() => "(?)").join(", ")}) AS v)`,
        ids,
      );
      for (const r of ticks) {
        const row = this.map.occurrence(r);
        const head = heads.get(row.scheduleId);
        if (head) head.lastTick = row;
      }
      // Dead letters through their own partial index (migration 0019): rare, so few rows to number.
      const dead = await this.exec.all(
        `SELECT ${cols} FROM (SELECT ${cols}, ROW_NUMBER() OVER (PARTITION BY schedule_id ORDER BY id DESC) AS n
           FROM orbit_occurrences WHERE kind = 'dead_letter' AND schedule_id IN (${marks})) AS d
          WHERE n <= ? ORDER BY schedule_id, id DESC`,
        [...ids, deadLetters],
      );
      for (const r of dead) {
        const row = this.map.occurrence(r);
        heads.get(row.scheduleId)?.deadLetters.push(row);
      }
    }
    return heads;
  }

  async pruneOccurrences(scheduleId: string, keep: number): Promise<number> {
    return this.exec.run(PRUNE_ONE, [scheduleId, scheduleId, keep]);
  }

  async pruneOccurrencesOf(scheduleIds: readonly string[], keep: number): Promise<number> {
    if (scheduleIds.length === 0) return 0;
    if (this.sqlDialect.batch === "rows") {
      const deleted = await this.exec.runMany(
        PRUNE_ONE,
        scheduleIds.map((id) => [id, id, keep]),
      );
      return deleted.reduce((a, b) => a + b, 0);
    }
    return this.exec.run(PRUNE_MANY_POSTGRES, [keep, arrayParam(scheduleIds)]);
  }

  // Idempotency keys

  async insertIdempotencyKey(r: IdempotencyRecord, waitMs?: number): Promise<boolean> {
    // PostgreSQL: the insert waits while another transaction holds an uncommitted claim of the key;
    // bounded, it fails with lock_timeout (55P03) instead of running into the answer bound.
    if (waitMs === undefined || this.sqlDialect.name !== "postgres") {
      return (await this.exec.run(INSERT_IDEMPOTENCY_KEY.single, IDEMPOTENCY_ALL.params(r))) === 1;
    }
    await this.exec.run(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(waitMs))}`, []);
    const inserted = (await this.exec.run(INSERT_IDEMPOTENCY_KEY.single, IDEMPOTENCY_ALL.params(r))) === 1;
    await this.exec.run("SET LOCAL lock_timeout TO DEFAULT", []);
    return inserted;
  }

  async getIdempotencyKey(scope: string, key: string): Promise<IdempotencyRecord | null> {
    const rows = await this.exec.all(
      `SELECT ${READ.idempotency} FROM orbit_idempotency_keys WHERE scope = ? AND key = ?`,
      [scope, key],
    );
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

  pruneExecutions(query: PruneQuery): Promise<PruneBatch> {
    return pruneExecutionsBatch(this.exec, query, this.sqlDialect.name);
  }

  endedCutoffKeeping(keep: number): Promise<number | null> {
    return endedCutoffKeeping(this.exec, keep);
  }

  async databaseNow(): Promise<number> {
    const rows = await this.exec.all(`SELECT ${this.sqlDialect.nowMs} AS now`, []);
    return Number(rows[0]?.now);
  }

  async appliedMigrations(): Promise<number[]> {
    const rows = await this.exec.all(`SELECT version FROM ${MIGRATIONS_TABLE} ORDER BY version`, []);
    return rows.map((r) => Number(r.version));
  }
}

/** The plain schedule list's page: in id order after `afterId`, filtered by workflow and state. */
function listSchedulesSql(opts: ListSchedulesOptions, select: string): { sql: string; params: SqlParam[] } {
  const where: string[] = [];
  const params: SqlParam[] = [];
  for (const [column, value] of [
    ["schedule_id >", opts.afterId],
    ["workflow =", opts.workflow],
    ["state =", opts.state],
  ] as const) {
    if (value === undefined) continue;
    where.push(`${column} ?`);
    params.push(value);
  }
  const filtered = where.length > 0 ? ` WHERE ${where.join(" AND ")}` : "";
  return {
    sql: `SELECT ${select} FROM orbit_schedules${filtered} ORDER BY schedule_id LIMIT ?`,
    params: [...params, opts.limit],
  };
}
