/**
 * Generated ids are version-7 UUIDs (src/domain/ids.ts): well formed, carrying their millisecond,
 * and each greater than the one before, also within one millisecond, past 4,096 in one millisecond
 * and when the wall clock goes back.
 */
import { describe, expect, it } from "vitest";
import { newTimeOrderedId, timeOrderedIds } from "../../src/domain/ids.js";

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const msOf = (id: string): number => Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

function increasing(ids: readonly string[]): void {
  for (let i = 1; i < ids.length; i++) {
    if (!((ids[i] as string) > (ids[i - 1] as string))) {
      throw new Error(`id ${i} ${ids[i]} is not greater than ${ids[i - 1]}`);
    }
  }
}

describe("time-ordered ids", () => {
  it("are version-7 UUIDs of the current millisecond", () => {
    const before = Date.now();
    const id = newTimeOrderedId();
    expect(id).toMatch(V7);
    expect(msOf(id)).toBeGreaterThanOrEqual(before);
    expect(msOf(id)).toBeLessThanOrEqual(Date.now());
  });

  it("increase within one millisecond, and carry into the next past 4,096", () => {
    const next = timeOrderedIds(() => 1_700_000_000_123);
    const ids = Array.from({ length: 10_000 }, next);
    for (const id of ids) expect(id).toMatch(V7);
    increasing(ids);
    expect(msOf(ids[0] as string)).toBe(1_700_000_000_123);
    expect(msOf(ids.at(-1) as string)).toBeGreaterThan(1_700_000_000_123);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("keep increasing when the clock goes back, and follow it forward again", () => {
    const times = [5_000, 5_001, 4_000, 3_000, 5_001, 9_000];
    const next = timeOrderedIds(() => times.shift() as number);
    const ids = Array.from({ length: 6 }, next);
    increasing(ids);
    expect(ids.map(msOf)).toEqual([5_000, 5_001, 5_001, 5_001, 5_001, 9_000]);
  });

  it("the 48-bit time is written whole (a date past 2100)", () => {
    const ms = Date.UTC(2200, 0, 1);
    expect(msOf(timeOrderedIds(() => ms)())).toBe(ms);
  });

  it("differ in their random bits between generators of the same millisecond", () => {
    const a = timeOrderedIds(() => 42);
    const b = timeOrderedIds(() => 42);
    const tails = new Set(Array.from({ length: 200 }, (_, i) => (i % 2 ? a() : b()).slice(19)));
    expect(tails.size).toBe(200);
  });
});
