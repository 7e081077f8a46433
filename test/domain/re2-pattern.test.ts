/**
 * Schema patterns on RE2 mean what they mean in ECMAScript (src/domain/re2-pattern.ts): random
 * patterns over every construct the translation writes are tested on RE2 and on V8 (`u` flag)
 * against random strings of the characters where the two syntaxes differ, and must agree.
 */
import { expect, it } from "vitest";
import { compileInputSchema } from "../../src/domain/input-schema.js";
import { re2Pattern, toRe2Syntax } from "../../src/domain/re2-pattern.js";
import { thrown } from "../helpers/thrown.js";

/** A small deterministic generator (mulberry32), so a failure names a seed that repeats it. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Where RE2's syntax and ECMAScript's part: spaces beyond ASCII, line terminators, astral and lone
// surrogate code points, `\v`, backspace, letters of several scripts, syntax characters.
const CHARACTERS = ["a", "b", "A", "0", "_", "-", " ", "\t", "\n", "\r", "\v", "\b", "\u00a0", "\u2028", "\ufeff"];
CHARACTERS.push("é", "α", "Ж", "😀", "\ud800", "@", ".", "/", "\\", "[", "]", "{", "}", "$", "^");

const ATOMS = ["a", "b", "é", "😀", ".", "\\s", "\\S", "\\d", "\\D", "\\w", "\\W", "\\p{L}", "\\P{L}", "\\p{Lu}"];
ATOMS.push(
  "\\p{LC}",
  "\\p{Letter}",
  "\\P{Uppercase_Letter}",
  "\\p{gc=Decimal_Number}",
  "\\p{Script=Greek}",
  "\\u0041",
  "\\u{1F600}",
  "\\uD83D\\uDE00",
  "\\x61",
  "\\cJ",
  "\\0",
  "\\v",
  "\\f",
);
ATOMS.push("\\.", "\\/", "\\-", "\\[", "\\$", "\\^", "\\\\", "[a-z]", "[^a]", "[\\s@]", "[^\\s@]", "[\\S]");
ATOMS.push(
  "[\\b]",
  "[\\d-]",
  "[-a]",
  "[a\\-z]",
  "[^]",
  "[]",
  "[\\p{L}\\d]",
  "[^\\P{L}]",
  "[\\u{1F600}-\\u{1F64F}]",
  "[é-ж]",
);

function pattern(next: () => number, depth: number): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const terms: string[] = [];
  const length = 1 + Math.floor(next() * 3);
  for (let i = 0; i < length; i++) {
    let term =
      depth < 3 && next() < 0.3
        ? `${pick(["(", "(?:", "(?<g>"]).replace("g", `g${depth}${i}`)}${alternatives(next, depth + 1)})`
        : pick(ATOMS);
    if (next() < 0.5) term += pick(["*", "+", "?", "{2}", "{0,2}", "{1,}", "*?", "+?", "{1,3}?", "{02}", "{0,03}"]);
    terms.push(term);
  }
  if (next() < 0.2) terms.unshift(pick(["^", "\\b", "\\B"]));
  if (next() < 0.2) terms.push(pick(["$", "\\b", "\\B"]));
  return terms.join("");
}

function alternatives(next: () => number, depth: number): string {
  return next() < 0.3 ? `${pattern(next, depth)}|${pattern(next, depth)}` : pattern(next, depth);
}

it("agrees with V8's reading of the pattern on random patterns and strings", () => {
  const seed = Number(process.env.ORBIT_FUZZ_SEED ?? 20261206);
  const next = random(seed);
  let compared = 0;
  for (let p = 0; p < 1000; p++) {
    const source = alternatives(next, 0);
    const re2 = re2Pattern(source);
    if (re2 === null || typeof re2 === "string") continue;
    const v8 = new RegExp(source, "u");
    for (let s = 0; s < 25; s++) {
      let text = "";
      for (let n = Math.floor(next() * 8); n > 0; n--) text += CHARACTERS[Math.floor(next() * CHARACTERS.length)];
      // V8 finds `\B` inside a surrogate pair (`/\B/u.exec("_😀0").index` is 2), a position the
      // `u` reading (code points) does not have; RE2 reads code points, as the standard says.
      if (source.includes("\\B") && /[\ud800-\udbff][\udc00-\udfff]/.test(text)) continue;
      const expected = v8.test(text);
      if (re2.test(text) !== expected) {
        expect.fail(
          `seed ${seed}: /${source}/u on ${JSON.stringify(text)}: V8 ${expected}, RE2 ${!expected} (RE2 syntax ${toRe2Syntax(source)})`,
        );
      }
      compared++;
    }
  }
  // Most generated patterns translate: the test compares, not skips.
  expect(compared).toBeGreaterThan(1000 * 25 * 0.8);
});

it('writes counts as numbers: RE2 read {02} as the text "{02}"', () => {
  for (const [source, yes, no] of [
    ["^(?:a|b){02}x*y*$", "ab", "a{02}"],
    ["^(?:[a-z]+-){0,03}[a-z]+$", "ab-cd-ef", "ab-{0,03}cd"],
    ["^(?:\\w+){01,}$", "hello", "hello{01,}"],
  ] as const) {
    const re2 = re2Pattern(source) as { test(s: string): boolean };
    expect([re2.test(yes), re2.test(no)], source).toEqual([true, false]);
  }
});

it("gives up on what has no RE2 form, and on patterns invalid under `u`", () => {
  for (const source of [
    "(a)\\1",
    "(?<n>a)\\k<n>",
    "(?=a)",
    "(?!a)",
    "(?<=a)b",
    "(?<!a)b",
    "a{1001}",
    "\\p{Alphabetic}",
  ]) {
    expect(toRe2Syntax(source)).toBeNull();
  }
  // Valid only without `u` (an identity escape, a lone brace): the other engines read those.
  for (const source of ["\\e", "a{", "]"]) expect(toRe2Syntax(source)).toBeNull();
  // A script RE2 does not know by that name compiles to nothing: the other engines decide.
  expect(re2Pattern("\\p{sc=Grek}")).toBeNull();
});

it("says why RE2 would cost too much to compile: past 20,000 instructions a pattern, 100,000 a schema", () => {
  // `[a-z]{1000}` written 900 times fits in a pattern's 10,000 characters: 1.8 million instructions.
  expect(re2Pattern("[a-z]{1000}".repeat(25))).toBe(
    "its RE2 program would have about 25,000 instructions, more than the 20,000 of one pattern",
  );
  expect((re2Pattern("[a-z]{1000}".repeat(19)) as { programSize: number }).programSize).toBe(19_002);
  const schema = Object.fromEntries([...Array(60)].map((_, i) => [`^(?:x${i}[a-z]{0,999}|y)+$`, { type: "string" }]));
  const error = thrown(() => compileInputSchema({ type: "object", patternProperties: schema }, "Big@1.0.0"));
  expect(error.message).toContain("repeats a part that itself repeats, and its RE2 program (about 2,0");
  expect(error.message).toContain("instructions) would take the schema's patterns past the 100,000");
  // A schema compiled again (every problem listed) puts each pattern on the engine it had.
  const fits = Object.fromEntries([...Array(40)].map((_, i) => [`^(?:x${i}[a-z]{0,999}|y)+$`, { type: "integer" }]));
  const validate = compileInputSchema({ type: "object", patternProperties: fits }, "Big@1.0.0");
  expect(validate({ x1abc: 1 })).toBe(true);
  expect(validate({ x1abc: "one" })).toBe(false);
  expect(validate.errors?.[0]?.instancePath).toBe("/x1abc");
});
