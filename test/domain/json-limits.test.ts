/**
 * checkJsonLimits (docs/design.md § Input safety) measures the serialized size only when an upper
 * bound summed on its walk passes 1 MB: these values sit at the limit, where a bound that were not
 * one would let a value over 1 MB through.
 */
import { describe, expect, it } from "vitest";
import { checkJsonLimits, MAX_JSON_BYTES } from "../../src/domain/json-limits.js";

const bytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v), "utf8");

/** A string whose JSON text (quotes included) is exactly `n` bytes, made of `unit` (its JSON text `unitBytes`). */
const stringOf = (unit: string, unitBytes: number, n: number): string =>
  unit.repeat(Math.floor((n - 2) / unitBytes)) + "x".repeat((n - 2) % unitBytes);

describe("checkJsonLimits at 1 MB", () => {
  const cases: Array<[string, string, number]> = [
    ["ASCII", "x", 1],
    ["escaped control characters", "\u0001", 6],
    ["quotes and backslashes", '"\\', 4],
    ["three-byte characters", "€", 3],
    ["surrogate pairs", "😀", 4],
  ];
  for (const [name, unit, unitBytes] of cases) {
    it(`${name}: exactly 1 MB passes, one byte more is refused`, () => {
      const at = stringOf(unit, unitBytes, MAX_JSON_BYTES);
      expect(bytes(at)).toBe(MAX_JSON_BYTES);
      expect(() => checkJsonLimits(at, "input")).not.toThrow();
      const over = `${at}x`;
      expect(bytes(over)).toBe(MAX_JSON_BYTES + 1);
      expect(() => checkJsonLimits(over, "input")).toThrow(/input is 1,048,577 bytes serialized/);
    });
  }

  it("counts keys, numbers and punctuation: an object of many long-numbered fields over 1 MB is refused", () => {
    const big: Record<string, number> = {};
    // Each field is `"k<i>":-0.0000030370527149891967,`: at least 31 bytes.
    for (let i = 0; i < Math.ceil(MAX_JSON_BYTES / 31); i++) big[`k${i}`] = -0.0000030370527149891967;
    expect(bytes(big)).toBeGreaterThan(MAX_JSON_BYTES);
    expect(() => checkJsonLimits(big, "result")).toThrow(/result is [\d,]+ bytes serialized/);
    const nested = [[big]];
    expect(() => checkJsonLimits(nested, "result")).toThrow(/bytes serialized/);
  });
});
