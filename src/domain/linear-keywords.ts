/**
 * Ajv keywords of input schemas in time linear in the value (docs/security.md § Input schemas):
 * `uniqueItems` and `enum` by lookup of each value written once as JSON with sorted keys.
 */
import type { ErrorObject } from "ajv/dist/2020.js";
import { canonicalJson } from "./canonical-json.js";

/**
 * How many JSON values `value` holds, itself included; with `limit`, it stops once past it (the
 * answer is then `limit + 1`).
 */
export function jsonValueCount(value: unknown, limit = Number.POSITIVE_INFINITY): number {
  let seen = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && seen <= limit) {
    seen++;
    const v = stack.pop();
    if (typeof v === "object" && v !== null) for (const child of Object.values(v)) stack.push(child);
  }
  return seen;
}

/**
 * `uniqueItems` in time linear in the array: Ajv's compares every pair of items that are objects or
 * arrays, so one start with 40,000 small objects held the server for 19 s (and a schedule did it at
 * every fire). Each item is written as JSON with its objects' keys sorted, which is equal exactly
 * when the items are equal as JSON Schema compares them (1 and 1.0 are one number), and looked up
 * among those before it. The error is Ajv's own.
 */
export function uniqueItems(this: unknown, unique: boolean, items: unknown[]): boolean {
  if (!unique) return true;
  const seen = new Map<string, number>();
  for (let i = 0; i < items.length; i++) {
    const key = canonicalJson(items[i]);
    const j = seen.get(key);
    if (j !== undefined) {
      uniqueItems.errors = [
        {
          keyword: "uniqueItems",
          message: `must NOT have duplicate items (items ## ${j} and ${i} are identical)`,
          params: { i, j },
        },
      ];
      return false;
    }
    seen.set(key, i);
  }
  return true;
}
uniqueItems.errors = undefined as Partial<ErrorObject>[] | undefined;

/**
 * `enum` by lookup: Ajv compares a value with each allowed one in turn, so 8,000 items against a
 * 10,000-value enum took 2.9 s of the server's thread. The values are written once as JSON with
 * sorted keys (equal exactly when JSON Schema calls them equal) and each value of the input is
 * looked up. The error is Ajv's own.
 */
export function compileEnum(values: unknown[]): (data: unknown) => boolean {
  const allowed = new Set(values.map(canonicalJson));
  // An object or array larger than every allowed value equals none of them: not written out (an
  // enum on each level of a 60-level array wrote its 200,000 numbers out 60 times, 5 s a start).
  let largest = 0;
  for (const v of values) if (typeof v === "object" && v !== null) largest = Math.max(largest, jsonValueCount(v));
  const check = (data: unknown): boolean => {
    const fits = typeof data !== "object" || data === null || (largest > 0 && jsonValueCount(data, largest) <= largest);
    if (fits && allowed.has(canonicalJson(data))) return true;
    check.errors = [
      { keyword: "enum", message: "must be equal to one of the allowed values", params: { allowedValues: values } },
    ];
    return false;
  };
  check.errors = undefined as Partial<ErrorObject>[] | undefined;
  return check;
}
