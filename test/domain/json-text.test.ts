import fc from "fast-check";
import { LosslessNumber, parse, stringify } from "lossless-json";
import { describe, expect, it } from "vitest";
import {
  inputTextOf,
  numbersAreCanonical,
  parseJsonText,
  RawJson,
  serializeJson,
  stringifyJsonText,
} from "../../src/domain/json-text.js";

describe("JSON text that keeps how numbers were written", () => {
  it("keeps 120.0, exponents and big integers; canonical numbers stay plain", () => {
    const v = parseJsonText('{"a":120.0,"b":1e3,"c":12345678901234567890,"d":1.5,"e":7}') as Record<string, unknown>;
    expect(v.d).toBe(1.5);
    expect(v.e).toBe(7);
    expect(stringifyJsonText(v)).toBe('{"a":120.0,"b":1e3,"c":12345678901234567890,"d":1.5,"e":7}');
  });

  it("takes an input's text from a request body only when JavaScript would change it", () => {
    expect(inputTextOf('{"schedule_id": "s", "input": {"amount": 120.0, "items": [1]}}')).toBe(
      '{"amount":120.0,"items":[1]}',
    );
    expect(inputTextOf('{"input": {"amount": 120}}')).toBeUndefined();
    expect(inputTextOf('{"interval": "1h"}')).toBeUndefined();
    expect(inputTextOf("not json")).toBeUndefined();
    expect(inputTextOf(undefined)).toBeUndefined();
  });

  it("splices RawJson text into an answer, and JSON.stringify falls back to the value", () => {
    const answer = { id: "s", input: new RawJson('{"amount":120.0}', { amount: 120 }), note: "\u0000orbit-raw-x:0" };
    expect(serializeJson(answer)).toBe('{"id":"s","input":{"amount":120.0},"note":"\\u0000orbit-raw-x:0"}');
    expect(JSON.stringify(answer)).toBe('{"id":"s","input":{"amount":120},"note":"\\u0000orbit-raw-x:0"}');
    expect(serializeJson({ plain: [1, "two"] })).toBe('{"plain":[1,"two"]}');
  });

  it("splices every RawJson of a large answer, and JSON.stringify still falls back after one threw", () => {
    const many = Array.from({ length: 1000 }, (_, i) => ({ i, input: new RawJson(`{"n":${i}.0}`, { n: i }) }));
    const text = serializeJson({ schedules: many, top: new RawJson("1.0", 1) });
    expect(text).toBe(`{"schedules":[${many.map((_, i) => `{"i":${i},"input":{"n":${i}.0}}`).join(",")}],"top":1.0}`);
    const boom = {
      toJSON() {
        throw new Error("boom");
      },
    };
    expect(() => serializeJson({ a: new RawJson("1.0", 1), b: boom })).toThrow("boom");
    expect(JSON.stringify({ a: new RawJson("1.0", 1) })).toBe('{"a":1}');
  });
});

/** The lossless path alone: a number whose text JavaScript would write back differently stays text. */
function losslessParse(text: string): unknown {
  return parse(text, undefined, (t) => (String(Number(t)) === t ? Number(t) : new LosslessNumber(t)));
}

/** The same outcome: equal values (LosslessNumbers included), or both refused. */
function outcome(f: () => unknown): { value: unknown } | { threw: true } {
  try {
    return { value: f() };
  } catch {
    return { threw: true };
  }
}

const digits = (min: number, max: number) =>
  fc.array(fc.constantFrom(..."0123456789"), { minLength: min, maxLength: max }).map((d) => d.join(""));
