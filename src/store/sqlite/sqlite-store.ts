/**
 * The embedded store: one SQLite file in WAL mode, one connection, every operation serialised
 * through an async mutex (see sqlite-connection.ts). The default storage of `orbit server`.
 */
import { statSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import type { AppliedMigration, MigrationLog, MigrationsUnderWay } from "../migrations.js";
import { SqlOps } from "../sql/sql-ops.js";
import { TransactionEnds } from "../sql/transaction-ends.js";
import type { Store, StoreOps, TransactionOptions } from "../store.js";
import { sqliteDialect } from "./dialect.js";
import { FileIdentity, FileWatch } from "./file-identity.js";
import { makeDirs, unwritableFolder } from "./make-dirs.js";
import { migrateSqlite } from "./migrate.js";
import { SQLITE_BUSY_SLICE_MS, SqliteConnection } from "./sqlite-connection.js";

export interface SqliteStoreOptions {
  /** Folder holding `orbit.db`; created (with parents) if missing. Default `./.orbit`. */
  dataDir?: string;
  /** The database file itself, overriding `dataDir` (`:memory:` for a throwaway store). Default unset. */
  filename?: string;
  /**
   * How long a write waits for another process's lock on the file before failing (503, "locked by
   * another process"), in ms. Waited between tries, off the event loop (SqliteConnection.attach).
   * Default 5000.
   */
  busyTimeoutMs?: number;
  /** Told before pending migrations are applied to an existing file (the server logs it). */
  onMigrating?: (underWay: MigrationsUnderWay) => void;
  /**
   * `full` (default): every commit is fsynced and survives power loss. `normal`: commits survive a
   * process crash but the last ones may be lost on power loss (WAL is never corrupted); faster.
   */
  synchronous?: "full" | "normal";
  /**
   * Most memory SQLite's page cache may hold, in MB (`PRAGMA cache_size`): it fills up to this once
   * the database is larger, and stays in the process's RSS. A larger cache saves re-reading pages
   * of the random-key B-trees from the OS's file cache on big databases (64 MB: about 13 % less CPU
   * for the fire's execution inserts than 2–16 MB on a 160 MB database; docs/operations.md § Sizing).
   * Default 4.
   */
  cacheMb?: number;
}

/** SQLite's page cache by default, MB (docs/operations.md § Sizing). */
export const DEFAULT_SQLITE_CACHE_MB = 4;

/** The size a WAL grown larger is truncated back to once a checkpoint has emptied it (docs/storage.md § SQLite). */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * How many names the file has (1 for `:memory:` or a file not there). A second server on a hard link
 * of the file, in another folder (a file bind-mounted into two containers is the same), passed the
 * data folder's lock (dir-lock.ts) and ran beside the first: each fired every occurrence into its
 * own WAL, and the file was found damaged after (a tester, 2 of 3 runs).
 */
function hardLinks(filename: string): number {
  try {
    return statSync(filename).nlink;
  } catch {
    return 1;
  }
}

export class SqliteStore extends SqlOps implements Store {
  readonly dialect = "sqlite" as const;
  private readonly connection: SqliteConnection;
  private state: "new" | "open" | "closed" = "new";
  /** After open(): a newer release's additive migrations the file has (docs/operations.md § Upgrade). */
  newerMigrations: readonly AppliedMigration[] = [];
  /** After open(): the migrations it applied (the server logs them). */
  migrationLog: MigrationLog = { applied: [], created: false };

  /** How long a write waits for another process's lock (SqliteStoreOptions.busyTimeoutMs). */
  private get lockWaitMs(): number {
    return Math.max(0, Math.trunc(this.options.busyTimeoutMs ?? 5000));
  }

  constructor(private readonly options: SqliteStoreOptions = {}) {
    const connection = new SqliteConnection();
    super(connection.locked, sqliteDialect);
    this.connection = connection;
  }

  /** The database file path this store opens. */
  get filename(): string {
    return this.options.filename ?? join(this.options.dataDir ?? "./.orbit", "orbit.db");
  }

  async open(): Promise<void> {
    if (this.state !== "new") throw new Error(`the SQLite store cannot be opened: it is ${this.state}`);
    if (this.options.filename === undefined) makeDirs(this.options.dataDir ?? "./.orbit");
    let db: Database.Database;
    try {
      db = new Database(this.filename);
    } catch (err) {
      throw unwritableFolder(dirname(this.filename), err) ?? err;
    }
    const links = hardLinks(this.filename);
    if (links > 1) {
      db.close();
      throw new Error(
        `the database file has ${links} hard links (it is reachable by another path): SQLite keeps the WAL beside the path it was opened by, so a server opening another link writes its own WAL and both fire every occurrence, and the file is damaged; keep one link (docs/storage.md § One server per file)`,
      );
    }
    try {
      // Opening (the WAL switch, the migrations) waits the whole budget for another process's lock
      // inside SQLite: nothing is served yet (it waited 10 ms and a start beside a backup tool
      // failed at once). Once open, the waits are sliced (SqliteConnection.attach).
      db.pragma(`busy_timeout = ${this.lockWaitMs}`);
      // LOWER for every script (dialect.ts lower): SQLite's own folds only ASCII.
      db.function("orbit_lower", { deterministic: true }, (text: unknown) =>
        typeof text === "string" ? text.toLowerCase() : text,
      );
      db.pragma("journal_mode = WAL");
      db.pragma(`synchronous = ${this.options.synchronous === "normal" ? "NORMAL" : "FULL"}`);
      // A negative cache_size is in KiB (SQLite's own default is 2 MB).
      // After a checkpoint empties the WAL, a WAL grown past this (a large transaction, a burst
      // a checkpoint could not keep up with) is truncated back to it instead of keeping its peak size.
      db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
      db.pragma(`cache_size = -${Math.max(1, Math.trunc(this.options.cacheMb ?? DEFAULT_SQLITE_CACHE_MB)) * 1024}`);
      const migrated = migrateSqlite(db, undefined, this.options.onMigrating);
      this.newerMigrations = migrated.newer;
      this.migrationLog = migrated.log;
      refuseReadOnly(db);
      db.pragma(`busy_timeout = ${Math.min(this.lockWaitMs, SQLITE_BUSY_SLICE_MS)}`);
    } catch (error) {
      db.close();
      throw unwritableFolder(dirname(this.filename), error) ?? error;
    }
    const identity = FileIdentity.of(this.filename);
    this.connection.attach(db, this.lockWaitMs, identity === null ? null : new FileWatch(identity));
    this.state = "open";
  }

  /** What the connection runs with: journal mode, synchronous (0 off … 3 extra) and the page cache's size in KiB. */
  async pragmas(): Promise<{ journalMode: string; synchronous: number; cacheKb: number }> {
    const rows = await this.connection.locked.all(
      "SELECT (SELECT journal_mode FROM pragma_journal_mode) AS j, (SELECT synchronous FROM pragma_synchronous) AS s, (SELECT cache_size FROM pragma_cache_size) AS c, (SELECT page_size FROM pragma_page_size) AS p",
      [],
    );
    const row = rows[0] ?? {};
    const cache = Number(row.c);
    return {
      journalMode: String(row.j),
      synchronous: Number(row.s),
      cacheKb: cache < 0 ? -cache : (cache * Number(row.p)) / 1024,
    };
  }

  /**
   * Why the file cannot be written, or null: checked again (with a real write) only after a write
   * failed for want of a writable file, so a ready server costs nothing extra (readiness).
   */
  async writeProblem(): Promise<string | null> {
    if (this.connection.unwritable === null) return null;
    return (await this.connection.probeWrite()) ?? this.connection.unwritable;
  }

  knownWriteProblem(): string | null {
    return this.connection.unwritable;
  }

  async close(): Promise<void> {
    if (this.state === "closed") return;
    this.state = "closed";
    await this.connection.close();
  }

  prioritize(): () => void {
    return this.connection.reserve();
  }

  transaction<T>(fn: (tx: StoreOps) => Promise<T>, options?: TransactionOptions): Promise<T> {
    // A group member's promise settles after its group's COMMIT (or its own rollback), so the end
    // hooks run on what happened to this transaction's writes.
    const ends = this.connection.nested ? null : new TransactionEnds();
    const done = this.connection.transaction(
      (exec) => fn(new SqlOps(exec, sqliteDialect, ends)),
      options?.urgent ?? false,
    );
    return ends === null ? done : ends.settle(done);
  }

  /**
   * Store.readSnapshot: the reads as one member of a transaction group, so that no other request's
   * statement comes between them. The one connection runs one statement at a time, not one reader:
   * a write between a search's page and its counts said "total 9 with 7 rows".
   */
  readSnapshot<T>(fn: (ops: StoreOps) => Promise<T>): Promise<T> {
    return this.transaction(fn);
  }

  /** See Store.atomically: store calls made inside `fn` join its transaction (sqlite-connection.ts). */
  atomically<T>(fn: (tx: StoreOps) => Promise<T>): Promise<T> {
    return this.connection.atomically((exec) => fn(new SqlOps(exec, sqliteDialect)));
  }
}

/**
 * A file SQLite cannot write is opened read-only without a word, and then every write fails: refuse
 * to start instead (docs/operations.md § Start-up). A write, rolled back, tells.
 */
function refuseReadOnly(db: Database.Database): void {
  try {
    db.exec("BEGIN IMMEDIATE");
    try {
      db.pragma(`user_version = ${Number(db.pragma("user_version", { simple: true }))}`);
    } finally {
      db.exec("ROLLBACK");
    }
  } catch (err) {
    // Another process's lock is not a read-only file (startup-error.ts says what to do about it).
    if ((err as { code?: string }).code === "SQLITE_BUSY") throw err;
    throw new Error(
      `the database file is read-only (${(err as { code?: string }).code ?? "error"}: ${(err as Error).message}); Orbit must write to it: check the permissions of the file and its folder, and that the file system is not mounted read-only`,
    );
  }
}
