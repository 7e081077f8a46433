/**
 * Revision fences on schedule writes (docs/design.md § Changes): `If-Match: "<revision>"` (412 on mismatch) and
 * `?expected_revision=N` (409). Parsed here; checked by the scheduler inside the write's transaction.
 */
import { OrbitError } from "../domain/errors.js";
import { RawJson } from "../domain/json-text.js";
import type { Fence } from "../scheduler/fence.js";

/** The If-Match header as one trimmed text (repeated headers joined with commas). */
const ifMatchText = (header: string | string[]): string => (Array.isArray(header) ? header.join(",") : header).trim();

/**
 * The revisions an If-Match names: `"3"` (the ETag), bare `3`, or a list (`"2", "3"`: any of them);
 * `*` (any revision) is no fence. A weak tag (`W/"3"`) never matches, since If-Match compares
 * strongly (RFC 9110 § 13.1.1): one alone is 412; it was taken as `"3"`, and a list was 400.
 */
export function parseIfMatch(header: string | string[] | undefined): string[] | undefined {
  if (header === undefined) return undefined;
  const text = ifMatchText(header);
  if (text === "*") return undefined;
  // As written: entity tags compare as text, so "01" is a tag no revision has (412), not revision 1.
  const revisions: string[] = [];
  let weak = false;
  // Empty list elements (`"2",`) are skipped, as RFC 9110 § 5.6.1.2 asks; an empty header is not.
  const tags = text.split(",").map((t) => t.trim());
  const given = tags.some((t) => t !== "") ? tags.filter((t) => t !== "") : tags;
  for (const tag of given) {
    // Quoted as the ETag, or bare; never half-quoted, never empty (an unset shell variable would
    // otherwise switch the check off without a word).
    const m = /^(W\/)?(?:"(\d{1,15})"|(\d{1,15}))$/.exec(tag);
    if (m === null) {
      throw new OrbitError(
        "INVALID_ARGUMENT",
        // As given, as the other If-Match answers quote it (JSON quoting showed `"\"99\""`).
        `If-Match ${text === "" ? "(empty)" : text} is not a schedule revision such as "3"`,
      );
    }
    if (m[1] !== undefined) weak = true;
    else revisions.push(m[2] ?? m[3] ?? "");
  }
  if (revisions.length === 0 && weak) {
    throw new OrbitError(
      "PRECONDITION_FAILED",
      `If-Match ${text} is a weak entity tag, which never matches (If-Match compares strongly, RFC 9110 § 13.1.1): send the schedule's ETag as it is, without W/`,
    );
  }
  return revisions;
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
