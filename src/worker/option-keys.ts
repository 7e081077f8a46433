/**
 * The SDK's options taken as plain objects (defineWorkflow's definition, its `retry`, new Worker's
 * options) refuse a key they do not know, through the helper startServer's options use too
 * (src/domain/option-keys.ts).
 */

import { unknownKeys } from "../domain/option-keys.js";

export { keysOf } from "../domain/option-keys.js";

/**
 * Throws a TypeError naming each own key of `given` (not enumerable ones and symbols too) that is
 * none of `known`, with the nearest known key when one is near enough to be a typo:
 * `<what> has no setting "onCancell" (did you mean "onCancel"?): it takes name, version, …`.
 */
export function refuseUnknownKeys(given: object, known: readonly string[], what: string): void {
  const refused = unknownKeys(given, known, what);
  if (refused !== null) throw new TypeError(refused.message);
}
