// @ts-check
/**
 * JSON with its numbers as the server wrote them. The server keeps a schedule's input as it was
 * given (`"amount": 120.0` stays `120.0`, docs/cli.md § schedule show) and writes that text into
 * its answers; JSON.parse reads 120, so the page showed `"amount": 120`. The browser hands a
 * reviver each number's source text (JSON.parse source text access, Chromium 114+), so
 * {@link parseJson} notes the numbers whose text JavaScript would write otherwise, by the object
 * holding them, and {@link jsonText} writes them back. Without that support it is JSON.stringify.
 */

/**
 * The invisible characters that reorder text (marks, embeddings, overrides, isolates). JSON shown
 * in the page writes them as `\u202e`: raw, one in a string turned the quotes and commas after it
 * around. The escape is valid JSON for the same value, so a form sends it back unchanged.
 */
const BIDI_CONTROLS = /[\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]/g;

/**
 * JSON text with the {@link BIDI_CONTROLS} escaped (they occur only inside its strings).
 * @param {string} json
 */
export function escapeBidi(json) {
  return json.replace(BIDI_CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** @type {WeakMap<object, Map<string, string>>} the source text of each rewritten number, by holder and key */
const sources = new WeakMap();

/**
 * JSON.parse that remembers numbers written otherwise than JavaScript would (`120.0`, `1e3`).
 * @param {string} text
 * @returns {any}
 */
export function parseJson(text) {
  return JSON.parse(
    text,
    /**
     * @this {any}
     * @param {string} key
     * @param {any} value
     * @param {{source?: string}} [context]
     */
    function (key, value, context) {
      const source = context?.source;
      if (typeof value === "number" && source !== undefined && source !== String(value)) {
        const held = sources.get(this) ?? new Map();
        sources.set(this, held);
        held.set(key, source);
      }
      return value;
    },
  );
}

/**
 * The first key given twice in one object of valid JSON text, or null. JSON.parse keeps the last
 * one silently, and the server refuses such a body (docs/security.md § Limits): the form says which
 * key before it sends anything.
 * @param {string} text
 * @returns {string | null}
 */
export function repeatedKey(text) {
  /** @type {(Set<string> | null)[]} the keys of each open object (null: an array) */
  const open = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
      const seen = open[open.length - 1];
      if (expectKey && seen) {
        const key = JSON.parse(text.slice(i, end + 1));
        if (seen.has(key)) return key;
        seen.add(key);
      }
      expectKey = false;
      i = end;
    } else if (c === "{" || c === "[") {
      open.push(c === "{" ? new Set() : null);
      expectKey = c === "{";
    } else if (c === "}" || c === "]") {
      open.pop();
      expectKey = false;
    } else if (c === ",") expectKey = Boolean(open[open.length - 1]);
  }
  return null;
}

/**
 * JSON.stringify(value, null, 2), with the numbers {@link parseJson} read as their text.
 * @param {unknown} value
 * @param {string} [at] the indent of the line the value starts on
 * @returns {string}
 */
export function jsonText(value, at = "") {
  if (value === null || typeof value !== "object") return escapeBidi(JSON.stringify(value) ?? "null");
  const inner = `${at}  `;
  /** @type {(key: string, v: unknown) => string} */
  const item = (key, v) =>
    typeof v === "number" ? (sources.get(value)?.get(key) ?? JSON.stringify(v)) : jsonText(v, inner);
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return `[\n${value.map((v, i) => inner + item(String(i), v)).join(",\n")}\n${at}]`;
  }
  const record = /** @type {Record<string, unknown>} */ (value);
  const keys = Object.keys(record).filter((k) => record[k] !== undefined && typeof record[k] !== "function");
  if (keys.length === 0) return "{}";
  return `{\n${keys.map((k) => `${inner}${escapeBidi(JSON.stringify(k))}: ${item(k, record[k])}`).join(",\n")}\n${at}}`;
}

/**
 * An input as typed (the create and edit forms', a trigger's): its value, or the refusal to show
 * without sending it, for text that is not JSON or gives a key twice in one object (JSON.parse
 * would keep the last one silently).
 * @param {string} text
 * @returns {{input: unknown, refusal: null} | {input: null, refusal: string}}
 */
export function readInput(text) {
  let input;
  try {
    input = parseJson(text);
  } catch (err) {
    return {
      input: null,
      refusal: `INVALID_ARGUMENT: the input is not valid JSON (${/** @type {Error} */ (err).message})`,
    };
  }
  const twice = repeatedKey(text);
  if (twice !== null) {
    return {
      input: null,
      refusal: `INVALID_ARGUMENT: the input gives the key ${JSON.stringify(twice)} twice in one object; give each key once`,
    };
  }
  return { input, refusal: null };
}
