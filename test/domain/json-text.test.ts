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
});
