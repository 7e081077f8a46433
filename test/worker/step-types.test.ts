/**
 * `ctx.step` returns the JSON form of its result, on the first run too (docs/workflows.md § Steps),
 * and its type says so: code that called `.getTime()` on a step's Date compiled and failed at run
 * time. Checked by `npm run typecheck` (the `@ts-expect-error` lines fail it if the types lie
 * again) and at run time against what a step really returns.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import type { Jsonified, JsonObject, JsonValue } from "../../src/domain/json.js";
import { TaskContext } from "../../src/worker/context.js";
import { taskJson } from "./hung-code.js";

const TASK = taskJson();
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe("Jsonified", () => {
  it("is the type JSON.parse(JSON.stringify(value)) has", () => {
    expectTypeOf<Jsonified<Date>>().toEqualTypeOf<string>();
    expectTypeOf<Jsonified<{ at: Date; n: number; f: () => void; u: undefined; o?: string }>>().toEqualTypeOf<{
      at: string;
      n: number;
      o?: string;
    }>();
    expectTypeOf<Jsonified<Map<string, number>>>().toEqualTypeOf<Record<never, never>>();
    expectTypeOf<Jsonified<(number | undefined)[]>>().toEqualTypeOf<(number | null)[]>();
    expectTypeOf<Jsonified<{ id: string; tags: string[] }>>().toEqualTypeOf<{ id: string; tags: string[] }>();
    expectTypeOf<Jsonified<unknown>>().toEqualTypeOf<unknown>();
    // A step that may find nothing returns null then (storable.ts), never a missing value.
    expectTypeOf<Jsonified<{ id: string } | undefined>>().toEqualTypeOf<{ id: string } | null>();
    expectTypeOf<Jsonified<void>>().toEqualTypeOf<null>();
    // A property that may be undefined may be missing; tuples keep their places.
    expectTypeOf<Jsonified<{ a: string | undefined; b: number }>>().toEqualTypeOf<{ a?: string; b: number }>();
    expectTypeOf<Jsonified<[{ at: Date }, number]>>().toEqualTypeOf<[{ at: string }, number]>();
    // JSON values stay as they are: a field of an undeclared input is the recursive JsonValue, and
    // a step result holding one beside a Date (or one that may be undefined) recursed without end,
    // so `tsc` failed the quickstart's worker with TS2589 "Type instantiation is excessively deep"
    // (a tester, with plain `strict`).
    expectTypeOf<Jsonified<{ amount: JsonValue; at: Date }>>().toEqualTypeOf<{ amount: JsonValue; at: string }>();
    expectTypeOf<Jsonified<{ amount: JsonValue | undefined; n: 1 }>>().toEqualTypeOf<{ amount?: JsonValue; n: 1 }>();
    expectTypeOf<Jsonified<JsonObject[] | Date>>().toEqualTypeOf<JsonObject[] | string>();
    // Symbol keys pass for JSON (a string index says nothing of them), and JSON drops them (a tester).
    expectTypeOf<Jsonified<{ [Symbol.iterator]: number; k: number }>>().toEqualTypeOf<{ k: number }>();
  });
});

describe("ctx.step", () => {
  it("returns the JSON form its type names, on the first run", async () => {
    const ctx = new TaskContext(TASK, { signal: new AbortController().signal }, quiet, false, {
      journal: async () => undefined,
      cancelReason: () => null,
      draining: () => false,
    });
    const at = await ctx.step("now", () => new Date(Date.UTC(2026, 11, 5)));
    expectTypeOf(at).toEqualTypeOf<string>();
    expect(at).toBe("2026-12-05T00:00:00.000Z");
    // @ts-expect-error a step's Date is its string: there is no getTime to call
    expect(() => at.getTime()).toThrow(TypeError);
    const m = await ctx.step("map", () => new Map([["a", 1]]));
    expect(m).toEqual({});
    // @ts-expect-error a step's Map is an empty object
    expect(m.size).toBeUndefined();
    const order = await ctx.step("order", async () => ({ id: "o-1", total: 3, note: undefined, at: new Date(0) }));
    expectTypeOf(order).toEqualTypeOf<{ id: string; total: number; at: string }>();
    expect(order).toEqual({ id: "o-1", total: 3, at: "1970-01-01T00:00:00.000Z" });
    const found = await ctx.step("find", () => [{ id: "a" }].find((x) => x.id === "zz"));
    expectTypeOf(found).toEqualTypeOf<{ id: string } | null>();
    expect(found).toBeNull();
    const nothing = await ctx.step("void", async () => {});
    expectTypeOf(nothing).toEqualTypeOf<null>();
    expect(nothing).toBeNull();
    const [one, two] = await ctx.step("both", () => Promise.all([{ id: "x" }, 2]));
    expectTypeOf(one).toEqualTypeOf<{ id: string }>();
    expectTypeOf(two).toEqualTypeOf<number>();
    // A generic helper over JSON values keeps its T.
    const typed = <T extends JsonObject>(name: string, value: T): Promise<T> => ctx.step(name, () => value);
    expect(await typed("typed", { n: 1 })).toEqual({ n: 1 });
  });
});
