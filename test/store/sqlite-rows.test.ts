/**
 * The SQLite connection reads a statement's rows as arrays and makes each an object with a function
 * generated from the column names (src/store/sqlite/sqlite-connection.ts): the rows must be exactly
 * what better-sqlite3's own object rows are, for every kind of column name and for RETURNING.
 */
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteConnection } from "../../src/store/sqlite/sqlite-connection.js";

const open: Database.Database[] = [];
afterEach(() => {
  for (const db of open.splice(0)) db.close();
});

function connection(): { connection: SqliteConnection; db: Database.Database } {
  const db = new Database(":memory:");
  open.push(db);
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, "weird ""name""" TEXT, data TEXT)');
  db.exec(`INSERT INTO t (id, name, "weird ""name""", data) VALUES (1, 'a', 'w1', '{"k":1}'), (2, NULL, 'w2', NULL)`);
  const c = new SqliteConnection();
  c.attach(db);
  return { connection: c, db };
}

describe("SQLite rows", () => {
  it("are the same objects better-sqlite3 makes, whatever the column names", async () => {
    const { connection: c, db } = connection();
    for (const sql of [
      "SELECT * FROM t ORDER BY id",
      'SELECT id, name AS "select", data AS "a.b", \'x\' AS "", id + 1 FROM t ORDER BY id',
      // Two columns of one name: the last one's value, as better-sqlite3's object rows have it.
      "SELECT id AS v, name AS v, data FROM t ORDER BY id",
      "SELECT COUNT(*) FROM t WHERE id > 5",
    ]) {
      const rows = await c.locked.all(sql, []);
      expect(rows, sql).toEqual(db.prepare(sql).all());
      expect(
        rows.map((r) => Object.keys(r)),
        sql,
      ).toEqual(
        db
          .prepare(sql)
          .all()
          .map((r) => Object.keys(r as object)),
      );
    }
  });

  it("read what RETURNING returns and write what a plain statement writes", async () => {
    const { connection: c, db } = connection();
    expect(await c.locked.all("UPDATE t SET name = ? WHERE id = ? RETURNING id, name", ["b", 2])).toEqual([
      { id: 2, name: "b" },
    ]);
    expect(await c.locked.all("UPDATE t SET name = ? WHERE id = ?", ["c", 1])).toEqual([]);
    expect(await c.locked.run("UPDATE t SET data = ? WHERE id > ?", ["{}", 0])).toBe(2);
    expect(db.prepare("SELECT id, name, data FROM t ORDER BY id").all()).toEqual([
      { id: 1, name: "c", data: "{}" },
      { id: 2, name: "b", data: "{}" },
    ]);
  });

  it("an empty result is an empty list, and a statement read again gives fresh objects", async () => {
    const { connection: c } = connection();
    expect(await c.locked.all("SELECT * FROM t WHERE id = ?", [9])).toEqual([]);
    const [first] = await c.locked.all("SELECT id, name FROM t WHERE id = ?", [1]);
    (first as { name: string }).name = "changed";
    expect(await c.locked.all("SELECT id, name FROM t WHERE id = ?", [1])).toEqual([{ id: 1, name: "a" }]);
  });
});
