/**
 * The SQLite store's single connection: a cache of prepared statements, the async mutex that keeps
 * plain operations from interleaving with an open transaction, and the transaction runner.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type Database from "better-sqlite3";
import { OrbitError } from "../../domain/errors.js";
import { Mutex } from "../mutex.js";
import type { SqlExecutor, SqlParam, SqlRow } from "../sql/executor.js";

type Statement = Database.Statement<SqlParam[], SqlRow>;

/**
 * A prepared statement; a reader's rows come from better-sqlite3 as arrays (`raw` mode) and are
 * made objects by `row`, a function generated from the statement's column names. better-sqlite3
 * builds an object row in C++, one property at a time; a JavaScript object literal of a fixed shape
 * is about twice as fast for the wide rows that a poll, a batched complete and a fire batch read
 * (100 to 200 rows of 14 to 46 columns; docs/benchmarks.md § End to end, Run I).
 */
interface Prepared {
  readonly statement: Statement;
  readonly row: ((values: unknown[]) => SqlRow) | null;
}

/**
 * `(v) => ({ "a": v[0], "b": v[1] })` for a reader's columns. Where two columns share a name the
 * last one is kept, as better-sqlite3's object rows do. Names go into the code only as JSON string literals.
 */
function rowBuilder(names: readonly string[]): (values: unknown[]) => SqlRow {
  const last = new Map<string, number>();
  for (const [i, name] of names.entries()) last.set(name, i);
  const props = [...last].map(([name, i]) => `${JSON.stringify(name)}: v[${i}]`);
  return new Function(`return function row(v) { return { ${props.join(", ")} }; };`)() as (values: unknown[]) => SqlRow;
}

function rowsOf(prepared: Prepared, params: readonly SqlParam[]): SqlRow[] {
  const values = prepared.statement.all(...params) as unknown as unknown[][];
  const row = prepared.row as (values: unknown[]) => SqlRow;
  const rows = new Array<SqlRow>(values.length);
  for (let i = 0; i < values.length; i++) rows[i] = row(values[i] as unknown[]);
  return rows;
}

/**
 * SQLite errors that mean the file cannot be written (read-only file, folder or file system, a
 * full disk, an I/O error): the request fails with 503 UNAVAILABLE naming the cause, and the
 * server reports not-ready until a write succeeds again (docs/server.md § Health).
 */
const STORAGE_ERROR = /^SQLITE_(READONLY|IOERR|FULL|CANTOPEN|PERM)/;

function storageError(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && STORAGE_ERROR.test(code) ? `${code}: ${(err as Error).message}` : null;
}

export class SqliteConnection {
  private db: Database.Database | null = null;
  private readonly statements = new Map<string, Prepared>();
  private readonly mutex = new Mutex();
  /** Marks the async context of the open transaction, to catch the store being used from inside it. */
  private readonly txScope = new AsyncLocalStorage<object>();
  private openTx: object | null = null;
  /** The cause of the last write that failed for want of a writable file; null once one succeeds. */
  private writeFailure: string | null = null;
  /** The transaction of {@link atomically} that store calls made inside it join. */
  private readonly ambient = new AsyncLocalStorage<{ ended: boolean; savepoints: number }>();

  /**
   * Plain operations: each statement waits for the mutex, so never runs inside someone's
   * transaction; inside {@link atomically} it joins that transaction instead.
   */
  readonly locked: SqlExecutor = {
    all: (sql, params) => this.run(() => this.allNow(sql, params)),
    run: (sql, params) => this.run(() => this.runNow(sql, params)),
    runMany: (sql, rows) => this.run(() => this.runManyNow(sql, rows)),
  };

  private run<T>(fn: () => T): Promise<T> {
    if (this.joined() !== undefined) return Promise.resolve().then(() => this.writing(fn));
    return this.exclusive(() => this.writing(fn));
  }

  private joined(): { ended: boolean; savepoints: number } | undefined {
    const ambient = this.ambient.getStore();
    return ambient !== undefined && !ambient.ended ? ambient : undefined;
  }

  /**
   * Runs `fn` in one transaction that every call on this connection made while it runs joins
   * (plain statements run in it, nested transactions become savepoints): the Idempotency-Key of a
   * request and the request's writes commit together (src/api/idempotency.ts), so a process killed
   * between the two can no longer leave a write without its key. Holds the connection for the
   * whole of `fn`, as any transaction does.
   */
  atomically<T>(fn: (exec: SqlExecutor) => Promise<T>): Promise<T> {
    if (this.joined() !== undefined) return this.transaction(fn);
    return this.transaction(async (exec) => {
      const ambient = { ended: false, savepoints: 0 };
      try {
        return await this.ambient.run(ambient, () => fn(exec));
      } finally {
        ambient.ended = true;
      }
    });
  }

