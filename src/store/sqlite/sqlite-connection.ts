/**
 * The SQLite store's single connection: a cache of prepared statements, the async mutex that keeps
 * plain operations from interleaving with an open transaction, and the transaction runner.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type Database from "better-sqlite3";
import { Mutex } from "../mutex.js";
import type { SqlExecutor, SqlParam, SqlRow } from "../sql/executor.js";

type Statement = Database.Statement<SqlParam[], SqlRow>;

export class SqliteConnection {
  private db: Database.Database | null = null;
  private readonly statements = new Map<string, Statement>();
  private readonly mutex = new Mutex();
  /** Marks the async context of the open transaction, to catch the store being used from inside it. */
  private readonly txScope = new AsyncLocalStorage<object>();
  private openTx: object | null = null;

  /** Plain operations: each statement waits for the mutex, so never runs inside someone's transaction. */
  readonly locked: SqlExecutor = {
    all: (sql, params) => this.exclusive(() => this.allNow(sql, params)),
    run: (sql, params) => this.exclusive(() => this.runNow(sql, params)),
    runMany: (sql, rows) => this.exclusive(() => this.runManyNow(sql, rows)),
  };

  attach(db: Database.Database): void {
    this.db = db;
  }

  get isOpen(): boolean {
    return this.db !== null;
  }

  /** Waits for queued work, then closes the database. */
  async close(): Promise<void> {
    await this.mutex.drain();
    this.statements.clear();
    this.db?.close();
    this.db = null;
  }

  async transaction<T>(fn: (exec: SqlExecutor) => Promise<T>): Promise<T> {
    return this.exclusive(async () => {
      const db = this.requireDb();
      const token = {};
      let active = true;
      const guard = (): void => {
        if (!active) throw new Error("this transaction has already ended; its tx object cannot be used any more");
      };
      const exec: SqlExecutor = {
        all: async (sql, params) => {
          guard();
          return this.allNow(sql, params);
        },
        run: async (sql, params) => {
          guard();
          return this.runNow(sql, params);
        },
        runMany: async (sql, rows) => {
          guard();
          return this.runManyNow(sql, rows);
        },
      };
      // IMMEDIATE takes the write lock now rather than at the first write, so two processes on one
      // file cannot both read and then fail to upgrade (SQLITE_BUSY mid-transaction).
      this.statement("BEGIN IMMEDIATE").run();
      this.openTx = token;
      try {
        const result = await this.txScope.run(token, () => fn(exec));
        this.statement("COMMIT").run();
        return result;
      } catch (error) {
        if (db.inTransaction) this.statement("ROLLBACK").run();
        throw error;
      } finally {
        active = false;
        this.openTx = null;
      }
    });
  }

  private exclusive<T>(fn: () => T | Promise<T>): Promise<T> {
    const tx = this.txScope.getStore();
    if (tx !== undefined && tx === this.openTx) {
      // Waiting for the mutex here would wait for our own transaction: a deadlock. Fail loudly.
      return Promise.reject(
        new Error("the SQLite store was called directly inside its own transaction; use the tx argument instead"),
      );
    }
    return this.mutex.run(fn);
  }

  private requireDb(): Database.Database {
    if (!this.db) throw new Error("the SQLite store is not open (call open() first, or it was closed)");
    return this.db;
  }

  private statement(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.requireDb().prepare<SqlParam[], SqlRow>(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private allNow(sql: string, params: readonly SqlParam[]): SqlRow[] {
    const statement = this.statement(sql);
    if (statement.reader) return statement.all(...params);
    statement.run(...params);
    return [];
  }

  private runManyNow(sql: string, rows: readonly (readonly SqlParam[])[]): number[] {
    const statement = this.statement(sql);
    if (statement.reader) return rows.map((params) => statement.all(...params).length);
    return rows.map((params) => statement.run(...params).changes);
  }

  private runNow(sql: string, params: readonly SqlParam[]): number {
    const statement = this.statement(sql);
    if (statement.reader) return statement.all(...params).length;
    return statement.run(...params).changes;
  }
}
