/**
 * The schedule list (`GET /v1/schedules`): a page in id order, filtered by workflow and state, or a
 * search (schedule-search.ts) with a sort, its cursor, `total` and `counts`. Each view is the
 * schedule's full read, its `last_tick` and dead letters included (read for the page at once).
 */
import { OrbitError } from "../domain/errors.js";
import type { JsonObject } from "../domain/json.js";
import type { ScheduleRow } from "../store/rows.js";
import type { Store, StoreOps } from "../store/store.js";
import {
  decodeCursor,
  encodeCursor,
  keyOf,
  OVERDUE_AFTER_MS,
  type ScheduleSort,
  SEARCH_CURSOR_MARK,
  type SearchResult,
  searchSchedules,
} from "./schedule-search.js";
import { SCHEDULE_ID } from "./settings.js";
import { scheduleViews } from "./view.js";

export interface ListSchedulesQuery {
  workflow?: string;
  state?: string;
  cursor?: string;
  /** Default 100, at most 1000. */
  limit?: number;
  /** Only schedules of workflows this predicate allows (access control). */
  visible?: (workflow: string) => boolean;
  /** Any of these makes it a search (schedule-search.ts): the answer adds `total` and `counts`. */
  q?: string;
  outcome?: string;
  overdue?: boolean;
  /** How late is overdue (the server's misfire grace; default 60 s): set by Schedules.list. */
  overdueAfterMs?: number;
  sort?: ScheduleSort;
  order?: "asc" | "desc";
}

/** A page of schedules; a search adds how many match and their states. */
export interface SchedulePage {
  schedules: JsonObject[];
  next_cursor: string | null;
  total?: number;
  counts?: SearchResult["counts"];
}

/**
 * The most bytes a page reads of its rows' inputs and settings (which hold the input twice more, as
 * parsed and as written: about 3 bytes read per byte of input): a page
 * of 1,000 schedules with inputs of 1 MB (both allowed) was a 1 GB answer; 100 of them took 41 s to
 * build, with /healthz unanswered meanwhile, and the server's memory to 1 GB (a tester). About 4 MB
 * of inputs a page; a page holds at least one schedule.
 */
export const PAGE_BYTES = 12 * 1024 * 1024;

/** How many of the rows of `sizes` (bytes each, in page order) a page of at most `limit` holds. */
function rowsWithin(sizes: readonly number[], limit: number): number {
  let n = 0;
  let bytes = 0;
  for (const size of sizes) {
    if (n === limit || (n > 0 && bytes + size > PAGE_BYTES)) break;
    bytes += size;
    n++;
  }
  return n;
}

export async function listSchedules(
  store: Store,
  now: () => Promise<number>,
  query: ListSchedulesQuery = {},
): Promise<SchedulePage> {
  const limit = query.limit ?? 100;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) {
    throw new OrbitError("INVALID_ARGUMENT", `limit must be an integer from 1 to 1000, got ${limit}`);
  }
  const { q, outcome, overdue, sort, order } = query;
  if ([q, outcome, overdue, sort, order].some((v) => v !== undefined))
    return search(store, await now(), { ...query, limit });
  if (query.cursor !== undefined) checkIdCursor(query.cursor);
  const filter = {
    ...(query.cursor !== undefined ? { afterId: query.cursor } : {}),
    ...(query.workflow !== undefined ? { workflow: query.workflow } : {}),
    ...(query.state !== undefined ? { state: query.state } : {}),
  };
  if (query.visible === undefined) {
    // The rows' sizes first, then as many rows as fit (PAGE_BYTES).
    const sizes = await store.scheduleSizes({ ...filter, limit: limit + 1 });
    const n = rowsWithin(sizes, limit);
    const page = n === 0 ? [] : await store.listSchedules({ ...filter, limit: n });
    return {
      schedules: await scheduleViews(store, page, await now()),
      next_cursor: sizes.length > n ? (page[page.length - 1]?.scheduleId ?? null) : null,
    };
  }
  const out: ScheduleRow[] = [];
  let after = query.cursor;
  // Access control filters after the read: read on in batches until the page is full or the table ends.
  const batch = Math.max(limit + 1, 500);
  for (;;) {
    const rows = await store.listSchedules({
      ...(after !== undefined ? { afterId: after } : {}),
      ...(query.workflow !== undefined ? { workflow: query.workflow } : {}),
      ...(query.state !== undefined ? { state: query.state } : {}),
      limit: batch,
    });
    for (const row of rows) {
      if (!query.visible(row.workflow)) continue;
      out.push(row);
      if (out.length > limit) break;
    }
    if (out.length > limit || rows.length < batch) break;
    after = rows[rows.length - 1]?.scheduleId;
  }
  const page = out.slice(0, limit);
  const at = await now();
  return {
    schedules: await scheduleViews(store, page, at),
    next_cursor: out.length > limit ? (page[page.length - 1]?.scheduleId ?? null) : null,
  };
}

