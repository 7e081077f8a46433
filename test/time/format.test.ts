/** Instants as the API shows them (src/time/format.ts), through its table of the last ones formatted. */
import { describe, expect, it } from "vitest";
import { formatInstant, parseInstant } from "../../src/time/format.js";

const reference = (ms: number): string => {
  const iso = new Date(ms).toISOString();
  return iso.endsWith(".000Z") ? `${iso.slice(0, -5)}Z` : iso;
};

describe("formatInstant", () => {
  it("writes RFC 3339 UTC, with milliseconds only when they are not zero", () => {
    expect(formatInstant(Date.UTC(2026, 11, 3, 7, 0, 0))).toBe("2026-12-03T07:00:00Z");
    expect(formatInstant(Date.UTC(2026, 11, 3, 7, 0, 0, 25))).toBe("2026-12-03T07:00:00.025Z");
    expect(formatInstant(-1)).toBe("1969-12-31T23:59:59.999Z");
  });

  it("gives each instant its own text when instants share a slot of the table, in any order", () => {
    const base = Date.UTC(2026, 11, 3);
    // The same second with other milliseconds, and seconds 1,024 apart (the table's size), alternated.
    const instants = [base, base + 1, base + 999, base + 1_024_000, base - 1_024_000, base + 2_048_000 + 1];
    for (let round = 0; round < 3; round++) {
      for (const ms of round === 1 ? [...instants].reverse() : instants) expect(formatInstant(ms)).toBe(reference(ms));
    }
    let seed = 7;
    for (let i = 0; i < 5000; i++) {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      const ms = base + (seed % 5_000_000) * 997;
      expect(formatInstant(ms)).toBe(reference(ms));
    }
  });
});

describe("parseInstant", () => {
  it("says a leap second is one (RFC 3339 allows :60, Unix time has no instant for it)", () => {
    expect(() => parseInstant("2016-12-31T23:59:60Z", "start_at")).toThrow(
      'start_at "2016-12-31T23:59:60Z" is a leap second, which Orbit\'s times (Unix time) do not have; give the second before or after it',
    );
    expect(() => parseInstant("2016-12-31T23:59:61Z", "start_at")).toThrow("is not a valid date and time");
    expect(parseInstant("2016-12-31T23:59:59Z")).toBe(Date.UTC(2016, 11, 31, 23, 59, 59));
  });

  it("takes any number of fraction digits, as RFC 3339 does, rounding past the millisecond", () => {
    // More than nine were refused as "not an RFC 3339 time" (a tester).
    const base = Date.UTC(2026, 0, 1);
    expect(parseInstant("2026-01-01T00:00:00.1234567891Z")).toBe(base + 123);
    expect(parseInstant("2026-01-01T00:00:00.000000000000001Z", "start_at", "up")).toBe(base + 1);
    expect(parseInstant("2026-01-01T00:00:00.9999999999999Z")).toBe(base + 999);
  });
});
