/**
 * The PostgreSQL executor's own parameter and row handling (src/store/postgres/wire.ts): array
 * parameters written as literals arrive as the values bound, whatever their characters, and rows
 * come back as objects keyed by column, also after a statement's columns change.
 */
import pg from "pg";
import { describe, expect, it } from "vitest";
import { arrayLiteral, RowShapes, wireParams } from "../../src/store/postgres/wire.js";
import { PG_URL } from "../helpers/db.js";

/** Texts an array literal must quote or escape: its syntax, quotes, backslashes, NULL, JSON, multibyte. */
const AWKWARD = [
  "plain",
  "",
  "NULL",
  "null",
  " spaced ",
  "a,b",
  "{x,y}",
  'quote " inside',
  "back \\ slash",
  '\\"',
  "line\nbreak\ttab",
  "é € 😀",
  JSON.stringify({ amount: 120, note: 'he said "hi" \\o/', list: ["a", null, 1.5] }),
];

describe("PostgreSQL array parameters", () => {
  it("writes numbers bare, strings quoted with their quotes and backslashes escaped, nulls as NULL", () => {
    expect(arrayLiteral([1, -2, 1.5, null, "a", 'b"c', "d\\e", ""])).toBe('{1,-2,1.5,NULL,"a","b\\"c","d\\\\e",""}');
    expect(arrayLiteral([])).toBe("{}");
  });

  it("refuses what it cannot write (an object, a boolean, a non-finite number)", () => {
    expect(() => arrayLiteral([{}])).toThrow(/only strings, finite numbers and nulls/);
    expect(() => arrayLiteral([true])).toThrow(/only strings, finite numbers and nulls/);
    expect(() => arrayLiteral([Number.NaN])).toThrow(/only strings, finite numbers and nulls/);
  });

  it("leaves scalar parameters as they are", () => {
    expect(wireParams(["a", 1, null, ["x", null]])).toEqual(["a", 1, null, '{"x",NULL}']);
  });
});

describe("PostgreSQL rows from arrays", () => {
  it("keys each row's values by its columns, and follows a statement whose columns changed", () => {
    const shapes = new RowShapes();
    const fields = [{ name: "a" }, { name: "b" }];
    expect(
      shapes.objects("s", fields, [
        [1, "x"],
        [2, null],
      ]),
    ).toEqual([
      { a: 1, b: "x" },
      { a: 2, b: null },
    ]);
    expect(shapes.objects("s", [{ name: "a" }, { name: "c" }, { name: "d" }], [[3, 4, 5]])).toEqual([
      { a: 3, c: 4, d: 5 },
    ]);
    // A repeated column name keeps the last value, as node-postgres' own object rows do.
    expect(shapes.objects("t", [{ name: "a" }, { name: "a" }], [[1, 2]])).toEqual([{ a: 2 }]);
  });
});

if (!PG_URL) console.warn("skipped: test/store/pg-wire.test.ts [postgres]: ORBIT_TEST_DATABASE_URL is not set");

describe.skipIf(!PG_URL)("PostgreSQL array parameters [postgres]", () => {
  it("arrive as the values bound: text, jsonb through text, bigint and boolean arrays", async () => {
    const client = new pg.Client({ connectionString: PG_URL as string });
    await client.connect();
    try {
      const texts = [...AWKWARD, null];
      const numbers = [0, -1, 1_700_000_000_000, null, Number.MAX_SAFE_INTEGER];
      const { rows } = await client.query({
        text: `SELECT $1::text[] AS texts, $2::bigint[]::text[] AS numbers, $3::boolean[] AS flags,
                 (SELECT array_agg(j::jsonb ORDER BY o) FROM unnest($4::text[]) WITH ORDINALITY AS u(j, o))::text[] AS json`,
        values: wireParams([texts, numbers, [1, 0, null], [AWKWARD.at(-1) as string]]),
      });
      expect(rows[0].texts).toEqual(texts);
      expect(rows[0].numbers).toEqual(numbers.map((n) => (n === null ? null : String(n))));
      expect(rows[0].flags).toEqual([true, false, null]);
      expect(JSON.parse(rows[0].json[0])).toEqual(JSON.parse(AWKWARD.at(-1) as string));
    } finally {
      await client.end();
    }
  });
});
