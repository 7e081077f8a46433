/**
 * Options the SDK takes as plain objects (defineWorkflow's definition, its `retry`, new Worker's
 * options) refuse a key they do not know: from plain JavaScript, or an object built elsewhere,
 * TypeScript's check of object literals does not apply, and a misspelt key was taken for the
 * default (`onCancell` never ran, `closeTimeout: 5` kept 30 s, `maxAttemps: 1` ran three attempts).
 */

import { suggestKey } from "../domain/suggest.js";

/**
 * Throws a TypeError naming each own key of `given` (not enumerable ones and symbols too) that is
 * none of `known`, with the nearest known key when one is near enough to be a typo:
 * `<what> has no setting "onCancell" (did you mean "onCancel"?): it takes name, version, …`.
 */
export function refuseUnknownKeys(given: object, known: readonly string[], what: string): void {
  const unknown = Reflect.ownKeys(given).filter((k) => typeof k !== "string" || !known.includes(k));
  if (unknown.length === 0) return;
  const said = unknown.map((k) => {
    const near = typeof k === "string" ? suggestKey(k, known) : null;
    return `${JSON.stringify(String(k))}${near === null ? "" : ` (did you mean "${near}"?)`}`;
  });
  const takes = known.length > 1 ? `${known.slice(0, -1).join(", ")} and ${known.at(-1)}` : known.join("");
  throw new TypeError(`${what} has no setting ${said.join(", ")}: it takes ${takes}`);
}

/**
 * The keys of an options type, listed once as an object the compiler holds to the type: a key the
 * type gains or loses and the list does not is a type error, so the list cannot drift from it.
 */
export function keysOf<T>(all: { readonly [K in keyof Required<T>]: true }): readonly string[] {
  return Object.keys(all);
}