/** Number tokens, most of them ones JavaScript would write differently: 120.0, 1e3, -0, 17 digits, 1e-7 … */
const numberToken = fc.oneof(
  fc.constantFrom(
    ..."0 -0 0.0 -0.0 120.0 1.50 1e3 1E3 1e+3 1.0e0 -1e-7 0.000001 0.0000001 -0.000001 9007199254740993 123456789012345 1234567890123456 12345678901234.5 0.1 100 1e21 1e-6".split(
      " ",
    ),
  ),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
  fc.integer().map(String),
  fc
    .tuple(
      fc.boolean(),
      fc.oneof(
        fc.constant("0"),
        fc.tuple(fc.constantFrom(..."123456789"), digits(0, 24)).map(([a, b]) => a + b),
      ),
      fc.option(digits(1, 12)),
      fc.option(fc.tuple(fc.constantFrom("e", "E"), fc.constantFrom("", "+", "-"), digits(1, 3))),
    )
    .map(
      ([neg, int, frac, exp]) => `${neg ? "-" : ""}${int}${frac === null ? "" : `.${frac}`}${exp ? exp.join("") : ""}`,
    ),
);
/** Strings full of what a number scan could mistake: digits, points, signs, quotes, backslashes. */
const stringToken = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'0123456789.eE+-\\"abc {}[],:\u00e9\u2028\n') }),
  numberToken,
  fc.string(),
);
const space = fc.constantFrom("", "", " ", "\n", "\t", "\r\n  ");
const { text: jsonText } = fc.letrec<{ text: string }>((tie) => ({
  text: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    numberToken,
    stringToken.map((s) => JSON.stringify(s)),
    fc.constantFrom("true", "false", "null"),
    fc
      .tuple(space, fc.array(fc.tuple(space, tie("text"), space), { maxLength: 5 }))
      .map(([s, items]) => `[${s}${items.map((i) => i.join("")).join(",")}]`),
    fc
      .uniqueArray(fc.tuple(stringToken, space, tie("text")), { maxLength: 5, selector: ([k]) => k })
      .map((members) => `{${members.map(([k, s, v]) => `${s}${JSON.stringify(k)}${s}:${v}`).join(",")}}`),
  ),
}));

describe("parseJsonText's fast path (JSON.parse when no number would change)", () => {
  it("gives exactly what the lossless parser gives, for any JSON text and any prefix of one", () => {
    fc.assert(
      fc.property(jsonText, space, fc.nat(), (text, pad, cut) => {
        const whole = `${pad}${text}${pad}`;
        expect(outcome(() => parseJsonText(whole))).toStrictEqual(outcome(() => losslessParse(whole)));
        const part = whole.slice(0, cut % (whole.length + 1));
        expect(outcome(() => parseJsonText(part))).toStrictEqual(outcome(() => losslessParse(part)));
      }),
      { seed: 20261203, numRuns: 3000 },
    );
  });

  it("takes the fast path for a worker's poll answer and not for a number JavaScript would change", () => {
    const task = {
      task_id: "t-1",
      execution_id: "sched-0001:2026-12-03T09:00:00.000Z",
      input: { amount: 120.5, items: [1, -2, 0, 0.25], note: "120.0 and 1e3 in a string" },
      trigger: { schedule_id: "sched-0001", scheduled_for: "2026-12-03T09:00:00.000Z" },
      lease_ms: 30_000,
      cancel_requested: null,
    };
    expect(numbersAreCanonical(JSON.stringify({ tasks: [task, task] }))).toBe(true);
    for (const n of ["120.0", "1e3", "-0", "1234567890123456", "0.0000001", "1.50", "1E2"]) {
      expect(numbersAreCanonical(`{"tasks":[{"input":{"amount":${n}}}]}`), n).toBe(false);
    }
    expect(parseJsonText('{"a":"x","b":120.0}')).toStrictEqual({ a: "x", b: new LosslessNumber("120.0") });
  });

  it("stringifies as the lossless stringify does, LosslessNumbers or not", () => {
    fc.assert(
      fc.property(jsonText, (text) => {
        const value = losslessParse(text);
        expect(stringifyJsonText(value)).toBe(stringify(value) ?? "null");
      }),
      { seed: 20261204, numRuns: 1000 },
    );
    const odd = { a: undefined, b: [undefined, () => 1], c: new Date(0), d: 10n, e: { toJSON: () => "t" } };
    expect(stringifyJsonText(odd)).toBe(stringify(odd));
    expect(stringifyJsonText(undefined)).toBe("null");
  });
});
