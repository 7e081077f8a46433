import { describe, expect, it } from "vitest";
import { inputTextOf, parseJsonText, RawJson, serializeJson, stringifyJsonText } from "../../src/domain/json-text.js";

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
