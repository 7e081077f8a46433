/**
 * Input schema patterns no input can hold the process with (src/domain/safe-pattern.ts,
 * docs/security.md § Input schemas). Before, `^(a+)+$` ran on the backtracking engine: a start
 * with 30 `a` and a `!` held a server for 30 s, and 40 for hours.
 */
import { expect, it } from "vitest";
import { OrbitError } from "../../src/domain/errors.js";
import { compileInputSchema } from "../../src/domain/input-schema.js";
import { nestedRepetition } from "../../src/domain/safe-pattern.js";

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

it("refuses at registration a nested repetition the linear engine cannot run, naming the pattern", () => {
  for (const pattern of ["^(?:[a-z]{1,10})+$", "^(\\p{L}+\\s?)*$", "^(?<n>a{2,300})+$"]) {
    let error: unknown = null;
    try {
      compileInputSchema(schemaOf(pattern), "Evil@1.0.0");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(OrbitError);
    expect((error as OrbitError).code).toBe("INVALID_ARGUMENT");
    expect((error as OrbitError).message).toContain(
      `input_schema of Evil@1.0.0: pattern ${JSON.stringify(pattern)} repeats a part`,
    );
  }
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
