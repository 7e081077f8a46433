/**
 * Revision fences on schedule writes (docs/design.md § Changes): `If-Match: "<revision>"` (412 on mismatch) and
 * `?expected_revision=N` (409). Parsed here; checked by the scheduler inside the write's transaction.
 */
import { OrbitError } from "../domain/errors.js";
import { RawJson } from "../domain/json-text.js";
import type { Fence } from "../scheduler/schedules.js";

/** The If-Match header as one trimmed text (repeated headers joined with commas). */
const ifMatchText = (header: string | string[]): string => (Array.isArray(header) ? header.join(",") : header).trim();

/** `"3"`, `W/"3"` or `3`; `*` (any revision) is no fence. */
export function parseIfMatch(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const text = ifMatchText(header);
  if (text === "*") return undefined;
  // Quoted as the ETag, or bare; never half-quoted, never empty (an unset shell variable would
  // otherwise switch the check off without a word).
  const m = /^(?:W\/)?(?:"(\d{1,15})"|(\d{1,15}))$/.exec(text);
  if (m === null) {
    throw new OrbitError("INVALID_ARGUMENT", `If-Match ${JSON.stringify(text)} is not a schedule revision such as "3"`);
  }
  return Number(m[1] ?? m[2]);
}

/** The fence of a write request: its If-Match header and `expected_revision` query parameter. */
export function fenceOf(headers: Record<string, string | string[] | undefined>, query: unknown): Fence {
  const fence: Fence = {};
  const ifMatch = parseIfMatch(headers["if-match"]);
  if (ifMatch !== undefined) fence.ifMatch = ifMatch;
  const expected = (query as { expected_revision?: number } | undefined)?.expected_revision;
  if (expected !== undefined) fence.expectedRevision = expected;
  return fence;
}

/**
 * If-Match on a create: the schedule the body names is new, so it has no revision the condition
 * could match (RFC 9110 § 13.1.1: false when no current representation exists, for `*` too), and
 * the create is refused with 412 before anything is read or written, whether or not the id is taken.
 * A revision fence belongs on PATCH and the other writes to a schedule that exists.
 */
export function refuseIfMatchOnCreate(
  headers: Record<string, string | string[] | undefined>,
  scheduleId: unknown,
): void {
  const header = headers["if-match"];
  if (header === undefined) return;
  parseIfMatch(header);
  const text = ifMatchText(header);
  const id = typeof scheduleId === "string" ? `schedule ${scheduleId}` : "the schedule";
  throw new OrbitError(
    "PRECONDITION_FAILED",
    `${id} is created by this request, so it has no revision to match (If-Match: ${text}); create it without If-Match, or send If-Match with PATCH /v1/schedules/{id} to change a schedule that exists`,
  );
}

/** The ETag of a schedule JSON view: its revision, quoted. */
export function etagOf(schedule: unknown): Record<string, string> {
  // A replayed answer is its stored text (idempotency.ts): its revision is in the parsed value.
  const value = schedule instanceof RawJson ? schedule.value : schedule;
  const revision = (value as { revision?: unknown } | null)?.revision;
  return typeof revision === "number" ? { etag: `"${revision}"` } : {};
}
