/**
 * Server-side search over the schedules table for the web UI and `GET /v1/schedules?q=…&sort=…`
 * (docs/api.md § Listing and searching schedules): a text match on id, workflow and description,
 * filters, a sort and a cursor that stays valid while the list changes.
 *
 * Two ways to the same answers: the database does it (src/store/sql/schedule-search-sql.ts),
 * except with access control on (a predicate per workflow, decided in code): then the table is read
 * and searched here in memory.
 */
import { hasUnstorableChar } from "../domain/body-guard.js";
import { OrbitError } from "../domain/errors.js";
import type { ScheduleRow } from "../store/rows.js";

export const SCHEDULE_SORTS = [
  "id",
  "workflow",
  "next_fire",
  "last_fire",
  "fired",
  "skipped",
  "updated",
  "failures",
] as const;
/**
 * The last outcome filter's values: the status of the last ended execution, `none` before one
 * ended, and `not_starting` for a schedule whose occurrences cannot start (its `last_error` is set:
 * the workflow missing, an input the version refuses), which has no run to fail.
 */
export const SCHEDULE_OUTCOMES = ["succeeded", "failed", "cancelled", "none", "not_starting"] as const;
export type ScheduleSort = (typeof SCHEDULE_SORTS)[number];

/**
 * A schedule whose next fire is this far in the past and has not happened is overdue, unless the
 * server's misfire grace says otherwise (`overdueAfterMs`: the threshold of orbit_schedules_overdue).
 */
export const OVERDUE_AFTER_MS = 60_000;

export interface ScheduleSearch {
  /** Case-insensitive substring of schedule_id, workflow or description. */
  q?: string;
  workflow?: string;
  state?: string;
  /** The schedule's last outcome (`succeeded`, `failed`, `cancelled`, `none`), or `not_starting`. */
  outcome?: string;
  overdue?: boolean;
  /** How late is overdue: the server's misfire grace (default {@link OVERDUE_AFTER_MS}). */
  overdueAfterMs?: number;
  sort?: ScheduleSort;
  order?: "asc" | "desc";
  cursor?: string;
  limit: number;
  visible?: (workflow: string) => boolean;
}

export interface SearchResult {
  rows: ScheduleRow[];
  next_cursor: string | null;
  /** How many match (all pages). */
  total: number;
  /** The matches by state, before the state filter: what the UI's filter shows beside each state. */
  counts: { active: number; paused: number; ended: number };
}

export type Key = string | number | null;

export function keyOf(row: ScheduleRow, sort: ScheduleSort): Key {
  switch (sort) {
    case "id":
      return row.scheduleId;
    case "workflow":
      return row.workflow;
    case "next_fire":
      return row.state === "active" ? row.dueMs : null;
    case "last_fire":
      return row.lastFireMs;
    case "fired":
      return row.fired;
    case "skipped":
      return row.skipped;
    case "updated":
      return row.updatedMs;
    case "failures":
      return outcomesOf(row)?.consecutiveFailures ?? 0;
  }
}

/** Nulls sort last in either order; ties break on schedule_id ascending so the order is total. */
function compare(a: Key, aId: string, b: Key, bId: string, desc: boolean): number {
  if (a !== b) {
    if (a === null) return 1;
    if (b === null) return -1;
    const c = a < b ? -1 : 1;
    return desc ? -c : c;
  }
  return aId < bId ? -1 : aId > bId ? 1 : 0;
}

/** The outcome columns of issue 13 (docs/outcomes.md), read structurally: absent on older rows. */
function outcomesOf(
  row: ScheduleRow,
): { lastOutcome?: { status?: string } | null; consecutiveFailures?: number } | undefined {
  return (row as unknown as { outcomes?: { lastOutcome?: { status?: string } | null; consecutiveFailures?: number } })
    .outcomes;
}

/** `succeeded` (COMPLETED), `failed` (FAILED), `cancelled` (CANCELLED) or `none` (nothing ended yet). */
export function outcomeOf(row: ScheduleRow): string {
  const status = outcomesOf(row)?.lastOutcome?.status;
  if (status === "COMPLETED") return "succeeded";
  if (status === "FAILED") return "failed";
  if (status === "CANCELLED") return "cancelled";
  return "none";
}

/** Whether the row passes the last outcome filter (`not_starting`: its start is refused). */
function outcomeMatches(row: ScheduleRow, outcome: string): boolean {
  return outcome === "not_starting" ? row.lastError !== null : outcomeOf(row) === outcome;
}

/**
 * Due at its oldest buffered occurrence: an execution that held its slot (its own, or its
 * concurrency key's) ended, and the loop will decide the occurrence against the slot
 * (wakeBufferedSchedules). That due time is the occurrence's, minutes old when the slot was held
 * that long, so it says nothing of the loop: a doctor run in the moment before the loop's round read
 * a working server as minutes behind (docs/design.md § Overdue).
 */
export function isWokenBuffer(row: ScheduleRow): boolean {
  const oldest = row.buffered[0];
  return oldest !== undefined && row.dueMs !== null && Number(oldest) === row.dueMs;
}

