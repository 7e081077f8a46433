/**
 * Schedule labels and label selectors (docs/cli.md § orbit schedule apply): `labels` is a small map
 * of names to values a schedule carries; `orbit schedule apply --owner/--selector` stamps its labels
 * on the schedules it writes and prunes only schedules that carry them all. Pure.
 */
import { invalidArgument } from "../domain/errors.js";
import { isJsonObject } from "../domain/json.js";

export { OWNER_LABEL } from "../domain/schedule.js";

/** A label name: a letter or digit, then letters, digits, `_ . - /`; up to 63 characters. */
const LABEL_KEY = /^[A-Za-z0-9][A-Za-z0-9_./-]{0,62}$/;
/** A label value: up to 100 letters, digits, `_ . - : @ /` (never `,` or `=`, which selectors use). */
const LABEL_VALUE = /^[A-Za-z0-9_.:@/-]{0,100}$/;
const MAX_LABELS = 20;

export type Labels = Record<string, string>;

/** `labels`: an object of at most 20 string values with valid names; undefined when absent. */
export function validateLabels(value: unknown, what = "labels"): Labels | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isJsonObject(value)) throw invalidArgument(`${what} must be an object of names to string values`);
  const keys = Object.keys(value);
  if (keys.length > MAX_LABELS) throw invalidArgument(`${what} holds ${keys.length} labels; the most is ${MAX_LABELS}`);
  const out: Labels = {};
  for (const key of keys.sort()) {
    if (!LABEL_KEY.test(key)) {
      throw invalidArgument(
        `${what} name "${key}" is invalid: start with a letter or digit, then up to 62 letters, digits, "_", ".", "-" or "/"`,
      );
    }
    const v = value[key];
    if (typeof v !== "string" || !LABEL_VALUE.test(v)) {
      throw invalidArgument(
        `${what}.${key} must be a string of up to 100 letters, digits, "_", ".", "-", ":", "@" or "/"`,
      );
    }
    out[key] = v;
  }
  return out;
}

/** Whether `labels` carries every pair of `selector` (an empty selector matches nothing). */
export function matchesSelector(labels: Labels | undefined, selector: Labels): boolean {
  const keys = Object.keys(selector);
  return keys.length > 0 && keys.every((k) => labels?.[k] === selector[k]);
}

/** `orbit/owner=payments,team=ops`: a selector as text, keys sorted. */
export function selectorText(selector: Labels): string {
  return Object.keys(selector)
    .sort()
    .map((k) => `${k}=${selector[k]}`)
    .join(",");
}
