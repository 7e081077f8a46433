/**
 * The regular expressions of workflow input schemas (`pattern`, `patternProperties`), run so that
 * no input can hold the process (docs/security.md § Input schemas). A backtracking engine takes
 * exponential time on `^(a+)+$` against `aaaa…!`: one start with a 30-character input held a
 * server for 30 s, every request and the firing loop with it, and any identity allowed to register
 * a workflow could send one.
 *
 * - A pattern V8's linear-time engine can run (the `l` flag) runs there: nested and overlapping
 *   repetition stays linear.
 * - One it cannot (a repetition counted past its small limit, `\p{…}` classes, backreferences,
 *   lookaround) runs on the usual engine only when no repeated part contains another repetition
 *   (star height 1), the shape of `^[a-z0-9]{1,64}$`.
 * - Any other is refused when the schema is registered, naming the pattern.
 */
import { setFlagsFromString } from "node:v8";
import { OrbitError } from "./errors.js";

// The linear engine is behind a V8 flag in Node 20-26; it only makes the `l` flag parse.
setFlagsFromString("--enable-experimental-regexp-engine");

/** Ajv's `code.regExp`: the engine for a schema's patterns, or a refusal for a pattern no engine runs safely. */
export function safePatternEngine(pattern: string, flags: string): { test(s: string): boolean } {
  const unicode = /\\[pPu]\{/.test(pattern);
  if (!unicode) {
    try {
      return new RegExp(pattern, `${flags.replace("u", "")}l`);
    } catch {
      // not linear: below
    }
  }
  if (!nestedRepetition(pattern)) return new RegExp(pattern, flags);
  throw new OrbitError(
    "INVALID_ARGUMENT",
    `pattern ${JSON.stringify(pattern.length > 200 ? `${pattern.slice(0, 200)}…` : pattern)} repeats a part that itself repeats, in a form the linear-time engine cannot run (with a counted repetition such as {1,100}, \\p{…}, a backreference or lookaround): an input could hold the server for minutes; bound lengths with minLength/maxLength instead of counted repetitions`,
  );
}
safePatternEngine.code = "orbit-safe-pattern";

/** Whether a quantifier applies to a group that contains a quantifier (star height above 1). */
export function nestedRepetition(pattern: string): boolean {
  const groups: boolean[] = [false];
  let i = 0;
  const quantifierAt = (at: number): number => {
    const c = pattern[at];
    if (c === "*" || c === "+" || c === "?") return 1;
    if (c === "{") {
      const m = /^\{\d+(,\d*)?\}/.exec(pattern.slice(at));
      if (m) return m[0].length;
    }
    return 0;
  };
  while (i < pattern.length) {
    const c = pattern[i];
    let atomEnd = i + 1;
    let groupHadRepetition = false;
    if (c === "\\") atomEnd = i + 2;
    else if (c === "[") {
      let j = i + 1;
      if (pattern[j] === "^") j++;
      if (pattern[j] === "]") j++;
      while (j < pattern.length && pattern[j] !== "]") j += pattern[j] === "\\" ? 2 : 1;
      atomEnd = j + 1;
    } else if (c === "(") {
      groups.push(false);
      i += pattern[i + 1] === "?" ? (/^\(\?<[A-Za-z_$][\w$]*>/.exec(pattern.slice(i))?.[0].length ?? 3) : 1;
      continue;
    } else if (c === ")") {
      groupHadRepetition = groups.pop() ?? false;
      if (groups.length === 0) groups.push(false);
    } else if (c === "|" || c === "^" || c === "$") {
      i++;
      continue;
    }
    const q = quantifierAt(atomEnd);
    if (q > 0) {
      if (groupHadRepetition) return true;
      groups[groups.length - 1] = true;
      i = atomEnd + q + (pattern[atomEnd + q] === "?" ? 1 : 0);
    } else {
      if (groupHadRepetition) groups[groups.length - 1] = true;
      i = atomEnd;
    }
  }
  return false;
}