/**
 * What orbit_schedules_overdue counts: due longer ago than the grace, or waiting to retry a refused
 * start with nothing started for longer than the grace (a retry moves the due time, and each
 * occurrence refused past the grace is dead-lettered, so no due time of such a schedule gets old).
 */
export function isOverdue(row: ScheduleRow, now: number, afterMs = OVERDUE_AFTER_MS): boolean {
  if (row.state !== "active" || row.paused || row.dueMs === null) return false;
  if (isWokenBuffer(row)) return false;
  const before = now - afterMs;
  return row.dueMs < before || (row.retryMs !== null && (row.lastFireMs ?? row.createdMs) < before);
}

/**
 * What a search's cursor starts with: `~` is in no schedule id (`[A-Za-z0-9_.-]`), so a search's
 * cursor is never taken for the plain list's (which is the last id) nor the other way round. Told
 * apart by their shape, an id such as `WyJ4IiwiYXNjIiwwLDBd` (base64 of `["x","asc",0,0]`) issued
 * by the plain list as its cursor was refused as a search's (a tester).
 */
export const SEARCH_CURSOR_MARK = "~";

/** A page's cursor: the list's order and the last row's position in it. */
export function encodeCursor(sort: ScheduleSort, desc: boolean, key: Key, id: string): string {
  const json = JSON.stringify([sort, desc ? "desc" : "asc", key, id]);
  return SEARCH_CURSOR_MARK + Buffer.from(json, "utf8").toString("base64url");
}

/**
 * The position a cursor names, refused unless this list (the same sort and order) could have
 * returned it: a cursor of another sort was read as a position of this one (a wrong or empty page).
 */
export function decodeCursor(text: string, sort: ScheduleSort, desc: boolean): [Key, string] {
  try {
    if (!text.startsWith(SEARCH_CURSOR_MARK)) throw new Error("not a search's cursor");
    const v = JSON.parse(Buffer.from(text.slice(SEARCH_CURSOR_MARK.length), "base64url").toString("utf8")) as unknown;
    if (
      Array.isArray(v) &&
      v.length === 4 &&
      v[0] === sort &&
      v[1] === (desc ? "desc" : "asc") &&
      typeof v[3] === "string" &&
      // No id or name holds one: PostgreSQL refused the NUL with a 500 (a tester's fuzzing).
      !hasUnstorableChar(v[3])
    ) {
      const key = v[2] as unknown;
      const text = sort === "id" || sort === "workflow";
      const fits = text
        ? typeof key === "string" && !hasUnstorableChar(key)
        : key === null || Number.isSafeInteger(key);
      if (fits) return [key as Key, v[3]];
    }
  } catch {
    // refused below
  }
  throw new OrbitError("INVALID_ARGUMENT", "cursor is not a next_cursor this list returned (with this sort and order)");
}

export function searchSchedules(all: readonly ScheduleRow[], s: ScheduleSearch, now: number): SearchResult {
  const q = s.q?.trim().toLowerCase() ?? "";
  const counts = { active: 0, paused: 0, ended: 0 };
  const matches: ScheduleRow[] = [];
  for (const row of all) {
    if (s.visible !== undefined && !s.visible(row.workflow)) continue;
    if (s.workflow !== undefined && row.workflow !== s.workflow) continue;
    if (s.outcome !== undefined && !outcomeMatches(row, s.outcome)) continue;
    if (s.overdue === true && !isOverdue(row, now, s.overdueAfterMs)) continue;
    if (q !== "") {
      const description = (row.spec as { description?: unknown }).description;
      const hit =
        row.scheduleId.toLowerCase().includes(q) ||
        row.workflow.toLowerCase().includes(q) ||
        (typeof description === "string" && description.toLowerCase().includes(q));
      if (!hit) continue;
    }
    counts[row.state] += 1;
    if (s.state !== undefined && row.state !== s.state) continue;
    matches.push(row);
  }
  const sort = s.sort ?? "id";
  const desc = s.order === "desc";
  const keyed = matches.map((row) => ({ row, key: keyOf(row, sort) }));
  keyed.sort((a, b) => compare(a.key, a.row.scheduleId, b.key, b.row.scheduleId, desc));
  let start = 0;
  if (s.cursor !== undefined) {
    const [key, id] = decodeCursor(s.cursor, sort, desc);
    // The first row after the cursor's position (a value, not a row), so the walk goes on when the
    // cursor's own row was deleted or moved. A row whose key moved meanwhile has moved in the order:
    // it may come again or never (docs/api.md § Listing and searching schedules).
    start = keyed.findIndex((k) => compare(k.key, k.row.scheduleId, key, id, desc) > 0);
    if (start === -1) start = keyed.length;
  }
  const page = keyed.slice(start, start + s.limit);
  const last = page[page.length - 1];
  return {
    rows: page.map((k) => k.row),
    next_cursor:
      start + s.limit < keyed.length && last ? encodeCursor(sort, desc, last.key, last.row.scheduleId) : null,
    total: matches.length,
    counts,
  };
}
