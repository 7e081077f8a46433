/**
 * What the server keeps of an error a worker reports (fail, cancelled, a compensation's failure):
 * docs/security.md § Limits. An error is diagnostic and its report ends an attempt, so it is not
 * refused, which would leave the execution RUNNING until its lease ran out: an error that is not
 * storable as given is kept in a bounded form instead. Its `message` (and `type`, `stack`) as
 * text, cut to a bound that says so, `truncated: true`, and NUL or lone surrogates replaced by
 * U+FFFD; the rest of it dropped. A 1.9 MB message was stored whole and copied into every read of
 * its schedule, and a number like 1e400 became null without a word.
 */
import { hasUnstorableChar, storableChars } from "./body-guard.js";
import type { JsonObject, JsonValue } from "./json.js";
import { checkJsonLimits } from "./json-limits.js";

/** Largest serialized error kept as reported, in UTF-16 units (a stack trace fits many times over). */
export const MAX_ERROR_CHARS = 64 * 1024;
/** What the bounded form keeps of `message` and `stack`, and of `type`. */
const MESSAGE_CHARS = 8 * 1024;
const STACK_CHARS = 16 * 1024;
const TYPE_CHARS = 200;

/** `text` cut to `max` units (never inside a surrogate pair), saying how much was left out. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}… (${text.length - end} more characters)`;
}

/** `error` as the server stores it: as given when it is plain, storable JSON within the bound. */
export function storedError(error: JsonObject): JsonObject {
  if (isStorable(error)) return error;
  const out: JsonObject = { message: cutText(storableChars(String(error.message)), MESSAGE_CHARS) };
  if (typeof error.type === "string") out.type = cutText(storableChars(error.type), TYPE_CHARS);
  if (typeof error.stack === "string") out.stack = cutText(storableChars(error.stack), STACK_CHARS);
  out.truncated = true;
  return out;
}

function isStorable(error: JsonObject): boolean {
  try {
    checkJsonLimits(error, "error");
  } catch {
    return false;
  }
  return JSON.stringify(error).length <= MAX_ERROR_CHARS && !holdsUnstorable(error);
}

/** True when a string or key of `value` (plain JSON, at most 64 levels deep) holds NUL or a lone surrogate. */
function holdsUnstorable(value: JsonValue): boolean {
  if (typeof value === "string") return hasUnstorableChar(value);
  if (value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) return value.some(holdsUnstorable);
  for (const [key, v] of Object.entries(value)) if (hasUnstorableChar(key) || holdsUnstorable(v)) return true;
  return false;
}
