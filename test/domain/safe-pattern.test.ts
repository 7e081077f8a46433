/**
 * Input schema patterns no input can hold the process with (src/domain/safe-pattern.ts,
 * docs/security.md § Input schemas). Before, `^(a+)+$` ran on the backtracking engine: a start
 * with 30 `a` and a `!` held a server for 30 s, and 40 for hours.
 */
import { expect, it } from "vitest";
import { checkWithinBudget, compileInputSchema } from "../../src/domain/input-schema.js";
import { backtrackingSteps, nestedRepetition, patternShape } from "../../src/domain/safe-pattern.js";
import { thrown } from "../helpers/thrown.js";

const schemaOf = (pattern: string) => ({
  type: "object",
  properties: { s: { type: "string", pattern } },
  additionalProperties: { type: "string", pattern },
});

it("runs a catastrophic pattern in linear time: 100,000 characters are refused at once", () => {
  const validate = compileInputSchema(schemaOf("^(a+)+$"), "Evil@1.0.0");
  expect(validate({ s: `${"a".repeat(100_000)}!` })).toBe(false);
  expect(validate({ s: "aaaa" })).toBe(true);
  const alternation = compileInputSchema(schemaOf("^(a|aa)+$"), "Evil@1.0.0");
  expect(alternation({ s: `${"a".repeat(100_000)}!` })).toBe(false);
});

it("keeps the patterns people write: counted lengths, Unicode classes", () => {
  const id = compileInputSchema(schemaOf("^[a-z0-9]{1,64}$"), "W@1.0.0");
  expect([id({ s: "order-1" }), id({ s: "order1" }), id({ s: "x".repeat(65) })]).toEqual([false, true, false]);
  const letters = compileInputSchema(schemaOf("^\\p{L}+$"), "W@1.0.0");
  expect([letters({ s: "Zürich" }), letters({ s: "Zürich 1" })]).toEqual([true, false]);
  const ip = compileInputSchema(schemaOf("^(\\d{1,3}\\.){3}\\d{1,3}$"), "W@1.0.0");
  expect([ip({ s: "10.0.0.1" }), ip({ s: "10.0.0" })]).toEqual([true, false]);
});

it("refuses at registration a nested repetition no linear-time engine runs, naming the pattern", () => {
  // A backreference, lookaround, a count past RE2's 1,000, a binary Unicode property: neither RE2 nor V8's linear engine.
  for (const pattern of [
    "^(?:(a)\\1+)+$",
    "^(?=x)(\\p{L}+\\s?)*$",
    "^(?<n>a{2,3000})+$",
    "^(?:\\p{Alphabetic}+\\s?)*$",
  ]) {
    const error = thrown(() => compileInputSchema(schemaOf(pattern), "Evil@1.0.0"));
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.message).toContain(`input_schema of Evil@1.0.0: pattern ${JSON.stringify(pattern)} repeats a part`);
    expect(error.message).toContain("a backreference, lookaround, a count past 1,000");
  }
});

it("runs nested and counted repetitions, \\p{…} and the WHATWG e-mail pattern on RE2: linear, Unicode", () => {
  // Refused before (the usual engine is exponential on them, V8's linear one has no \p{…} and no large counts).
  const names = compileInputSchema(schemaOf("^\\p{L}+(?:[ '-]\\p{L}+)*$"), "W@1.0.0");
  expect(["Jean-Luc O'Neil", "Zoë", "Jean  Luc", "x1"].map((s) => names({ s }))).toEqual([true, true, false, false]);
  expect(checkWithinBudget(names, { s: `${"é".repeat(200_000)}!` }, "W@1.0.0")).toBe(false);
  const email = compileInputSchema(
    schemaOf(
      "^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$",
    ),
    "W@1.0.0",
  );
  expect(["ada@example.com", "ada@-example.com", "ada@", "a@b"].map((s) => email({ s }))).toEqual([
    true,
    false,
    false,
    true,
  ]);
  const words = compileInputSchema(schemaOf("^(\\p{L}+\\s?)*$"), "W@1.0.0");
  expect(checkWithinBudget(words, { s: `${"a".repeat(100_000)}!` }, "W@1.0.0")).toBe(false);
  expect(words({ s: "Jean Luc" })).toBe(true);
  // One code point per `.`, as JSON Schema reads patterns (V8's linear engine saw two in an emoji).
  const pairs = compileInputSchema(schemaOf("^(?:ab|cd)*.$"), "W@1.0.0");
  expect([pairs({ s: "ab😀" }), pairs({ s: "abcd\n" })]).toEqual([true, false]);
});

