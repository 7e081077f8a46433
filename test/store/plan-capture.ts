/**
 * The statements a SQLite store runs, caught as better-sqlite3 prepares them, each with the
 * parameters it ran with, to explain their query plans (task-plans, deadline-plans).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

export type Ran = { sql: string; params: unknown[]; db: Database.Database };

const prepare = Database.prototype.prepare;

/** Starts catching every `all()` of a statement prepared from now on; `restore` stops it. */
export function catchStatements(): { ran: Ran[]; restore: () => void } {
  const ran: Ran[] = [];
  Database.prototype.prepare = function (this: Database.Database, sql: string) {
    const statement = prepare.call(this, sql) as Database.Statement;
    const all = statement.all.bind(statement);
    statement.all = (...params: unknown[]) => {
      ran.push({ sql, params, db: this });
      return all(...params);
    };
    return statement;
  } as typeof prepare;
  return {
    ran,
    restore: () => {
      Database.prototype.prepare = prepare;
    },
  };
}

/** The statement's query plan, one step a line, explained with the parameters it ran with. */
export function planOf(r: Ran | undefined): string {
  if (r === undefined) throw new Error("statement not run");
  const rows = r.db.prepare(`EXPLAIN QUERY PLAN ${r.sql}`).all(...r.params) as { detail: string }[];
  return rows.map((p) => p.detail).join("\n");
}

/** A SQLite store in a temporary folder whose statements are caught from its opening; `close` undoes all. */
export async function caughtStore(): Promise<{ store: SqliteStore; ran: Ran[]; close: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "orbit-plans-"));
  const { ran, restore } = catchStatements();
  const store = new SqliteStore({ filename: join(dir, "orbit.db") });
  await store.open();
  return {
    store,
    ran,
    close: async () => {
      restore();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