  /** A nested transaction inside {@link atomically}: a savepoint of the joined transaction. */
  private async savepoint<T>(outer: { savepoints: number }, fn: (exec: SqlExecutor) => Promise<T>): Promise<T> {
    const db = this.requireDb();
    const name = `orbit_sp_${++outer.savepoints}`;
    db.exec(`SAVEPOINT ${name}`);
    try {
      const result = await fn(this.locked);
      db.exec(`RELEASE ${name}`);
      return result;
    } catch (error) {
      if (db.inTransaction) {
        db.exec(`ROLLBACK TO ${name}`);
        db.exec(`RELEASE ${name}`);
      }
      throw this.storageFailure(error);
    }
  }

  /** Why the database cannot be written, or null (readiness). */
  get unwritable(): string | null {
    return this.writeFailure;
  }

  /**
   * Whether the file can be written now: takes the write lock and commits an unchanged
   * `user_version` (a real write, so a file made read-only under the running server is seen).
   * Returns the cause, or null; clears the failure it had recorded when the write succeeds.
   */
  async probeWrite(): Promise<string | null> {
    return this.exclusive(() => {
      const db = this.requireDb();
      try {
        db.exec("BEGIN IMMEDIATE");
        try {
          const version = Number(db.pragma("user_version", { simple: true }));
          db.pragma(`user_version = ${version}`);
          db.exec("COMMIT");
        } finally {
          if (db.inTransaction) db.exec("ROLLBACK");
        }
        this.writeFailure = null;
        return null;
      } catch (err) {
        this.writeFailure = storageError(err) ?? (err as Error).message;
        return this.writeFailure;
      }
    });
  }

  /** Runs a statement or a transaction, turning a storage failure into UNAVAILABLE (recorded). */
  private writing<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      throw this.storageFailure(err);
    }
  }

  private storageFailure(err: unknown): unknown {
    const cause = storageError(err);
    if (cause === null) return err;
    this.writeFailure = cause;
    return new OrbitError(
      "UNAVAILABLE",
      `the SQLite database cannot be written (${cause}); check the file, its folder and the disk, then retry`,
    );
  }

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

  /** Only urgent transactions until the returned function is called (Mutex.reserve). */
  reserve(): () => void {
    return this.mutex.reserve();
  }

  /** `urgent`: ahead of the queued operations that are not (Mutex, the firing loop's batches). */
  async transaction<T>(fn: (exec: SqlExecutor) => Promise<T>, urgent = false): Promise<T> {
    const outer = this.joined();
    if (outer !== undefined) return this.savepoint(outer, fn);
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
      this.writing(() => this.prepared("BEGIN IMMEDIATE").statement.run());
      this.openTx = token;
      try {
        const result = await this.txScope.run(token, () => fn(exec));
        this.writing(() => this.prepared("COMMIT").statement.run());
        this.writeFailure = null;
        return result;
      } catch (error) {
        if (db.inTransaction) this.prepared("ROLLBACK").statement.run();
        throw this.storageFailure(error);
      } finally {
        active = false;
        this.openTx = null;
      }
    }, urgent);
  }

  private exclusive<T>(fn: () => T | Promise<T>, urgent = false): Promise<T> {
    const tx = this.txScope.getStore();
    if (tx !== undefined && tx === this.openTx) {
      // Waiting for the mutex here would wait for our own transaction: a deadlock. Fail loudly.
      return Promise.reject(
        new Error("the SQLite store was called directly inside its own transaction; use the tx argument instead"),
      );
    }
    return this.mutex.run(fn, urgent);
  }

  private requireDb(): Database.Database {
    if (!this.db) throw new Error("the SQLite store is not open (call open() first, or it was closed)");
    return this.db;
  }

  private prepared(sql: string): Prepared {
    let prepared = this.statements.get(sql);
    if (!prepared) {
      const statement = this.requireDb().prepare<SqlParam[], SqlRow>(sql);
      // raw(true) is only for readers (better-sqlite3 refuses it on a statement that returns nothing).
      const row = statement.reader
        ? rowBuilder(
            statement
              .raw(true)
              .columns()
              .map((c) => c.name),
          )
        : null;
      prepared = { statement, row };
      this.statements.set(sql, prepared);
    }
    return prepared;
  }

  private allNow(sql: string, params: readonly SqlParam[]): SqlRow[] {
    const prepared = this.prepared(sql);
    if (prepared.row) return rowsOf(prepared, params);
    prepared.statement.run(...params);
    return [];
  }

  private runManyNow(sql: string, rows: readonly (readonly SqlParam[])[]): number[] {
    const { statement } = this.prepared(sql);
    if (statement.reader) return rows.map((params) => statement.all(...params).length);
    return rows.map((params) => statement.run(...params).changes);
  }

  private runNow(sql: string, params: readonly SqlParam[]): number {
    const { statement } = this.prepared(sql);
    if (statement.reader) return statement.all(...params).length;
    return statement.run(...params).changes;
  }
}
