/**
 * The SQLite store's single connection: a cache of prepared statements, the async mutex that keeps
 * plain operations from interleaving with an open transaction, and the transaction runner.
 */
import { AsyncLocalStorage, AsyncResource } from "node:async_hooks";
import type Database from "better-sqlite3";
import { OrbitError } from "../../domain/errors.js";
import { Mutex } from "../mutex.js";
import { type ArrayRowBuilder, arrayRowBuilder, objectRows } from "../sql/columns.js";
import type { SqlExecutor, SqlParam, SqlRow } from "../sql/executor.js";
import { type FileWatch, FULL_DISK_MARGIN_BYTES } from "./file-identity.js";

type Statement = Database.Statement<SqlParam[], SqlRow>;

/** A prepared statement; a reader's rows come from better-sqlite3 as arrays (`raw` mode) and are made objects by `row`. */
interface Prepared {
  readonly statement: Statement;
  readonly row: ArrayRowBuilder | null;
}

/** Undoes what ran since the savepoint `name`, and ends it. */
function rollbackTo(db: Database.Database, name: string): void {
  db.exec(`ROLLBACK TO ${name}`);
  db.exec(`RELEASE ${name}`);
}

function ownTransactionError(): Error {
  return new Error("the SQLite store was called directly inside its own transaction; use the tx argument instead");
}

/** Most transactions one commit takes (see SqliteConnection.transaction). */
const GROUP_LIMIT = 16;

interface QueuedTransaction {
  /** The caller's function, run in its async context with `token` as the open transaction. */
  run: (exec: SqlExecutor, token: object) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * SQLite errors that mean the file cannot be written (read-only file, folder or file system, a
 * full disk, an I/O error): the request fails with 503 UNAVAILABLE naming the cause, and the
 * server reports not-ready until a write succeeds again (docs/server.md § Health). A damaged file
 * (SQLITE_CORRUPT, SQLITE_NOTADB) too, with what to do: it was 500 INTERNAL with the cause only in
 * the log, and /readyz and doctor said all was well. A write lock another process holds past the
 * busy timeout (SQLITE_BUSY) too: it is over when that process lets go.
 */
const STORAGE_ERROR = /^SQLITE_(READONLY|IOERR|FULL|CANTOPEN|PERM|CORRUPT|NOTADB|BUSY|LOCKED)/;

/** A lock another connection holds (SQLITE_BUSY, or SQLITE_LOCKED): worth waiting for. */
const isBusy = (err: unknown): boolean =>
  /^SQLITE_(BUSY|LOCKED)/.test(String((err as { code?: unknown } | null)?.code));

/**
 * How long SQLite's own busy handler waits for a lock before a statement fails: short, since
 * better-sqlite3 waits synchronously and blocks the event loop meanwhile. The rest of the wait
 * (SqliteConnection's lockWaitMs) is spent between tries, off the event loop.
 */
export const SQLITE_BUSY_SLICE_MS = 10;

/** How long the readiness probe's write waits for another process's lock. */
const PROBE_LOCK_WAIT_MS = 1000;

function storageError(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && STORAGE_ERROR.test(code) ? `${code}: ${(err as Error).message}` : null;
}

export class SqliteConnection {
  private db: Database.Database | null = null;
  private readonly statements = new Map<string, Prepared>();
  /** Transactions waiting for a group (see {@link transaction}), by lane. */
  private readonly urgentTransactions: QueuedTransaction[] = [];
  private readonly transactions: QueuedTransaction[] = [];
  private readonly mutex = new Mutex();
  /** Marks the async context of the open transaction, to catch the store being used from inside it. */
  private readonly txScope = new AsyncLocalStorage<object>();
  private openTx: object | null = null;
  /** The cause of the last write that failed for want of a writable file; null once one succeeds. */
  private writeFailure: string | null = null;
  /** A damaged file met once: it stays damaged whatever later writes do, until a restart on a restored file. */
  private damaged: string | null = null;
  /** The opened file, to tell when its path stops naming it (file-identity.ts). */
  private file: FileWatch | null = null;
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
    return this.exclusive(() => this.waitingForLocks(fn));
  }

