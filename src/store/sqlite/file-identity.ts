/**
 * What the SQLite connection checks about its file beyond SQLite's own errors (docs/storage.md §
 * The file under a running server):
 *
 * - that the path still names the file it opened, and its `-wal` file too. A file deleted (its
 *   folder removed) or replaced under a running server stays open and writable through its
 *   descriptor, so every write went on being acknowledged into a file that no later start would
 *   open: a restart found nothing (a tester's `rm -rf` of the data dir; /readyz and doctor said
 *   ready throughout). The WAL holds every write since the last checkpoint: with it deleted, a
 *   crash lost them all, the schema included (a tester's `rm orbit.db-wal` and kill -9);
 * - how much room its file system has left, so that a full disk is not taken as over because a
 *   one-page probe fitted into the WAL file's old frames while every fire still failed.
 */
import { statfsSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import type Database from "better-sqlite3";
import { LOCK_FILE } from "./dir-lock.js";

/** Free space below which a full disk (SQLITE_FULL) is not taken as over by the readiness probe's one-page write. */
export const FULL_DISK_MARGIN_BYTES = 1024 * 1024;

type Kind = "database" | "wal" | "lock";

interface Identity {
  readonly kind: Kind;
  readonly path: string;
  readonly dev: number;
  readonly ino: number;
}

function identityOf(kind: Kind, path: string): Identity | null {
  const s = statSync(path, { throwIfNoEntry: false });
  return s === undefined ? null : { kind, path, dev: s.dev, ino: s.ino };
}

/** What each file's loss means, and what to do (`what`: "was deleted" or "was replaced by another file"). */
const LOST: Readonly<Record<Kind, (path: string, what: string) => string>> = {
  database: (path, what) =>
    `the database file ${path} ${what} while the server ran, so a write now would be lost at the next start; writes are refused: stop the server, then restore the file from a backup (orbit restore) or start on an empty one`,
  wal: (path, what) =>
    `the database's write-ahead log ${path} ${what} while the server ran, so a write now would be lost at a crash; writes are refused, and those it held are copied into the database file (a checkpoint): restart the server, which makes a new log (a clean stop keeps every write)`,
  lock: (path, what) =>
    `the data dir's lock file ${path} ${what} while the server ran, so another server may now open this database beside it; writes are refused: stop the other server if one runs, then restart this one`,
};

export class FileIdentity {
  private constructor(
    readonly path: string,
    /** The database file, its `-wal` (WAL mode keeps it while open) and the data dir's lock, those that exist. */
    private readonly files: readonly Identity[],
  ) {}

  /** The identity of the file at `path` now; null for an in-memory database or a path that cannot be read. */
  static of(path: string): FileIdentity | null {
    if (path === ":memory:" || path === "") return null;
    const db = identityOf("database", path);
    if (db === null) return null;
    const wal = identityOf("wal", `${path}-wal`);
    // The data dir's lock (dir-lock.ts), when a server holds one: deleted, it let a second server
    // open the same file beside this one (a tester).
    const lock = identityOf("lock", join(dirname(path), LOCK_FILE));
    return new FileIdentity(
      path,
      [db, wal, lock].filter((f): f is Identity => f !== null),
    );
  }

  /**
   * Why a path no longer names the opened file, or null while each does. `checkpoint`: FileWatch
   * empties the write-ahead log into the opened database file. When the log was deleted, so that its
   * writes are in the file the path still names. When the database file was deleted or replaced, so
   * that the log the path still names no longer holds its pages: at the next start after a crash,
   * SQLite replayed them onto the file put in its place (a backup put back), which then read as the
   * old file's later state or as malformed ("orphan index"; a tester). One `stat` per file.
   */
  problem(): { message: string; checkpoint: boolean } | null {
    for (const f of this.files) {
      let s: ReturnType<typeof statSync>;
      try {
        s = statSync(f.path, { throwIfNoEntry: false });
      } catch {
        s = undefined;
      }
      if (s !== undefined && s.dev === f.dev && s.ino === f.ino) continue;
      const what = s === undefined ? "was deleted" : "was replaced by another file";
      return { message: LOST[f.kind](f.path, what), checkpoint: f.kind !== "lock" };
    }
    return null;
  }

  /** Bytes free to this process on the file's file system, or null when it cannot tell. */
  freeBytes(): number | null {
    try {
      const fs = statfsSync(dirname(this.path));
      return fs.bavail * fs.bsize;
    } catch {
      return null;
    }
  }
}

/**
 * The connection's watch over its file: the first problem seen stays (sticky until a restart, as a
 * damaged file's), and the WAL is checkpointed into the opened database file once no transaction is
 * open: a deleted WAL's writes were acknowledged, and a kill -9 lost them all (298 of 757 in a
 * tester's run), where a clean stop kept them; a replaced database file's old WAL, left under its
 * name, was replayed onto the new file at the next start (see FileIdentity.problem).
 */
export class FileWatch {
  private seen: string | null = null;
  private walToSave = false;

  constructor(readonly identity: FileIdentity) {}

  /** Why a write must be refused, or null; `db` checkpoints a deleted WAL when it is idle. */
  gone(db: Database.Database | null): string | null {
    if (this.seen === null) {
      const problem = this.identity.problem();
      this.seen = problem?.message ?? null;
      this.walToSave = problem?.checkpoint === true;
    }
    if (this.walToSave && db !== null && !db.inTransaction) {
      try {
        db.pragma("wal_checkpoint(TRUNCATE)");
        this.walToSave = false;
      } catch {
        // tried again at the next check
      }
    }
    return this.seen;
  }

  freeBytes(): number | null {
    return this.identity.freeBytes();
  }
}
