/**
 * Opaque keyset cursors for execution lists: base64url of `[created_ms, execution_id]` of the last
 * row returned. Keyset (not offset) paging stays correct while new executions arrive.
 */
import { hasUnstorableChar } from "../domain/body-guard.js";
import { OrbitError } from "../domain/errors.js";

export interface ExecutionCursor {
  createdMs: number;
  executionId: string;
}

export function encodeCursor(cursor: ExecutionCursor): string {
  return Buffer.from(JSON.stringify([cursor.createdMs, cursor.executionId]), "utf8").toString("base64url");
}

export function decodeCursor(text: string): ExecutionCursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    parsed = undefined;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    !Number.isSafeInteger(parsed[0]) ||
    typeof parsed[1] !== "string" ||
    // No id holds one: PostgreSQL refused the NUL with a 500 (a tester's fuzzing).
    hasUnstorableChar(parsed[1])
  ) {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `cursor ${JSON.stringify(text)} is not one this server issued; omit it to start from the newest`,
    );
  }
  return { createdMs: parsed[0] as number, executionId: parsed[1] };
}

/** A page of a list read newest first by a row id (the ledger, webhook deliveries). */
export interface RowIdPage {
  limit: number;
  /** Rows with a smaller id than this: the `next_cursor` of the page before. */
  beforeId?: number;
}

/**
 * A `{cursor?, limit?}` query of a list paged by row id. The cursor is what `next_cursor` gave: a
 * row's id in decimal digits; Number() alone also read "0x10", "1e3", " " and "-1", which answered
 * an empty page as if the list ended there.
 */
export function rowIdPage(query: { cursor?: string; limit?: number }): RowIdPage {
  const limit = query.limit ?? 100;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) {
    throw new OrbitError("INVALID_ARGUMENT", `limit must be an integer from 1 to 1000, got ${limit}`);
  }
  const cursor = query.cursor;
  if (cursor === undefined) return { limit };
  const beforeId = Number(cursor);
  if (!/^[1-9][0-9]{0,15}$/.test(cursor) || !Number.isSafeInteger(beforeId)) {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `cursor ${JSON.stringify(cursor.slice(0, 100))} is not one this server issued; omit it to start from the newest`,
    );
  }
  return { limit, beforeId };
}
