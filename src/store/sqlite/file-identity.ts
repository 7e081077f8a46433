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
import { dirname } from "node:path";

/** Free space below which a full disk (SQLITE_FULL) is not taken as over by the readiness probe's one-page write. */
export const FULL_DISK_MARGIN_BYTES = 1024 * 1024;

interface Identity {
  readonly path: string;
  readonly dev: number;
  readonly ino: number;
}

function identityOf(path: string): Identity | null {
  const s = statSync(path, { throwIfNoEntry: false });
  return s === undefined ? null : { path, dev: s.dev, ino: s.ino };
}

export class FileIdentity {
  private constructor(
    readonly path: string,
    /** The database file, then its `-wal` file when it had one (WAL mode keeps it while open). */
    private readonly files: readonly Identity[],
  ) {}

  /** The identity of the file at `path` now; null for an in-memory database or a path that cannot be read. */
  static of(path: string): FileIdentity | null {
    if (path === ":memory:" || path === "") return null;
    const db = identityOf(path);
    if (db === null) return null;
    const wal = identityOf(`${path}-wal`);
    return new FileIdentity(path, wal === null ? [db] : [db, wal]);
  }

  /** Why a path no longer names the opened file, or null while each does. One `stat` per file. */
  problem(): string | null {
    for (const f of this.files) {
      let s: ReturnType<typeof statSync>;
      try {
        s = statSync(f.path, { throwIfNoEntry: false });
      } catch {
        s = undefined;
      }
      if (s !== undefined && s.dev === f.dev && s.ino === f.ino) continue;
      const what = s === undefined ? "was deleted" : "was replaced by another file";
      const file = f.path === this.path ? "database file" : "database's write-ahead log";
      return `the ${file} ${f.path} ${what} while the server ran, so a write now would be lost at the next start; writes are refused: stop the server, then restore the file from a backup (orbit restore) or start on an empty one`;
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