it("refuses a pattern valid only without Unicode semantics, as JSON Schema reads patterns", () => {
  // Read without `u`, `\q(.*)×100c` ran on V8's linear engine: 40,000 characters took 6 s and 3.9 GB.
  const error = thrown(() => compileInputSchema(schemaOf(`\\q${"(.*)".repeat(100)}c`), "Evil@1.0.0"));
  expect(error.message).toContain(
    "is not a valid regular expression with Unicode semantics, as JSON Schema reads patterns",
  );
  // Valid with `u`, it runs on RE2, its cost charged.
  const captures = compileInputSchema(schemaOf(`${"(.*)".repeat(100)}c`), "W@1.0.0");
  expect(checkWithinBudget(captures, { s: "a".repeat(2000) }, "W@1.0.0")).toBe(false);
});

it("says a costly input does not match, not that it cost too much: the listing of every problem gives way", () => {
  // The listing re-ran the check within the same budget: a string between half and all of it was
  // refused as too costly instead of "must match pattern".
  const host = compileInputSchema(schemaOf("^(?:[a-z0-9-]{1,63}\\.)*[a-z]{2,63}$"), "H@1.0.0");
  expect(checkWithinBudget(host, { s: `${"a.".repeat(15_000)}!` }, "H@1.0.0")).toBe(false);
  expect(host.errors?.[0]?.message).toBe('must match pattern "^(?:[a-z0-9-]{1,63}\\.)*[a-z]{2,63}$"');
  expect(checkWithinBudget(host, { s: `${"a.".repeat(15_000)}com` }, "H@1.0.0")).toBe(true);
});

it("charges RE2 by its program: 2,002 instructions on 20,000 letters (2.5 s) are refused, short strings checked", () => {
  const counted = compileInputSchema(schemaOf("(?:\\p{L}|x){1,1000}\\d"), "Counted@1.0.0");
  expect(checkWithinBudget(counted, { s: "é".repeat(100) }, "Counted@1.0.0")).toBe(false);
  const error = thrown(() => checkWithinBudget(counted, { s: "é".repeat(20_000) }, "Counted@1.0.0"));
  expect(error.message).toMatch(/^input takes more pattern matching than one check may do/);
});

it("finds a repetition inside a repeated group, skipping escapes, classes and group prefixes", () => {
  const cases: [string, boolean][] = [
    ["^(a+)+$", true],
    ["^(?:ab)+$", false],
    ["^([+*]x)+$", false],
    ["^(\\+x)*$", false],
    ["^((a)b*)?c$", true],
    ["^(?<name>a)(b+)$", false],
    ["^[a-z]{2}(-[a-z]{2}){0,3}$", true],
    ["^a{2,3}b+$", false],
  ];
  expect(cases.map(([p]) => [p, nestedRepetition(p)])).toEqual(cases);
});

it("refuses a repeated part with alternatives no linear-time engine runs: exponential on the usual engine", () => {
  // `^(?:\p{L}|a)*$` took 1.3 s for 25 letters and a `!` there, doubling with each letter (it now runs on RE2).
  const error = thrown(() => compileInputSchema(schemaOf("^(?=.)(?:\\p{L}|a)*$"), "Evil@1.0.0"));
  expect(error.message).toContain('pattern "^(?=.)(?:\\\\p{L}|a)*$" repeats a part that has alternatives');
  expect(error.message).toContain("it has a backreference, lookaround");
  expect(error.message).toContain("write alternatives of single characters as one class ([\\p{L}-])");
  const letters = compileInputSchema(schemaOf("^[\\p{L}-]*$"), "W@1.0.0");
  expect([letters({ s: "Jean-Luc" }), letters({ s: "Jean Luc" })]).toEqual([true, false]);
});

