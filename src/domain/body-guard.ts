/**
 * Hostile-input checks that run before a request body is parsed or a parameter is used
 * (docs/security.md § Limits). One linear scan of the body's JSON text, so a 2 MB body costs the
 * same whatever its shape:
 *
 * - nesting deeper than {@link MAX_BODY_DEPTH} is refused before JSON.parse builds anything (a
 *   million-deep body used to block the event loop for seconds and keep ~50 MB per request);
 * - a NUL character (`\u0000`) or a lone UTF-16 surrogate (`\ud800` without its pair) in any
 *   string, key or value, is refused: PostgreSQL cannot store either (TEXT and JSONB refuse NUL,
 *   JSONB refuses lone surrogates) and SQLite would store an id that can never be fetched again,
 *   so both dialects refuse the same data with the same 400.
 *
 * - a key given twice in one object is refused: JSON.parse keeps the last, so `"paused": true,
 *   "paused": false` created a schedule that fires, and a proxy or audit log that reads the first
 *   key saw another request than the one stored (docs/security.md § Limits).
 *
 * Raw control characters and malformed escapes are left to JSON.parse, which refuses them.
 */
import { OrbitError } from "./errors.js";
import { MAX_JSON_DEPTH } from "./json-limits.js";

/**
 * Deepest nesting of a whole request body: an input or result may nest 64 levels (json-limits.ts)
 * and sits a few levels down in its body (`{"schedules": [{"input": …}]}`); the exact 64 is checked
 * on the value itself, with its path in the message.
 */
export const MAX_BODY_DEPTH = MAX_JSON_DEPTH + 8;

const BACKSLASH = 0x5c;
const QUOTE = 0x22;

function hex4(text: string, at: number): number {
  const n = Number.parseInt(text.slice(at, at + 4), 16);
  return /^[0-9a-fA-F]{4}$/.test(text.slice(at, at + 4)) ? n : -1;
}

/**
 * Throws INVALID_ARGUMENT for a body too deep, or holding NUL or a lone surrogate; `where` names
 * the strings in the message (the worker SDK checks a result's text before it reports it), else
 * the message names the string's path in the body (`schedules[3].description`), as the body's
 * validation errors do: in a batch of 1,000 schedules, "a string of the request body" did not say
 * which.
 */
export function scanJsonText(
  text: string,
  where?: string,
  opts: { chars?: boolean; name?: string } = {},
): string | null {
  // `chars: false` checks the depth only, and answers the first NUL or lone surrogate's refusal
  // instead of throwing it (a worker's result, which fails its execution rather than the request).
  const strict = opts.chars !== false;
  let refusal: string | null = null;
  const refuse = (err: OrbitError): void => {
    if (strict) throw err;
    refusal ??= err.message;
  };
  let depth = 0;
  let inString = false;
  // Per open container, the keys its object has given (null for an array; see KeysSeen), and
  // whether the next string of the innermost object is a key; `keyAt` is where the key being read starts.
  const keys: (KeysSeen | null)[] = [];
  let expectKey = false;
  let keyAt = -1;
  let keyEscaped = false;
  // Per open container, where the string being read sits, for a refusal's path: an array's element
  // index, an object's last key (its quotes' positions in `text`; -1 before the first).
  const index: number[] = [];
  const keyFrom: number[] = [];
  const keyTo: number[] = [];
  const at = (): string | undefined => where ?? placeOf(text, keys, index, keyFrom, keyTo, keyAt >= 0, opts.name);
  // A high surrogate escape just read, waiting for its low half (as the very next escape).
  let pendingHigh = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) {
        if (keyAt >= 0) keyEscaped = true;
        const next = text.charCodeAt(i + 1);
        if (next === 0x75 /* u */) {
          const unit = hex4(text, i + 2);
          if (unit === 0) refuse(nul(at()));
          if (unit >= 0xdc00 && unit <= 0xdfff) {
            if (!pendingHigh) refuse(loneSurrogate(at()));
            pendingHigh = false;
          } else {
            if (pendingHigh) refuse(loneSurrogate(at()));
            pendingHigh = unit >= 0xd800 && unit <= 0xdbff;
          }
          i += 5;
          continue;
        }
        if (pendingHigh) refuse(loneSurrogate(at()));
        i += 1;
        continue;
      }
      if (pendingHigh) refuse(loneSurrogate(at()));
      if (c === QUOTE) {
        inString = false;
        if (keyAt >= 0) {
          const top = keys.length - 1;
          const seen = keys[top];
          if (seen !== null && seen !== undefined) keys[top] = noteKey(seen, text, keyAt, i, keyEscaped, opts.name);
          keyFrom[top] = keyAt;
          keyTo[top] = i;
          keyAt = -1;
        }
      } else if (c === 0) refuse(nul(at()));
      else if (c >= 0xd800 && c <= 0xdfff) {
        // A raw surrogate in the decoded text: well-formed only as a high-low pair.
        const d = text.charCodeAt(i + 1);
        if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) i += 1;
        else refuse(loneSurrogate(at()));
      }
      continue;
    }
    if (c === QUOTE) {
      inString = true;
      if (expectKey) {
        keyAt = i;
        keyEscaped = false;
        expectKey = false;
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > MAX_BODY_DEPTH) {
        throw new OrbitError(
          "INVALID_ARGUMENT",
          `${opts.name ?? "the request body"} nests deeper than ${MAX_BODY_DEPTH} levels; an input or result may nest at most ${MAX_JSON_DEPTH}`,
        );
      }
      keys.push(c === 0x7b ? NO_KEYS : null);
      index.push(0);
      keyFrom.push(-1);
      keyTo.push(-1);
      expectKey = c === 0x7b;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
      keys.pop();
      index.pop();
      keyFrom.pop();
      keyTo.pop();
      expectKey = false;
    } else if (c === 0x2c /* , */) {
      const top = keys.length - 1;
      expectKey = top >= 0 && keys[top] !== null;
      if (top >= 0 && keys[top] === null) index[top] = (index[top] ?? 0) + 1;
    }
  }
  return refusal;
}

