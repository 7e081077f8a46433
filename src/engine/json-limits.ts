/**
 * Input safety (docs/design.md § Input safety): a JSON value Orbit stores must be plain JSON, at
 * most 1 MB serialized and at most 64 levels deep. Checked before anything else touches the value (deep nesting would
 * overflow JSON.stringify's stack, and Ajv's).
 */
import { OrbitError } from "../domain/errors.js";
import type { JsonValue } from "../domain/json.js";

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

/**
 * Refuses with INVALID_ARGUMENT a value that is not plain JSON, nests deeper than 64 levels or
 * serializes to more than 1 MB. `what` names the value in messages (`input`, `result`).
 * Returns the serialized size in bytes.
 */
export function checkJsonLimits(value: unknown, what: string): number {
  // Iterative walk: a hostile value 100,000 levels deep must not blow our own stack either.
  // Paths are built only for a refusal, from parent links, to keep the common case cheap.
  const stack: Node[] = [{ value, depth: 0, key: "", parent: null }];
  while (stack.length) {
    const node = stack.pop()!;
    const v = node.value;
    if (v === null || typeof v === "string" || typeof v === "boolean") continue;
    if (typeof v === "number") {
      if (!Number.isFinite(v))
        throw new OrbitError("INVALID_ARGUMENT", `${what}${pathOf(node)} is not a finite number`);
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
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push({ value: v[i], depth, key: String(i), parent: node });
    } else {
      for (const key of Object.keys(v))
        stack.push({ value: (v as Record<string, unknown>)[key], depth, key, parent: node });
    }
  }
  const bytes = Buffer.byteLength(JSON.stringify(value as JsonValue), "utf8");
  if (bytes > MAX_JSON_BYTES) {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `${what} is ${numberFormat.format(bytes)} bytes serialized; the limit is ${numberFormat.format(MAX_JSON_BYTES)} bytes (1 MB)`,
    );
  }
  return bytes;
}
