/**
 * The schedule search of docs/api.md § Listing and searching schedules, as SQL on either dialect:
 * the filters in WHERE, the sort as `ORDER BY (key IS NULL), key, schedule_id` (nulls last in both
 * orders, ties by id) and the cursor as a keyset condition on (key, id). The page reads `limit + 1`
 * rows; the state counts are one GROUP BY over the same filters without the state one. No text
 * index: a LIKE over 10,000 rows is a scan of one table, cheaper than reading and mapping them.
 */
import type { ScheduleSearchFilter } from "../store.js";
import type { SqlDialect } from "./dialect.js";
import type { SqlParam } from "./executor.js";
import { READ } from "./tables.js";

/**
 * Overdue (two `?`, the same instant: due before it): what orbit_schedules_overdue counts and
 * `overdue=true` lists — active, unpaused, and due longer ago than the grace, or waiting to retry a
 * refused start with nothing started for longer than the grace (since its last start, or its
 * creation); not a schedule woken for its oldest buffered occurrence (due at that occurrence, which
 * waits for its slot, not for the loop). schedule-search.ts isOverdue says the same in memory
 * (docs/design.md § Overdue).
 */
export function overdueWhere(dialect: SqlDialect): string {
  const oldestBuffered = dialect.jsonFirstInteger("buffered");
  // SQLite: `+state` keeps the planner off the partial index orbit_schedules_due, whose condition
  // these terms imply: through it, each row is a seek into the WITHOUT ROWID table, and a seek loads
  // every row it compares whole, a large input's overflow pages too. A scan reads the rows' first
  // pages only (migration 0022): 15 ms instead of 1.5 s for 50,000 schedules with 10 KB inputs, 8
  // instead of 16 ms with small ones (docs/storage.md § Large columns last).
  const state = dialect.name === "sqlite" ? "+state" : "state";
  return `${state} = 'active' AND NOT paused AND due_ms IS NOT NULL
    AND (due_ms < ? OR (retry_ms IS NOT NULL AND COALESCE(last_fire_ms, created_ms) < ?))
    AND NOT (buffered <> '[]' AND due_ms = ${oldestBuffered})`;
}

/** The sort key of each sort, as an SQL expression (null where the schedule has none). */
const KEYS: Readonly<Record<ScheduleSearchFilter["sort"], string>> = {
  id: "schedule_id",
  workflow: "workflow",
  next_fire: "CASE WHEN state = 'active' THEN due_ms END",
  last_fire: "last_fire_ms",
  fired: "fired",
  skipped: "skipped",
  updated: "updated_ms",
  failures: "consecutive_failures",
};

/** The last outcome filter's values and the execution status each stands for. */
const OUTCOME_STATUS: Readonly<Record<string, string>> = {
  succeeded: "COMPLETED",
  failed: "FAILED",
  cancelled: "CANCELLED",
};

export interface SearchSql {
  page: { sql: string; params: SqlParam[] };
  counts: { sql: string; params: SqlParam[] };
}

/** `%text%` for LIKE, with the pattern characters escaped (ESCAPE '\'). */
const contains = (text: string): string => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export function scheduleSearchSql(
  dialect: SqlDialect,
  f: ScheduleSearchFilter,
  select: string = READ.schedules,
): SearchSql {
  const where: string[] = [];
  const params: SqlParam[] = [];
  if (f.q !== undefined && f.q !== "") {
    const description = dialect.jsonText("spec", "description");
    const like = (col: string) => `${dialect.lower(col)} LIKE ? ESCAPE '\\'`;
    where.push(`(${like("schedule_id")} OR ${like("workflow")} OR ${like(description)})`);
    const p = contains(f.q);
    params.push(p, p, p);
  }
  if (f.workflow !== undefined) {
    where.push("workflow = ?");
    params.push(f.workflow);
  }
  if (f.outcome !== undefined) {
    const status = dialect.jsonText("last_outcome", "status");
    const wanted = OUTCOME_STATUS[f.outcome];
    if (f.outcome === "not_starting") where.push("last_error IS NOT NULL");
    else if (wanted === undefined) where.push("last_outcome IS NULL");
    else {
      where.push(`${status} = ?`);
      params.push(wanted);
    }
  }
  if (f.overdueBeforeMs !== undefined) {
    where.push(overdueWhere(dialect));
    params.push(f.overdueBeforeMs, f.overdueBeforeMs);
  }
  const countWhere = [...where];
  const countParams = [...params];
  if (f.state !== undefined) {
    where.push("state = ?");
    params.push(f.state);
  }
  const key = KEYS[f.sort];
  const desc = f.order === "desc";
  if (f.after !== undefined) {
    const { key: k, id } = f.after;
    if (k === null) {
      where.push(`(${key} IS NULL AND schedule_id > ?)`);
      params.push(id);
    } else {
      where.push(`(${key} IS NULL OR ${key} ${desc ? "<" : ">"} ? OR (${key} = ? AND schedule_id > ?))`);
      params.push(k, k, id);
    }
  }
  const w = (list: string[]) => (list.length === 0 ? "" : ` WHERE ${list.join(" AND ")}`);
  return {
    page: {
      sql: `SELECT ${select} FROM orbit_schedules${w(where)} ORDER BY (${key} IS NULL), ${key}${desc ? " DESC" : ""}, schedule_id LIMIT ?`,
      params: [...params, f.limit],
    },
    counts: {
      sql: `SELECT state, COUNT(*) AS n FROM orbit_schedules${w(countWhere)} GROUP BY state`,
      params: countParams,
    },
  };
}