it("charges a pattern no linear-time engine runs by its polynomial: long strings are refused, short ones checked", () => {
  // Three repetitions of \p{L} against each other: 3,000 letters and a `!` took 5.6 s (30,000: hours).
  // The lookahead keeps it off RE2.
  const validate = compileInputSchema(schemaOf("^(?=.)\\p{L}*\\p{L}*\\p{L}*$"), "Poly@1.0.0");
  expect(checkWithinBudget(validate, { s: `${"a".repeat(200)}!` }, "Poly@1.0.0")).toBe(false);
  expect(checkWithinBudget(validate, { s: "abc" }, "Poly@1.0.0")).toBe(true);
  const error = thrown(() => checkWithinBudget(validate, { s: `${"a".repeat(3000)}!` }, "Poly@1.0.0"));
  expect(error.code).toBe("INVALID_ARGUMENT");
  expect(error.message).toMatch(
    /^input takes more pattern matching than one check may do .*Poly@1\.0\.0's input_schema tests pattern/,
  );
  // Five could take 65^5 (1.2 billion) steps for 64 characters: refused when registered.
  const five = thrown(() => compileInputSchema(schemaOf("^(?=.)\\p{L}*\\p{L}*\\p{L}*\\p{L}*\\p{L}*$"), "Poly@1.0.0"));
  expect(five.message).toContain("testing one string of 64 characters could take more than 524,288,000 steps");
});

it("adds up one check's tests: many patterns on many keys are refused, however cheap each one is", () => {
  // 2,000 patternProperties on 30,000 keys held a server for 23 s.
  const patterns = Object.fromEntries([...Array(200)].map((_, i) => [`^x${i}[a-z]*$`, { type: "string" }]));
  const validate = compileInputSchema({ type: "object", patternProperties: patterns }, "Keyed@1.0.0");
  const keys = (n: number) => Object.fromEntries([...Array(n)].map((_, i) => [`k${i}`, 1]));
  expect(checkWithinBudget(validate, keys(1000), "Keyed@1.0.0")).toBe(true);
  const error = thrown(() => checkWithinBudget(validate, keys(30_000), "Keyed@1.0.0"));
  expect(error.message).toMatch(
    /Keyed@1\.0\.0's input_schema tests pattern "\^x\d+\[a-z\]\*\$" on too many or too long strings/,
  );
  // Each check has its own budget: the next small one passes.
  expect(checkWithinBudget(validate, keys(1000), "Keyed@1.0.0")).toBe(true);
});

it("runs on the usual engine the patterns whose work grows linearly, with Unicode semantics", () => {
  // On the linear engine a 1 MB string under `^[A-Za-z0-9+/=]*$` took 0.7 s.
  const base64 = compileInputSchema(schemaOf("^[A-Za-z0-9+/=]*$"), "W@1.0.0");
  expect(checkWithinBudget(base64, { s: "A".repeat(1_000_000) }, "W@1.0.0")).toBe(true);
  // `.` is one code point, as JSON Schema reads patterns (the linear engine ran without the u flag).
  const one = compileInputSchema(schemaOf("^.$"), "W@1.0.0");
  expect(one({ s: "😀" })).toBe(true);
});

it("reads a pattern's shape: repetitions, alternatives, anchoring, backreferences", () => {
  const shape = (p: string) => {
    const s = patternShape(p);
    return [
      s.nested,
      s.repeatedAlternation,
      s.anchored,
      s.unbounded,
      s.bounded.join(","),
      s.alternatives,
      s.backreferences,
    ];
  };
  expect(shape("^[a-z0-9]{1,64}$")).toEqual([false, false, true, 0, "64", 1, 0]);
  expect(shape("^\\p{L}+ \\p{L}+$")).toEqual([false, false, true, 2, "", 1, 0]);
  expect(shape("a|^b")).toEqual([false, false, false, 0, "", 2, 0]);
  expect(shape("^(a|bc)?d(e|f|g)$")).toEqual([false, false, true, 0, "1", 6, 0]);
  expect(shape("^((a|b)c){2}$")).toEqual([false, true, true, 0, "2", 2, 0]);
  expect(shape("^(a)\\1\\k<x>(?<x>b)$")).toEqual([false, false, true, 0, "", 1, 2]);
  expect(shape("^(?<=a)[)(|*]+$")).toEqual([false, false, true, 1, "", 1, 0]);
  expect(backtrackingSteps(patternShape("^a*b*$"), 9)).toBe(100);
  expect(backtrackingSteps(patternShape("a{0,3}"), 9)).toBe(40);
});

