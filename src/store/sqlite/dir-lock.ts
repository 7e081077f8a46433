/**
 * One server per SQLite data folder (docs/operations.md § Configure): `orbit server` holds an exclusive
 * lock on `<data-dir>/orbit.lock` while it runs. A second server on the same folder used to start
 * and fire beside the first, though SQLite is one process's store (its loop, leases and webhooks
 * assume no other process writes the file). The lock is SQLite's own file lock (a small database in
 * exclusive locking mode), so the operating system drops it when the process dies, even by kill -9:
 * a restarted server never finds a stale lock.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { makeDirs, unwritableFolder } from "./make-dirs.js";

export const LOCK_FILE = "orbit.lock";

/** Takes the folder's lock or throws, naming the folder; returns what releases it. */
export function lockDataDir(dataDir: string): () => void {
  makeDirs(dataDir);
  const path = join(dataDir, LOCK_FILE);
  let db: Database.Database;
  try {
    db = new Database(path);
  } catch (err) {
    throw unwritableFolder(dataDir, err) ?? err;
  }
  try {
    db.pragma("busy_timeout = 0");
    db.pragma("locking_mode = EXCLUSIVE");
    // In exclusive locking mode the lock a transaction takes is kept after it ends.
    db.exec("BEGIN EXCLUSIVE");
    db.exec("COMMIT");
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === "SQLITE_BUSY") {
      throw new Error(
        `another Orbit server is using ${dataDir} (${path} is locked): stop it, or give this server another --data-dir`,
      );
    }
    throw err;
  }
  return () => db.close();
}
