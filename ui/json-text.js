// @ts-check
/**
 * JSON with its numbers as the server wrote them. The server keeps a schedule's input as it was
 * given (`"amount": 120.0` stays `120.0`, docs/cli.md § schedule show) and writes that text into
 * its answers; JSON.parse reads 120, so the page showed `"amount": 120`. The browser hands a
 * reviver each number's source text (JSON.parse source text access, Chromium 114+), so
 * {@link parseJson} notes the numbers whose text JavaScript would write otherwise, by the object
 * holding them, and {@link jsonText} writes them back. Without that support it is JSON.stringify.
 */

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
 * JSON.stringify(value, null, 2), with the numbers {@link parseJson} read as their text.
 * @param {unknown} value
 * @param {string} [at] the indent of the line the value starts on
 * @returns {string}
 */
export function jsonText(value, at = "") {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
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
  return `{\n${keys.map((k) => `${inner}${JSON.stringify(k)}: ${item(k, record[k])}`).join(",\n")}\n${at}}`;
}
