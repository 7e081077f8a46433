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