  /** Whether a transaction begun now would be a savepoint of {@link atomically}'s transaction. */
  get nested(): boolean {
    return this.joined() !== undefined;
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
      if (db.inTransaction) rollbackTo(db, name);
      throw this.storageFailure(error);
    }
  }

  /** Why the database cannot be written, or null (readiness). */
  get unwritable(): string | null {
    return this.damaged ?? this.fileGone() ?? this.writeFailure;
  }

  /** Why the path no longer names the opened file (sticky once seen), or null (file-identity.ts). */
  private fileGone(): string | null {
    return this.file?.gone(this.db) ?? null;
  }

  /** Throws UNAVAILABLE when a write would go to a file the path no longer names. */
  private refuseWriteToGoneFile(): void {
    const gone = this.fileGone();
    if (gone !== null) throw new OrbitError("UNAVAILABLE", gone);
  }

  /**
   * Whether the file can be written now: takes the write lock and commits an unchanged
   * `user_version` (a real write, so a file made read-only under the running server is seen).
   * Returns the cause, or null; clears the failure it had recorded when the write succeeds.
   */
  async probeWrite(): Promise<string | null> {
    return this.exclusive(async () => {
      const db = this.requireDb();
      const gone = this.fileGone();
      if (gone !== null) return gone;
      try {
        // Another process's lock is waited for a second at most: readiness answers while it lasts.
        await this.waitingForLocks(() => db.exec("BEGIN IMMEDIATE"), PROBE_LOCK_WAIT_MS);
        try {
          const version = Number(db.pragma("user_version", { simple: true }));
          db.pragma(`user_version = ${version}`);
          db.exec("COMMIT");
        } finally {
          if (db.inTransaction) db.exec("ROLLBACK");
        }
        // One page can fit into the WAL's old frames on a full disk while every fire still fails:
        // a full disk is over when the file system has room again, or a real write commits.
        if (this.stillFull()) return this.writeFailure;
        this.writeFailure = null;
        return null;
      } catch (err) {
        this.writeFailure = storageError(err) ?? (err as Error).message;
        return this.writeFailure;
      }
    });
  }

  /**
   * The failure recorded is a full disk and the file system still has less room than the margin:
   * one page fits into the WAL's old frames on a full disk, so a small write that commits says
   * nothing (file-identity.ts). Read only while such a failure is recorded.
   */
  private stillFull(): boolean {
    if (!this.writeFailure?.startsWith("SQLITE_FULL")) return false;
    const free = this.file?.freeBytes();
    return free != null && free < FULL_DISK_MARGIN_BYTES;
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
    if (/^SQLITE_(CORRUPT|NOTADB)/.test(cause)) {
      this.damaged = cause;
      return new OrbitError(
        "UNAVAILABLE",
        `the SQLite database file is damaged (${cause}); stop the server and restore the file from a backup (orbit backup)`,
      );
    }
    if (/^SQLITE_(BUSY|LOCKED)/.test(cause)) {
      // Another process held the file's write lock past the busy timeout (an `sqlite3` shell, a
      // backup tool): a worker resends its report and the loop fires again, as after a PostgreSQL
      // outage, where a 500 had failed the attempt of a workflow that never failed.
      return new OrbitError(
        "UNAVAILABLE",
        `the SQLite database is locked by another process (${cause}); retry when it lets go (orbit server keeps the file to itself: close other programs using it)`,
      );
    }
    return new OrbitError(
      "UNAVAILABLE",
      `the SQLite database cannot be written (${cause}); check the file, its folder and the disk, then retry`,
    );
  }

  /**
   * `lockWaitMs`: how long a write waits for another process's lock on the file before it fails
   * (503, "locked by another process"). Waited in slices between tries, so the server goes on
   * answering (/healthz, requests that need no write) meanwhile: the whole wait inside SQLite's
   * busy handler froze the event loop for it, again for each statement (a tester's 30 s lock left
   * /healthz unanswered throughout).
   */
  attach(db: Database.Database, lockWaitMs = 5000, file: FileWatch | null = null): void {
    this.db = db;
    this.lockWaitMs = lockWaitMs;
    this.file = file;
  }

  private lockWaitMs = 5000;

  /** Runs `fn` (one statement, or BEGIN), again while another connection holds the lock, up to lockWaitMs. */
  private async waitingForLocks<T>(fn: () => T, waitMs = this.lockWaitMs): Promise<T> {
    const until = performance.now() + Math.min(waitMs, this.lockWaitMs);
    for (let pause = 5; ; pause = Math.min(2 * pause, 100)) {
      try {
        return fn();
      } catch (err) {
        if (!isBusy(err) || performance.now() + pause > until) throw this.storageFailure(err);
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
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

  /**
   * `urgent`: ahead of the queued operations that are not (Mutex, the firing loop's batches).
   *
   * Group commit: the transactions queued when one ends run in the same SQLite transaction, each in
   * its own savepoint, and commit together, at most {@link GROUP_LIMIT} of them: one COMMIT, and with
   * `synchronous=FULL` one fsync of the WAL, for the transactions of concurrent requests
   * (docs/storage.md § Group commit). A transaction's promise settles after the COMMIT,
   * so what a caller is told is durable is on disk; one that fails is rolled back to its savepoint
   * and rejected at once, and the others of its group go on. A COMMIT that fails rejects them all.
   */
  transaction<T>(fn: (exec: SqlExecutor) => Promise<T>, urgent = false): Promise<T> {
    const outer = this.joined();
    if (outer !== undefined) return this.savepoint(outer, fn);
    if (this.insideOwnTransaction()) return Promise.reject(ownTransactionError());
    // Run in the caller's async context (its trace span, its ambient request), whichever group runs
    // it. (Not AsyncResource.bind: on Node 20 it makes two deprecation wrappers per call, 13 µs here.)
    const context = new AsyncResource("orbit.sqlite.transaction");
    return new Promise<T>((resolve, reject) => {
      const queued: QueuedTransaction = {
        run: (exec, token) => context.runInAsyncScope(() => this.txScope.run(token, () => fn(exec))),
        resolve: resolve as (value: unknown) => void,
        reject,
      };
      const lane = urgent ? this.urgentTransactions : this.transactions;
      lane.push(queued);
      // Each transaction queues a group runner on the mutex, in its lane. The runner that gets the lock
      // runs its own transaction first, then those queued meanwhile; a runner whose transaction an
      // earlier group ran ends at once.
      const take = (): QueuedTransaction | undefined => {
        const at = lane.indexOf(queued);
        return at >= 0 ? lane.splice(at, 1)[0] : undefined;
      };
      this.exclusive(() => this.runGroup(take), urgent).catch((error: unknown) => {
        take();
        reject(error);
      });
    });
  }

  /** The next queued transaction a group may take: urgent first; the others only while the firing loop does not reserve the lock. */
  private nextTransaction(): QueuedTransaction | undefined {
    return this.urgentTransactions.shift() ?? (this.mutex.reserved ? undefined : this.transactions.shift());
  }

  /**
   * Runs `own` (taken from its queue, unless a group already ran it), then the transactions queued
   * meanwhile, in one SQLite transaction (see {@link transaction}); holds the mutex.
   */
  private async runGroup(own: () => QueuedTransaction | undefined): Promise<void> {
    const db = this.requireDb();
    let next = own();
    if (next === undefined) return;
    try {
      // IMMEDIATE takes the write lock now rather than at the first write, so two processes on one
      // file cannot both read and then fail to upgrade (SQLITE_BUSY mid-transaction).
      await this.waitingForLocks(() => this.prepared("BEGIN IMMEDIATE").statement.run());
    } catch (error) {
      next.reject(error);
      return;
    }
    const done: { queued: QueuedTransaction; result: unknown }[] = [];
    for (let n = 1; next !== undefined; n++) {
      const member = next;
      const savepoint = `orbit_group_${n}`;
      try {
        this.writing(() => db.exec(`SAVEPOINT ${savepoint}`));
        const result = await this.member(member.run);
        db.exec(`RELEASE ${savepoint}`);
        done.push({ queued: member, result });
      } catch (error) {
        const failure = this.storageFailure(error);
        member.reject(failure);
        if (!this.undo(db, savepoint)) {
          // SQLite rolled the whole transaction back (a full disk, an I/O error): the group is lost.
          for (const d of done) d.queued.reject(failure);
          return;
        }
      }
      if (n >= GROUP_LIMIT) break;
      next = this.nextTransaction();
      if (next === undefined) {
        // One turn of the event loop before committing: requests that arrived while this group ran
        // are read now, and the transactions they start join it (PostgreSQL's commit_delay, one turn long).
        await new Promise<void>((resolve) => setImmediate(resolve));
        next = this.nextTransaction();
      }
    }
    try {
      this.refuseWriteToGoneFile();
      this.writing(() => this.prepared("COMMIT").statement.run());
      // A write committed: the file takes writes again. (A group whose every member failed, its
      // COMMIT of nothing, said so too, and a full disk read as ready between two failed fires.)
      // Not a full disk while the file system has no room: a worker's small writes went on
      // committing into the WAL's old frames while every fire failed, and /readyz and doctor said
      // ready (a tester, 3 of 3 runs).
      if (done.length > 0 && !this.stillFull()) this.writeFailure = null;
    } catch (error) {
      if (db.inTransaction) this.prepared("ROLLBACK").statement.run();
      this.fileGone(); // a WAL found deleted at this COMMIT is saved now that nothing is open
      for (const d of done) d.queued.reject(error);
      return;
    }
    for (const d of done) d.queued.resolve(d.result);
  }

  /** Rolls a failed member back to its savepoint; false when the whole transaction is gone (and then rolled back). */
  private undo(db: Database.Database, savepoint: string): boolean {
    try {
      if (!db.inTransaction) return false;
      rollbackTo(db, savepoint);
      return true;
    } catch {
      if (db.inTransaction) db.exec("ROLLBACK");
      return false;
    }
  }

  /** One transaction of a group: `fn` with an executor that refuses to run once `fn` has ended. */
  private async member(run: QueuedTransaction["run"]): Promise<unknown> {
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
    this.openTx = token;
    try {
      return await run(exec, token);
    } finally {
      active = false;
      this.openTx = null;
    }
  }

  private exclusive<T>(fn: () => T | Promise<T>, urgent = false): Promise<T> {
    // Waiting for the mutex here would wait for our own transaction: a deadlock. Fail loudly.
    if (this.insideOwnTransaction()) return Promise.reject(ownTransactionError());
    return this.mutex.run(fn, urgent);
  }

  private insideOwnTransaction(): boolean {
    const tx = this.txScope.getStore();
    return tx !== undefined && tx === this.openTx;
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
        ? arrayRowBuilder(
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
    if (prepared.row) return objectRows(prepared.row, prepared.statement.all(...params) as unknown as unknown[][]);
    this.autocommitCheck();
    prepared.statement.run(...params);
    return [];
  }

  private runManyNow(sql: string, rows: readonly (readonly SqlParam[])[]): number[] {
    const { statement } = this.prepared(sql);
    if (statement.reader) return rows.map((params) => statement.all(...params).length);
    this.autocommitCheck();
    return rows.map((params) => statement.run(...params).changes);
  }

  private runNow(sql: string, params: readonly SqlParam[]): number {
    const { statement } = this.prepared(sql);
    if (statement.reader) return statement.all(...params).length;
    this.autocommitCheck();
    return statement.run(...params).changes;
  }

  /** A write outside a transaction commits by itself: refused, as a COMMIT is, once the file is gone. */
  private autocommitCheck(): void {
    if (!this.requireDb().inTransaction) this.refuseWriteToGoneFile();
  }
}