/**
 * The plain list's cursor is the last id of its page: a text no id can be, or a search's cursor
 * (which started the list over from wherever its base64 fell), is refused as the other lists refuse
 * a cursor they did not issue (docs/api.md § Listing and searching schedules).
 */
function checkIdCursor(cursor: string): void {
  const searchCursor = cursor.startsWith(SEARCH_CURSOR_MARK);
  if (SCHEDULE_ID.test(cursor) && !searchCursor) return;
  const shown = cursor.length > 40 ? `${cursor.slice(0, 40)}…` : cursor;
  throw new OrbitError(
    "INVALID_ARGUMENT",
    searchCursor
      ? "cursor is a search's next_cursor: give it with the search's parameters (q, outcome, overdue, sort, order)"
      : `cursor ${JSON.stringify(shown)} is not one this list issued (a schedule id); omit it to start from the first`,
  );
}

/** `fn`'s reads on one snapshot of the database where the store has them (Store.readSnapshot). */
function onOneSnapshot<T>(store: Store, fn: (ops: StoreOps) => Promise<T>): Promise<T> {
  return store.readSnapshot ? store.readSnapshot(fn) : fn(store);
}

/**
 * A search (schedule-search.ts): by the database when it can decide every filter, otherwise by
 * reading the table and searching it in memory.
 */
async function search(store: Store, now: number, query: ListSchedulesQuery & { limit: number }): Promise<SchedulePage> {
  const sort = query.sort ?? "id";
  if (query.visible === undefined) {
    const desc = query.order === "desc";
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, sort, desc);
    const filter = {
      ...(query.q !== undefined ? { q: query.q.trim() } : {}),
      ...(query.workflow !== undefined ? { workflow: query.workflow } : {}),
      ...(query.state !== undefined ? { state: query.state } : {}),
      ...(query.overdue === true ? { overdueBeforeMs: now - (query.overdueAfterMs ?? OVERDUE_AFTER_MS) } : {}),
      ...(query.outcome !== undefined ? { outcome: query.outcome } : {}),
      sort,
      order: query.order ?? "asc",
      ...(after !== undefined ? { after: { key: after[0], id: after[1] } } : {}),
    } as const;
    // The rows' sizes first, then as many rows as fit (PAGE_BYTES), and the counts: on one snapshot,
    // or a schedule created or deleted between two of the reads made `total` disagree with the rows.
    const { sizes, n, rows, counts } = await onOneSnapshot(store, async (ops) => {
      const sizes = await ops.scheduleSizes({ ...filter, limit: query.limit + 1 });
      const n = rowsWithin(sizes, query.limit);
      return { sizes, n, ...(await ops.searchSchedules({ ...filter, limit: Math.max(n, 1) })) };
    });
    const page = rows.slice(0, n);
    const last = page[page.length - 1];
    const c = { active: counts.active ?? 0, paused: counts.paused ?? 0, ended: counts.ended ?? 0 };
    return {
      schedules: await scheduleViews(store, page, now),
      next_cursor: sizes.length > n && last ? encodeCursor(sort, desc, keyOf(last, sort), last.scheduleId) : null,
      total: query.state === undefined ? c.active + c.paused + c.ended : (c[query.state as keyof typeof c] ?? 0),
      counts: c,
    };
  }
  const all: ScheduleRow[] = [];
  for (;;) {
    const after = all[all.length - 1]?.scheduleId;
    const rows = await store.listSchedules({
      ...(after !== undefined ? { afterId: after } : {}),
      limit: 5000,
    });
    all.push(...rows);
    if (rows.length < 5000) break;
  }
  const found = searchSchedules(all, query, now);
  return {
    schedules: await scheduleViews(store, found.rows, now),
    next_cursor: found.next_cursor,
    total: found.total,
    counts: found.counts,
  };
}
