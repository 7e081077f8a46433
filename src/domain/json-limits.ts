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

interface Node {
  value: unknown;
  depth: number;
  key: string;
  parent: Node | null;
}

/** The JSON Pointer of a node, e.g. `/items/0/sku`. */
function pathOf(node: Node): string {
  let path = "";
  for (let n: Node | null = node; n?.parent; n = n.parent) {
    path = `/${n.key.replaceAll("~", "~0").replaceAll("/", "~1")}${path}`;
  }
  return path;
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
  // Iterative walk: a hostile value 100,000 levels deep must not blow our own stack either.
  // Paths are built only for a refusal, from parent links, to keep the common case cheap.
  const stack: Node[] = [{ value, depth: 0, key: "", parent: null }];
  // An upper bound of the serialized size, summed on the walk: only a value whose bound passes
  // the limit is serialized to measure it (every start checks its trigger; most values are small).
  let bound = 0;
  while (stack.length) {
    const node = stack.pop()!;
    const v = node.value;
    if (typeof v === "string") {
      bound += MAX_BYTES_PER_UNIT * v.length + 2;
      continue;
    }
    if (v === null || typeof v === "boolean") {
      bound += MAX_LITERAL_BYTES;
      continue;
    }
    if (typeof v === "number") {
      if (!Number.isFinite(v))
        throw new OrbitError("INVALID_ARGUMENT", `${what}${pathOf(node)} is not a finite number`);
      bound += MAX_NUMBER_BYTES;
      continue;
    }
    if (typeof v !== "object" || !(Array.isArray(v) || isPlainObject(v))) {
      throw new OrbitError("INVALID_ARGUMENT", `${what}${pathOf(node)} is not JSON (${typeof v})`);
    }
    const depth = node.depth + 1;
    if (depth > MAX_JSON_DEPTH) {
      throw new OrbitError(
        "INVALID_ARGUMENT",
        `${what} nests deeper than ${MAX_JSON_DEPTH} levels (at ${pathOf(node) || "the top level"}); flatten it`,
      );
    }
    // Brackets and a comma per element; a key is quoted and followed by a colon.
    if (Array.isArray(v)) {
      bound += 2 + v.length;
      for (let i = 0; i < v.length; i++) stack.push({ value: v[i], depth, key: String(i), parent: node });
    } else {
      bound += 2;
      for (const key of Object.keys(v)) {
        bound += MAX_BYTES_PER_UNIT * key.length + 4;
        stack.push({ value: (v as Record<string, unknown>)[key], depth, key, parent: node });
      }
    }
  }
  if (bound <= MAX_JSON_BYTES) return;
  const bytes = Buffer.byteLength(JSON.stringify(value as JsonValue), "utf8");
  if (bytes > MAX_JSON_BYTES) {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `${what} is ${numberFormat.format(bytes)} bytes serialized; the limit is ${numberFormat.format(MAX_JSON_BYTES)} bytes (1 MB)`,
    );
  }
}
