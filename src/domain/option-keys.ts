/**
 * Options taken as plain objects (the worker SDK's definitions and options, startServer's
 * ServerOptions) refuse a key they do not know: from plain JavaScript, or an object built
 * elsewhere, TypeScript's check of object literals does not apply, and a misspelt key was taken
 * for the default (`onCancell` never ran; `datadir` kept the data in ./.orbit).
 */

import { suggestKey } from "./suggest.js";

/**
 * The keys of an options type, listed once as an object the compiler holds to the type: a key the
 * type gains or loses and the list does not is a type error, so the list cannot drift from it.
 */
export function keysOf<T>(all: { readonly [K in keyof Required<T>]: true }): readonly string[] {
  return Object.keys(all);
}

/**
 * The own keys of `given` (not enumerable ones and symbols too) that are none of `known`, and the
 * sentence refusing them, with the nearest known key (or the key an alias names) when one is near
 * enough to be a typo: `<what> has no setting "onCancell" (did you mean "onCancel"?): it takes
 * name, version, …`. Null when every key is known.
 */
export function unknownKeys(
  given: object,
  known: readonly string[],
  what: string,
  aliases: Readonly<Record<string, string>> = {},
): { keys: readonly string[]; message: string } | null {
  const unknown = Reflect.ownKeys(given).filter((k) => typeof k !== "string" || !known.includes(k));
  if (unknown.length === 0) return null;
  const said = unknown.map((k) => {
    const near = typeof k === "string" ? suggestKey(k, known, aliases) : null;
    return `${JSON.stringify(String(k))}${near === null ? "" : ` (did you mean "${near}"?)`}`;
  });
  const takes = known.length > 1 ? `${known.slice(0, -1).join(", ")} and ${known.at(-1)}` : known.join("");
  return { keys: unknown.map(String), message: `${what} has no setting ${said.join(", ")}: it takes ${takes}` };
}
