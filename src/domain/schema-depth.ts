/**
 * How deep an input a schema can check in bounded time (docs/security.md § Input schemas). The
 * alternatives of a schema that each go into the same part of the input multiply with the input's
 * depth: `allOf` of two `{"properties": {"a": {"$ref": "#"}}}` checks the value 24 levels down
 * 2^24 times (1.3 s), and each level more doubles it. So the checks along every path into the input
 * are counted: the subschemas applied to one value (its in-place combinations, `closure`), then the
 * subschemas those apply to one child of it (by property name and by array index, objects and
 * arrays apart, what applies to any key or index added to each), and so on down. The deepest input
 * whose every path stays within {@link MAX_PATH_CHECKS} is what the schema takes; a tree schema
 * takes any depth the input limits allow, a doubling one 21 levels (74 ms at 21 on this project's machine).
 */

/** Checks along one path into the input that a start may cost. */
export const MAX_PATH_CHECKS = 10_000_000;
/** Deepest nesting the input limits allow (docs/security.md § Limits). */
const MAX_INPUT_DEPTH = 64;
/** Distinct (subschemas, depth) pairs the count may look at before it gives up (no bound then). */
const WORK_BUDGET = 50_000;

type Bag = Map<object, number>;

/** Keywords whose one subschema applies to any property of an object value. */
export const ANY_PROPERTY = ["additionalProperties", "unevaluatedProperties"] as const;
/** Keywords whose one subschema applies to any item of an array value. */
export const ANY_ITEM = ["items", "contains", "unevaluatedItems"] as const;

/**
 * The deepest nesting of an input (its root object is 1) whose checks along every path stay
 * within {@link MAX_PATH_CHECKS}, or null when any depth the limits allow does (or the count
 * gave up). `closure(s)` is every subschema checked in place when `s` is, with how many times.
 */
export function checkedDepth(root: object, closure: (schema: object) => Bag): number | null {
  const memo = new Map<string, number>();
  const ids = new Map<object, number>();
  const id = (o: object): number => {
    let n = ids.get(o);
    if (n === undefined) {
      n = ids.size;
      ids.set(o, n);
    }
    return n;
  };
  let work = 0;
  const cost = (bag: Bag, depth: number): number => {
    const key = `${[...bag]
      .map(([s, n]) => `${id(s)}:${n}`)
      .sort()
      .join(",")}@${depth}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    if (++work > WORK_BUDGET) throw new GiveUp();
    const here: Bag = new Map();
    for (const [s, n] of bag) for (const [t, m] of closure(s)) here.set(t, (here.get(t) ?? 0) + n * m);
    let total = 0;
    for (const n of here.values()) total += n;
    if (total <= MAX_PATH_CHECKS && depth > 0) {
      let deepest = 0;
      for (const child of childBags(here)) {
        deepest = Math.max(deepest, cost(child, depth - 1));
        if (total + deepest > MAX_PATH_CHECKS) break;
      }
      total += deepest;
    }
    memo.set(key, total);
    return total;
  };
  try {
    const start: Bag = new Map([[root, 1]]);
    if (cost(start, MAX_INPUT_DEPTH - 1) <= MAX_PATH_CHECKS) return null;
    let nesting = 1;
    while (nesting < MAX_INPUT_DEPTH && cost(start, nesting) <= MAX_PATH_CHECKS) nesting++;
    return nesting;
  } catch (error) {
    if (error instanceof GiveUp) return null;
    throw error;
  }
}

class GiveUp extends Error {}

/** The subschemas applied to each kind of child of a value the subschemas of `here` check. */
function childBags(here: Bag): Bag[] {
  const byKey = new Map<string, Bag>();
  const anyKey: Bag = new Map();
  const byIndex = new Map<number, Bag>();
  const anyIndex: Bag = new Map();
  const add = (bag: Bag, schema: unknown, n: number): void => {
    if (typeof schema === "object" && schema !== null && !Array.isArray(schema))
      bag.set(schema, (bag.get(schema) ?? 0) + n);
  };
  const at = <K>(map: Map<K, Bag>, key: K): Bag => {
    let bag = map.get(key);
    if (bag === undefined) {
      bag = new Map();
      map.set(key, bag);
    }
    return bag;
  };
  for (const [s, n] of here) {
    const o = s as Record<string, unknown>;
    const properties = o.properties;
    if (typeof properties === "object" && properties !== null) {
      for (const [k, v] of Object.entries(properties)) add(at(byKey, k), v, n);
    }
    const patterns = o.patternProperties;
    if (typeof patterns === "object" && patterns !== null) for (const v of Object.values(patterns)) add(anyKey, v, n);
    for (const k of ANY_PROPERTY) add(anyKey, o[k], n);
    if (Array.isArray(o.prefixItems)) {
      for (const [i, v] of o.prefixItems.entries()) add(at(byIndex, i), v, n);
    }
    for (const k of ANY_ITEM) add(anyIndex, o[k], n);
  }
  const merged = (bag: Bag, extra: Bag): Bag => {
    const out = new Map(bag);
    for (const [s, n] of extra) out.set(s, (out.get(s) ?? 0) + n);
    return out;
  };
  const out: Bag[] = [];
  for (const bag of byKey.values()) out.push(merged(bag, anyKey));
  if (anyKey.size > 0) out.push(anyKey);
  for (const bag of byIndex.values()) out.push(merged(bag, anyIndex));
  if (anyIndex.size > 0) out.push(anyIndex);
  return out;
}

/** The nesting of a JSON value: 0 for a scalar, 1 for an object or array of scalars, and so on. */
export function jsonNesting(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop() as [unknown, number];
    if (typeof v !== "object" || v === null) continue;
    deepest = Math.max(deepest, d + 1);
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return deepest;
}
