/**
 * The column tables (src/store/sql/columns.ts, docs/storage.md § Column tables): every statement
 * part that must agree by position is generated from one declaration, and a record field without
 * a column does not compile.
 */
import { describe, expect, it } from "vitest";
import { postgresDialect } from "../../src/store/postgres/dialect.js";
import { batchInsertSql, col, columnSet, readRow, table } from "../../src/store/sql/columns.js";
import { EXECUTION_ALL, SCHEDULE_ADVANCE, TASK_ALL } from "../../src/store/sql/tables.js";
import { sqliteDialect } from "../../src/store/sqlite/dialect.js";

interface Thing {
  id: string;
  count: number;
  note: string | null;
  data: { a: number } | null;
  at: number;
}

const THINGS = table<Thing>("things", {
  id: col.text("thing_id"),
  count: col.int("count"),
  note: col.optText("note"),
  data: col.json<{ a: number } | null>("data"),
  at: col.ms("at_ms"),
});

describe("column tables", () => {
  it("generates the column list, marks, parameters and PostgreSQL casts in one order", () => {
    const all = columnSet(THINGS);
    expect(all.list).toBe('thing_id, "count", note, data, at_ms');
    expect(all.marks).toBe("?, ?, ?, ?, ?");
    expect(all.params({ id: "t1", count: 2, note: null, data: { a: 1 }, at: 5 })).toEqual([
      "t1",
      2,
      null,
      '{"a":1}',
      5,
    ]);
    expect(all.arrayMarks).toBe("?::text[], ?::int[], ?::text[], ?::text[], ?::bigint[]");
    expect(all.unnested).toBe('u.thing_id, u."count", u.note, u.data::jsonb, u.at_ms');
    expect(
      all.arrays([
        { id: "a", count: 1, note: "x", data: null, at: 1 },
        { id: "b", count: 2, note: null, data: { a: 2 }, at: 2 },
      ]),
    ).toEqual([
      ["a", "b"],
      [1, 2],
      ["x", null],
      [null, '{"a":2}'],
      [1, 2],
    ]);
    const some = columnSet(THINGS, ["note", "id"]);
    expect(some.sets).toBe("note = ?, thing_id = ?");
    expect(some.setsFromUnnest).toBe("note = u.note, thing_id = u.thing_id");
    const sql = batchInsertSql(THINGS, all, { tail: "ON CONFLICT (thing_id) DO NOTHING", ordered: true });
    expect(sql.single).toBe(
      'INSERT INTO things (thing_id, "count", note, data, at_ms) VALUES (?, ?, ?, ?, ?) ON CONFLICT (thing_id) DO NOTHING',
    );
    expect(sql.unnest).toBe(
      'INSERT INTO things (thing_id, "count", note, data, at_ms) SELECT u.thing_id, u."count", u.note, u.data::jsonb, u.at_ms ' +
        'FROM unnest(?::text[], ?::int[], ?::text[], ?::text[], ?::bigint[]) WITH ORDINALITY AS u(thing_id, "count", note, data, at_ms, ord) ' +
        "ORDER BY u.ord ON CONFLICT (thing_id) DO NOTHING",
    );
  });

  it("reads a row back per dialect and refuses a value of the wrong type, naming the column", () => {
    const row = { thing_id: "t1", count: 3, note: null, data: '{"a":7}', at_ms: 9 };
    expect(readRow(THINGS, row, sqliteDialect)).toEqual({ id: "t1", count: 3, note: null, data: { a: 7 }, at: 9 });
    expect(readRow(THINGS, { ...row, data: { a: 7 } }, postgresDialect).data).toEqual({ a: 7 });
    expect(() => readRow(THINGS, { ...row, count: "3" }, sqliteDialect)).toThrow("column count: expected a number");
  });

  it("declares every field of the real tables once, in the order the statements bind them", () => {
    expect(EXECUTION_ALL.names).toHaveLength(17);
    expect(EXECUTION_ALL.names.at(-1)).toBe("trace_parent");
    expect(EXECUTION_ALL.list).toContain('"trigger"');
    expect(TASK_ALL.names[0]).toBe("task_id");
    // One array parameter per column, typed by the column: JSON goes as text[] and is cast back.
    const marks = SCHEDULE_ADVANCE.arrayMarks.split(", ");
    expect(marks).toHaveLength(SCHEDULE_ADVANCE.names.length);
    expect(marks[SCHEDULE_ADVANCE.names.indexOf("buffered")]).toBe("?::text[]");
    expect(marks[SCHEDULE_ADVANCE.names.indexOf("next_fire_ms")]).toBe("?::bigint[]");
    expect(SCHEDULE_ADVANCE.setsFromUnnest).toContain("buffered = u.buffered::jsonb");
  });

  it("does not compile a record field without its column", () => {
    // @ts-expect-error `at` has no column: the compiler names it (npm run typecheck checks this line).
    const missing = table<Thing>("things", {
      id: col.text("id"),
      count: col.int("n"),
      note: col.optText("note"),
      data: col.json("d"),
    });
    // @ts-expect-error a text column for a number field
    const wrong = table<Thing>("things", { ...THINGS.columns, count: col.text("count") });
    expect([missing.name, wrong.name]).toEqual(["things", "things"]);
  });
});
