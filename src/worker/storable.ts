/**
 * What the worker reports must be storable JSON: checked before it is sent (docs/outcomes.md §
 * Results that cannot be stored).
 */
import { scanJsonText } from "../domain/body-guard.js";
import { isInstance, thrownText } from "../domain/error-text.js";
import { OrbitError } from "../domain/errors.js";
import type { JsonValue } from "../domain/json.js";
import { checkJsonLimits, MAX_JSON_BYTES, MAX_JSON_DEPTH } from "../domain/json-limits.js";

/**
 * The JSON the server will store for what a run or a step returned (or a run passed to
 * continueAsNew), and its size in bytes, or why it cannot be stored: JSON.stringify failed (a
 * BigInt, a cycle, a throwing toJSON) or the value breaks the limits every stored value keeps
 * (docs/design.md § Input safety: 1 MB, 64 levels, no NUL, no lone surrogate). Checked here, so
 * that the server never refuses a batch of completes for one of them. As JSON.stringify does,
 * `undefined` is null, and NaN, Infinity and a Date become null and text.
 */
export function storable(value: unknown, what: string): { json: JsonValue; bytes: number } | { refused: string } {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    const reason = isInstance(err, Error) ? (err.message.split("\n")[0] ?? err.message) : thrownText(err);
    return { refused: `the ${what} is not JSON: ${reason}` };
  }
  if (text === undefined) return { json: null, bytes: 4 };
  const bytes = Buffer.byteLength(text);
  let json: JsonValue;
  try {
    // A NUL or a lone surrogate in a string, which the server refuses with the whole request that
    // carries it. JSON.stringify writes both as \u escapes, so a text without "\u" has neither.
    if (text.includes("\\u")) scanJsonText(text, `a string of the ${what}`);
    json = JSON.parse(text) as JsonValue;
    // Over 1 MB, or deeper than 64 levels (which takes at least two characters a level): the
    // walk that says where. Most results are neither, and a worker reports thousands a second.
    if (bytes > MAX_JSON_BYTES || text.length > 2 * MAX_JSON_DEPTH) checkJsonLimits(json, what);
    // The server's JSON parser refuses these keys (prototype pollution), and the whole request
    // with them: said here, before a step's result is taken for journaled (docs/security.md § Limits).
    if ((text.includes('"__proto__"') || text.includes('"constructor"')) && pollutingKey(json)) {
      return {
        refused: `the ${what} has a "__proto__" key (or "constructor" holding "prototype"), which Orbit refuses: rename it`,
      };
    }
  } catch (err) {
    if (err instanceof OrbitError) return { refused: `the ${what} cannot be stored: ${err.message}` };
    throw err;
  }
  return { json, bytes };
}

/** A `__proto__` key, or a `constructor` key whose object holds `prototype`, at any depth. */
function pollutingKey(value: JsonValue): boolean {
  if (value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) return value.some(pollutingKey);
  for (const [key, inner] of Object.entries(value)) {
    if (key === "__proto__") return true;
    if (key === "constructor" && inner !== null && typeof inner === "object" && Object.hasOwn(inner, "prototype"))
      return true;
    if (pollutingKey(inner)) return true;
  }
  return false;
}