it("reads [] and [^] as JavaScript does: a class closed at once, so what follows is read", () => {
  // `[]` read as a literal `]` hid the nested repetition after it, and the pattern ran on the usual engine.
  expect(patternShape("^(?:[]|(?:a+)+[b])").nested).toBe(true);
  expect(patternShape("^x[^]+(a+)+$").nested).toBe(true);
  expect(patternShape("^[]a]$").unbounded).toBe(0);
});

it("charges a long pattern by its length, and refuses one past 10,000 characters", () => {
  // `"."×10000 + "c"` over 1 MB took 5.9 s on the usual engine, charged as a short pattern.
  const dots = compileInputSchema(schemaOf(`${".".repeat(5000)}c`), "Long@1.0.0");
  const error = thrown(() => checkWithinBudget(dots, { s: "a".repeat(1_000_000) }, "Long@1.0.0"));
  expect(error.message).toMatch(/^input takes more pattern matching than one check may do/);
  const once = { type: "object", properties: { s: { type: "string", pattern: `${".".repeat(10_000)}c` } } };
  const tooLong = thrown(() => compileInputSchema(once, "Long@1.0.0"));
  expect(tooLong.message).toContain("is 10,001 characters long; a pattern may have at most 10,000");
});

it("refuses draft 7's dependencies, which the bounds do not walk", () => {
  const error = thrown(() => compileInputSchema({ type: "object", dependencies: { a: { $ref: "#" } } }, "Old@1.0.0"));
  expect(error.message).toContain('it uses "dependencies", a keyword of draft 7');
});

it("stops at the first problem of a large input: every problem of a tree's 30,000 leaves took 12.9 s", () => {
  const tree = {
    type: "object",
    properties: { root: { $ref: "#/$defs/node" } },
    $defs: { node: { type: "object", properties: { children: { type: "array", items: { $ref: "#/$defs/node" } } } } },
  };
  const validate = compileInputSchema(tree, "Tree@1.0.0");
  expect(checkWithinBudget(validate, { root: { children: Array(30_000).fill(0) } }, "Tree@1.0.0")).toBe(false);
  expect(validate.errors?.length).toBe(1);
  // A small input is told every problem (the message lists up to five).
  expect(checkWithinBudget(validate, { root: { children: [0, 1, 2] } }, "Tree@1.0.0")).toBe(false);
  expect(validate.errors?.length).toBe(3);
});

it("refuses a schema whose patterns are longer than 20,000 in all, a \\p{…} counting as 50", () => {
  // 80 patterns of 1,985 \p{L} in a class (each under 10,000 characters) took 50 s to register.
  const big = (i: number) => `^(?:[${"\\p{L}".repeat(80)}${String.fromCharCode(0x4e00 + i)}]+)+$`;
  const schema = (n: number) => ({
    type: "object",
    patternProperties: Object.fromEntries([...Array(n)].map((_, i) => [big(i), { type: "string" }])),
  });
  expect(() => compileInputSchema(schema(4), "Big@1.0.0")).not.toThrow();
  const error = thrown(() => compileInputSchema(schema(6), "Big@1.0.0"));
  expect(error.message).toMatch(
    /^input_schema of Big@1\.0\.0: its patterns are 25,986 characters long in all, counting each \\p\{…\} as 50, and a schema's may be at most 20,000/,
  );
});

it("refuses a schema of more than 2,000 subschemas: registering compiles them while the server waits", () => {
  const properties = Object.fromEntries([...Array(2001)].map((_, i) => [`p${i}`, { type: "string" }]));
  const error = thrown(() => compileInputSchema({ type: "object", properties }, "Wide@1.0.0"));
  expect(error.message).toContain("it has 2,002 subschemas, and a schema may have at most 2,000");
});

it("an enum of objects matches equal values only, and passes over larger ones without writing them out", () => {
  const validate = compileInputSchema(
    { type: "object", properties: { v: { enum: [{ a: 1, b: [2] }, "x", null] } } },
    "Enum@1.0.0",
  );
  const check = (v: unknown) => validate({ v });
  expect([check({ b: [2], a: 1 }), check("x"), check(null)]).toEqual([true, true, true]);
  expect([check({ a: 1 }), check({ a: 1, b: [2], c: 3 }), check([1, 2, 3, 4, 5, 6]), check(1)]).toEqual([
    false,
    false,
    false,
    false,
  ]);
});
