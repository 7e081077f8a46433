/**
 * The query of `GET /v1/executions` checked and turned into the store's filter: one place for its
 * limits and error messages (docs/api.md § Executions).
 */
import { OrbitError } from "../domain/errors.js";
import { isExecutionStatus } from "../domain/execution.js";
import type { ExecutionFilter } from "../store/store.js";
import { decodeCursor } from "./cursor.js";

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;

export interface ListExecutionsQuery {
  workflow?: string;
  status?: string;
  schedule_id?: string;
  /** RFC 3339 instants: created at or after / before. */
  created_after?: string;
  created_before?: string;
  /** From a previous page's `nextCursor`. */
  cursor?: string;
  /** Default 50, at most 1000. */
  limit?: number;
  /** `full` (default) or `summary`: without input and result, which the store then does not read. */
  view?: string;
}

/** The store filter for a query, or INVALID_ARGUMENT naming the bad parameter. */
export function executionFilterOf(query: ListExecutionsQuery): ExecutionFilter {
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw new OrbitError("INVALID_ARGUMENT", `limit must be an integer from 1 to ${MAX_PAGE_SIZE}, got ${limit}`);
  }
  if (query.status !== undefined && !isExecutionStatus(query.status)) {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `status ${JSON.stringify(query.status)} is not one of RUNNING, COMPENSATING, COMPLETED, FAILED, CANCELLED`,
    );
  }
  return {
    ...(query.workflow !== undefined ? { workflow: query.workflow } : {}),
    ...(query.status !== undefined ? { status: query.status } : {}),
    ...(query.schedule_id !== undefined ? { scheduleId: query.schedule_id } : {}),
    ...(query.created_after !== undefined ? { createdFromMs: instantMs(query.created_after, "created_after") } : {}),
    ...(query.created_before !== undefined ? { createdToMs: instantMs(query.created_before, "created_before") } : {}),
    ...(query.cursor !== undefined ? { before: decodeCursor(query.cursor) } : {}),
    ...(summaryView(query.view) ? { summary: true } : {}),
    limit,
  };
}

/** Whether `view` asks for the summary; INVALID_ARGUMENT for a view that is neither (the route's schema refuses it first). */
function summaryView(view: string | undefined): boolean {
  if (view === undefined || view === "full") return false;
  if (view === "summary") return true;
  throw new OrbitError("INVALID_ARGUMENT", `view ${JSON.stringify(view)} is not one of full, summary`);
}

/** An RFC 3339 query parameter in ms, or INVALID_ARGUMENT naming it. */
function instantMs(text: string, name: string): number {
  const ms = Date.parse(text);
  if (!Number.isFinite(ms))
    throw new OrbitError("INVALID_ARGUMENT", `${name} must be an RFC 3339 instant, got ${JSON.stringify(text)}`);
  return ms;
}