/**
 * Where the string being read sits, for a refusal: `the string at schedules[3].description in the
 * request body` (the path style of the body's validation errors, src/api/validation.ts), `a key of
 * the object at schedules[3].input …` when the string is a key, `a string of the request body` for
 * a body that is one string (or a key of its top object). Made only for a refusal.
 */
function placeOf(
  text: string,
  keys: readonly (KeysSeen | null)[],
  index: readonly number[],
  keyFrom: readonly number[],
  keyTo: readonly number[],
  inKey: boolean,
  name = "the request body",
): string {
  // A key's own object is the innermost one; a value sits at that object's last key.
  const levels = inKey ? keys.length - 1 : keys.length;
  let path = "";
  for (let l = 0; l < levels; l++) {
    if (keys[l] === null) path += `[${index[l] ?? 0}]`;
    else {
      const from = keyFrom[l] ?? -1;
      const raw = text.slice(from, (keyTo[l] ?? from) + 1);
      let key = raw.slice(1, -1);
      try {
        key = JSON.parse(raw) as string;
      } catch {
        // a malformed escape: shown as written
      }
      if (key.length > 100) key = `${key.slice(0, 100)}…`;
      path += path === "" ? key : `.${key}`;
    }
  }
  if (path === "") return inKey ? `a key of ${name}` : `a string of ${name}`;
  return inKey ? `a key of the object at ${path} in ${name}` : `the string at ${path} in ${name}`;
}

/**
 * The keys an open object has given: none yet, its one key, or a set of them. The set is made only
 * for a second key: a 1 MB body of 300,000 small objects made as many sets, and their collection
 * held the server longer than the scan itself.
 */
type KeysSeen = typeof NO_KEYS | string | Set<string>;
const NO_KEYS = 0;

/** `seen` with the key `text[from..to]` (its quotes) added; throws when it is there already. */
function noteKey(
  seen: KeysSeen,
  text: string,
  from: number,
  to: number,
  escaped: boolean,
  name = "the request body",
): KeysSeen {
  let key = text.slice(from + 1, to);
  if (escaped) {
    try {
      // `"a"` and `"\u0061"` are one key.
      key = JSON.parse(text.slice(from, to + 1)) as string;
    } catch {
      return seen; // a malformed escape: JSON.parse refuses the body with its own message
    }
  }
  if (seen === NO_KEYS) return key;
  if (typeof seen === "string") {
    if (seen !== key) return new Set([seen, key]);
  } else if (!seen.has(key)) {
    seen.add(key);
    return seen;
  }
  const shown = key.length > 100 ? `${key.slice(0, 100)}…` : key;
  throw new OrbitError(
    "INVALID_ARGUMENT",
    `${name} gives the key ${JSON.stringify(shown)} twice in one object; give each key once`,
  );
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, "g");

/** True when `text` holds a character Orbit does not store: NUL or a lone surrogate. */
export function hasUnstorableChar(text: string): boolean {
  return text.includes("\u0000") || LONE_SURROGATE.test(text);
}

/** `text` with each character Orbit does not store (NUL, a lone surrogate) replaced by U+FFFD. */
export function storableChars(text: string): string {
  return text.replaceAll("\u0000", "\ufffd").replace(LONE_SURROGATES, "\ufffd");
}

/** Throws INVALID_ARGUMENT when a path or query value holds NUL or a lone surrogate. */
export function checkText(value: unknown, what: string): void {
  if (typeof value === "string") {
    if (!hasUnstorableChar(value)) return;
    throw value.includes("\u0000") ? nul(what) : loneSurrogate(what);
  } else if (Array.isArray(value)) for (const v of value) checkText(v, what);
}

function nul(where = "a string of the request body"): OrbitError {
  return new OrbitError("INVALID_ARGUMENT", `${where} contains a NUL character (\\u0000), which Orbit does not store`);
}

function loneSurrogate(where = "a string of the request body"): OrbitError {
  return new OrbitError(
    "INVALID_ARGUMENT",
    `${where} contains a lone UTF-16 surrogate (e.g. \\ud800 without its pair), which is not valid Unicode`,
  );
}
