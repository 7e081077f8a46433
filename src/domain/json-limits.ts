/**
 * Input safety (docs/design.md § Input safety): a JSON value Orbit stores must be plain JSON, at
 * most 1 MB serialized and at most 64 levels deep. Checked before anything else touches the value (deep nesting would
 * overflow JSON.stringify's stack, and Ajv's).
 */
import { OrbitError } from "./errors.js";
import type { JsonValue } from "./json.js";

/** Largest serialized size, in UTF-8 bytes, of an input (or result) Orbit accepts. */
export const MAX_JSON_BYTES = 1024 * 1024;
/** Deepest nesting accepted: `{}` is depth 1, `{"a": {}}` depth 2. */
export const MAX_JSON_DEPTH = 64;

/** The JSON Pointer of a path of keys and indices, e.g. `/items/0/sku`. */
function pathOf(path: readonly (string | number)[]): string {
  let text = "";
  for (const key of path) text += `/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`;
  return text;
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

const numberFormat = new Intl.NumberFormat("en-US");

/** Most UTF-8 bytes JSON.stringify writes per UTF-16 unit of a string: an escape such as `\u001f`. */
const MAX_BYTES_PER_UNIT = 6;
/** More than the longest JSON text of a finite number (25: `-0.0000030370527149891967`), and of `false`. */
const MAX_NUMBER_BYTES = 32;
const MAX_LITERAL_BYTES = 5;

/**
 * Refuses with INVALID_ARGUMENT a value that is not plain JSON, nests deeper than 64 levels or
 * serializes to more than 1 MB. `what` names the value in messages (`input`, `result`).
 */
export function checkJsonLimits(value: unknown, what: string): void {
  // An upper bound of the serialized size, summed on the walk: only a value whose bound passes
  // the limit is serialized to measure it (every start checks its trigger; most values are small).
  const bound = sizeBound(value, 0, [], what);
  if (bound <= MAX_JSON_BYTES) return;
  const bytes = Buffer.byteLength(JSON.stringify(value as JsonValue), "utf8");
  if (bytes > MAX_JSON_BYTES) {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `${what} is ${numberFormat.format(bytes)} bytes serialized; the limit is ${numberFormat.format(MAX_JSON_BYTES)} bytes (1 MB)`,
    );
  }
}

/**
 * The walk of {@link checkJsonLimits}: refuses what is not plain JSON or nests too deep, and answers
 * the bound of `v`'s serialized size. Recursive, but never deeper than {@link MAX_JSON_DEPTH} + 1
 * calls: a container past the limit is refused before its elements are visited, so a hostile value
 * 100,000 levels deep cannot blow our stack. The path is one array pushed and popped on the way, and
 * made into text only for a refusal (a node object per element made a 1 MB value of 300,000 small
 * objects cost more than parsing it).
 */
function sizeBound(v: unknown, depth: number, path: (string | number)[], what: string): number {
  if (typeof v === "string") return MAX_BYTES_PER_UNIT * v.length + 2;
  if (v === null || typeof v === "boolean") return MAX_LITERAL_BYTES;
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new OrbitError("INVALID_ARGUMENT", `${what}${pathOf(path)} is not a finite number`);
    return MAX_NUMBER_BYTES;
  }
  if (typeof v !== "object" || !(Array.isArray(v) || isPlainObject(v))) {
    throw new OrbitError("INVALID_ARGUMENT", `${what}${pathOf(path)} is not JSON (${typeof v})`);
  }
  const inner = depth + 1;
  if (inner > MAX_JSON_DEPTH) {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `${what} nests deeper than ${MAX_JSON_DEPTH} levels (at ${pathOf(path) || "the top level"}); flatten it`,
    );
  }
  // Brackets and a comma per element; a key is quoted and followed by a colon.
  let bound = 2;
  if (Array.isArray(v)) {
    bound += v.length;
    for (let i = 0; i < v.length; i++) {
      path.push(i);
      bound += sizeBound(v[i], inner, path, what);
      path.pop();
    }
  } else {
    for (const key of Object.keys(v)) {
      bound += MAX_BYTES_PER_UNIT * key.length + 4;
      path.push(key);
      bound += sizeBound((v as Record<string, unknown>)[key], inner, path, what);
      path.pop();
    }
  }
  return bound;
}
