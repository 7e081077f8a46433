/**
 * SQLite's group commit (src/store/sqlite/sqlite-connection.ts, docs/storage.md § Group commit):
 * transactions queued together run in one SQLite transaction, each in its own savepoint, and
 * commit once. No caller is answered before the COMMIT; a member that fails is rolled back alone;
 * the firing loop's reservation keeps other transactions out of its groups; each member runs in
 * its caller's async context.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteConnection } from "../../src/store/sqlite/sqlite-connection.js";

function gate(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const fn of cleanup.splice(0).reverse()) fn();
});

/** A connection on a WAL file, and a second connection on the same file that sees only what is committed. */
function files(): { c: SqliteConnection; db: Database.Database; outside: Database.Database } {
  const dir = mkdtempSync(join(tmpdir(), "orbit-group-commit-"));
  const db = new Database(join(dir, "g.db"));
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE t (id TEXT PRIMARY KEY)");
  const outside = new Database(join(dir, "g.db"), { readonly: true });
  const c = new SqliteConnection();
  c.attach(db);
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanup.push(() => db.close());
  cleanup.push(() => outside.close());
  return { c, db, outside };
}

const committed = (outside: Database.Database): string[] =>
  (outside.prepare("SELECT id FROM t ORDER BY id").all() as { id: string }[]).map((r) => r.id);

describe("SQLite group commit", () => {
  it("commits the transactions queued together once, and answers none of them before the commit", async () => {
    const { c, outside } = files();
    const hold = gate();
    const answered: string[] = [];
    const seenByLast: { answered: string[]; committed: string[] }[] = [];
    const insert = (id: string, wait?: Promise<void>) =>
      c
        .transaction(async (tx) => {
          await tx.run("INSERT INTO t (id) VALUES (?)", [id]);
          if (wait) await wait;
          if (id === "d") seenByLast.push({ answered: [...answered], committed: committed(outside) });
        })
        .then(() => answered.push(id));
    const first = insert("a", hold.opened);
    const rest = [insert("b"), insert("c"), insert("d")];
    await new Promise((resolve) => setImmediate(resolve));
    hold.open();
    await Promise.all([first, ...rest]);
    // When the last one ran, the first three had run but were neither committed nor answered.
    expect(seenByLast).toEqual([{ answered: [], committed: [] }]);
    expect(committed(outside)).toEqual(["a", "b", "c", "d"]);
  });

  it("rolls a failing member back to its savepoint and commits the others", async () => {
    const { c, outside } = files();
    const hold = gate();
    const first = c.transaction(async (tx) => {
      await tx.run("INSERT INTO t (id) VALUES (?)", ["a"]);
      await hold.opened;
    });
    const failing = c.transaction(async (tx) => {
      await tx.run("INSERT INTO t (id) VALUES (?)", ["x"]);
      throw new Error("refused");
    });
    const duplicate = c.transaction(async (tx) => {
      await tx.run("INSERT INTO t (id) VALUES (?)", ["y"]);
      await tx.run("INSERT INTO t (id) VALUES (?)", ["a"]); // UNIQUE constraint: this member fails
    });
    const last = c.transaction(async (tx) => tx.run("INSERT INTO t (id) VALUES (?)", ["b"]));
    await new Promise((resolve) => setImmediate(resolve));
    hold.open();
    await expect(failing).rejects.toThrow("refused");
    await expect(duplicate).rejects.toThrow(/UNIQUE/);
    await first;
    expect(await last).toBe(1);
    expect(committed(outside)).toEqual(["a", "b"]);
  });

  it("a failed COMMIT rejects every member, and nothing of them is kept", async () => {
    const { c, db, outside } = files();
    // A deferred foreign key fails at the COMMIT, not at the statement.
    db.exec("PRAGMA foreign_keys = ON; CREATE TABLE child (p TEXT REFERENCES t (id) DEFERRABLE INITIALLY DEFERRED)");
    const hold = gate();
    const first = c.transaction(async (tx) => {
      await tx.run("INSERT INTO t (id) VALUES (?)", ["a"]);
      await hold.opened;
    });
    const orphan = c.transaction(async (tx) => tx.run("INSERT INTO child (p) VALUES (?)", ["nobody"]));
    await new Promise((resolve) => setImmediate(resolve));
    hold.open();
    await expect(first).rejects.toThrow(/FOREIGN KEY/);
    await expect(orphan).rejects.toThrow(/FOREIGN KEY/);
    expect(committed(outside)).toEqual([]);
    expect(db.inTransaction).toBe(false);
    expect(await c.transaction(async (tx) => tx.run("INSERT INTO t (id) VALUES (?)", ["later"]))).toBe(1);
    expect(committed(outside)).toEqual(["later"]);
  });

  it("while the firing loop reserves the lock, its group takes urgent transactions only", async () => {
    const { c, outside } = files();
    const release = c.reserve();
    const order: string[] = [];
    const hold = gate();
    const seen: string[][] = [];
    const fire = c.transaction(async (tx) => {
      await tx.run("INSERT INTO t (id) VALUES (?)", ["fire-1"]);
      order.push("fire-1");
      await hold.opened;
    }, true);
    const worker = c.transaction(async (tx) => {
      seen.push(committed(outside));
      await tx.run("INSERT INTO t (id) VALUES (?)", ["worker"]);
      order.push("worker");
    });
    const handOff = c.transaction(async (tx) => {
      await tx.run("INSERT INTO t (id) VALUES (?)", ["hand-off"]);
      order.push("hand-off");
    }, true);
    await new Promise((resolve) => setImmediate(resolve));
    hold.open();
    await Promise.all([fire, handOff]);
    expect(order).toEqual(["fire-1", "hand-off"]);
    expect(committed(outside)).toEqual(["fire-1", "hand-off"]);
    release();
    await worker;
    // The worker's transaction ran after the reserved group had committed, in a group of its own.
    expect(seen).toEqual([["fire-1", "hand-off"]]);
    expect(order).toEqual(["fire-1", "hand-off", "worker"]);
  });

  it("runs each member in its caller's async context", async () => {
    const { c } = files();
    const request = new AsyncLocalStorage<string>();
    const hold = gate();
    const seen: (string | undefined)[] = [];
    const all = ["r1", "r2", "r3"].map((id, i) =>
      request.run(id, () =>
        c.transaction(async () => {
          if (i === 0) await hold.opened;
          seen.push(request.getStore());
        }),
      ),
    );
    await new Promise((resolve) => setImmediate(resolve));
    hold.open();
    await Promise.all(all);
    expect(seen).toEqual(["r1", "r2", "r3"]);
  });

  it("refuses a transaction started on the connection from inside one of its own", async () => {
    const { c } = files();
    await expect(c.transaction(async () => c.transaction(async () => 1))).rejects.toThrow(
      "called directly inside its own transaction",
    );
  });
});
