/**
 * `orbit backup` / `orbit restore` for SQLite (docs/operations.md § Back up and restore).
 *
 * backup writes `VACUUM INTO` a new file on its own read-only connection: one read transaction, a
 * consistent snapshot while the server keeps running and writing (WAL readers do not block the
 * writer). SQLite's online backup API started over at every write the server made meanwhile, and
 * on a busy 80 MB database never finished.
 * restore checks that the file is an Orbit database this release can open (not one from a newer
 * release) and copies it into place; the server must be stopped, and on its next start it decides
 * every occurrence that came due since the backup by the schedule's catch-up policy, once.
 */
import {
  accessSync,
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  fsyncSync,
  mkdtempSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import Database from "better-sqlite3";
import { OrbitError } from "../../domain/errors.js";
import {
  type AppliedMigration,
  appliedMigration,
  loadMigrations,
  MIGRATIONS_TABLE,
  pendingMigrations,
} from "../migrations.js";
import { makeDirs } from "./make-dirs.js";

export interface BackupReport {
  file: string;
  pages: number;
  /** The newest migration in the copy (the release it needs at least). */
  migration: number;
}

/** The migrations applied in an Orbit SQLite file; refuses a file that is not one. */
function appliedMigrations(db: Database.Database, file: string): AppliedMigration[] {
  try {
    return db.prepare<[], Record<string, unknown>>(`SELECT * FROM ${MIGRATIONS_TABLE}`).all().map(appliedMigration);
  } catch (err) {
    throw unreadable(file, err);
  }
}

/**
 * What SQLite could not read in `file`, said as what it is: a SQLite file with damaged pages (cut
 * short, overwritten) is damaged, a file that is not SQLite at all, or SQLite without Orbit's tables,
 * is not an Orbit database (a backup cut to half was "not an Orbit database: database disk image is
 * malformed", a tester).
 */
function unreadable(file: string, err: unknown): OrbitError {
  const code = String((err as { code?: unknown }).code);
  if (code.startsWith("SQLITE_CORRUPT") || (code.startsWith("SQLITE_NOTADB") && startsAsSqlite(file)))
    return damaged(file, (err as Error).message);
  return new OrbitError("INVALID_ARGUMENT", `${file} is not an Orbit database: ${(err as Error).message}`);
}

/** Whether `file` begins as every SQLite database does; SQLite says "file is not a database" for both. */
function startsAsSqlite(file: string): boolean {
  const head = Buffer.alloc(SQLITE_MAGIC.length);
  try {
    const fd = openSync(file, "r");
    try {
      readSync(fd, head, 0, head.length, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
  return head.equals(SQLITE_MAGIC);
}
const SQLITE_MAGIC = Buffer.from("SQLite format 3\0", "latin1");

/** A read-only connection to `file`, and what closes it. */
interface Reading {
  db: Database.Database;
  close(): void;
}

/**
 * Opens `file` read-only. A database in WAL mode (every Orbit database, and every backup of one)
 * needs its `-shm` beside it even to be read, and SQLite creates it when it is missing: in a
 * folder this process may not write (a read-only mount, another user's backups) that fails with
 * SQLITE_READONLY or SQLITE_CANTOPEN on the first read. Such a file is read from a private copy of
 * it and its `-wal` (what a crashed server left there is part of the database) in a temporary
 * folder, removed on close.
 */
function openReading(file: string): Reading {
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw cannotRead(file, err);
  }
  try {
    db.prepare("SELECT count(*) FROM sqlite_master").get();
    return { db, close: () => db.close() };
  } catch (err) {
    db.close();
    const code = String((err as { code?: unknown }).code ?? "");
    if (!code.startsWith("SQLITE_READONLY") && !code.startsWith("SQLITE_CANTOPEN")) throw unreadable(file, err);
    if (!readable(file)) throw cannotRead(file, err);
  }
  const dir = mkdtempSync(join(tmpdir(), "orbit-read-"));
  const copy = join(dir, basename(file));
  try {
    copyFileSync(file, copy);
    if (existsSync(`${file}-wal`)) copyFileSync(`${file}-wal`, `${copy}-wal`);
    const db = new Database(copy, { fileMustExist: true });
    return {
      db,
      close: () => {
        db.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    const path = (err as { path?: unknown }).path;
    throw cannotRead(typeof path === "string" ? path : file, err);
  }
}

/**
 * A file or folder this process could not write, in one line, not with a stack: its folder's mode,
 * a read-only mount (it was "permission denied" or the raw "EROFS: read-only file system, mkdir …"
 * by case, a tester), or what else stopped it (a full disk). `folder` is where it was writing.
 */
function cannotWrite(path: string, err: unknown, folder = dirname(path)): OrbitError {
  if (err instanceof OrbitError) return err;
  return new OrbitError("INVALID_ARGUMENT", `cannot write ${path}: ${refusal(folder, err) ?? (err as Error).message}`);
}

/** Why `folder` refused a write, when it was the folder: SQLite says only "unable to open database file". */
function refusal(folder: string, err: unknown): string | null {
  const code = String((err as { code?: unknown }).code);
  if (code === "EROFS") return READ_ONLY;
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (!code.startsWith("SQLITE_CANTOPEN") && !code.startsWith("SQLITE_READONLY")) return null;
  try {
    accessSync(folder, constants.W_OK);
    return null;
  } catch (denied) {
    const why = (denied as { code?: unknown }).code;
    return why === "EROFS" ? READ_ONLY : why === "ENOENT" ? null : "permission denied";
  }
}
const READ_ONLY = "read-only file system";

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Refuses a file that is not there, a folder (`what` says what was expected), or a file this process
 * may not even look at (in a folder it may not enter: it was "no backup file at …", a tester).
 */
function mustExist(file: string, missing: () => OrbitError, what: string): void {
  let folder: boolean;
  try {
    folder = statSync(file).isDirectory();
  } catch (err) {
    if ((err as { code?: unknown }).code === "ENOENT") throw missing();
    throw cannotRead(file, err);
  }
  // SQLite opens a folder and then fails to read it: "cannot read …: disk I/O error" (a tester).
  if (folder) throw new OrbitError("INVALID_ARGUMENT", `${file} is a folder, not ${what}`);
}

/**
 * Renames `partial` over `file`. The old database's -wal and -shm must not meet the new file (SQLite
 * would apply the old -wal to it): they are moved aside first, and back if the rename fails (they
 * were deleted first, and a failed rename left the old database without its -wal), then removed.
 */
function install(partial: string, file: string): void {
  const aside: [string, string][] = [];
  try {
    for (const stale of [`${file}-wal`, `${file}-shm`]) {
      if (!existsSync(stale)) continue;
      renameSync(stale, `${stale}.before-restore`);
      aside.push([`${stale}.before-restore`, stale]);
    }
    renameSync(partial, file);
  } catch (err) {
    for (const [moved, back] of aside) {
      try {
        renameSync(moved, back);
      } catch {}
    }
    throw cannotWrite(file, err);
  }
  for (const [moved] of aside) rmSync(moved, { force: true });
}

/** Whether this process may use `path` so (`constants.R_OK`, `W_OK`). */
function may(path: string, mode: number): boolean {
  try {
    accessSync(path, mode);
    return true;
  } catch {
    return false;
  }
}
const readable = (file: string): boolean => may(file, constants.R_OK);

/** A file this process may not read (its mode, its folder's), said in one line, not with a stack. */
function cannotRead(file: string, err: unknown): OrbitError {
  const why =
    (err as { code?: unknown }).code === "EACCES" || !readable(file) ? "permission denied" : (err as Error).message;
  return new OrbitError("INVALID_ARGUMENT", `cannot read ${file}: ${why}`);
}

/**
 * Copies the database at `source` to `destination`, a new file. The copy is written beside it as
 * `<destination>.partial`, checked as restore will check it, then renamed: a backup killed or failing
 * part-way never leaves a file under the name (a kill -9 left an empty one and its -journal, which the
 * next night's run called existing and restore "not an Orbit database", a tester). What a killed one
 * left is removed by the next backup to the same name; what a failing one wrote, at once.
 */
export async function backupSqlite(source: string, destination: string): Promise<BackupReport> {
  mustExist(source, () => new OrbitError("NOT_FOUND", `no Orbit database at ${source}`), "an Orbit database");
  if (isFolder(destination))
    throw new OrbitError("INVALID_ARGUMENT", `${destination} is a folder; give the backup's file name in it`);
  if (existsSync(destination)) throw new OrbitError("ALREADY_EXISTS", `${destination} exists; give a new file name`);
  const partial = `${destination}.partial`;
  const reading = openReading(source);
  const db = reading.db;
  try {
    db.pragma("busy_timeout = 5000");
    const applied = appliedMigrations(db, source);
    try {
      makeDirs(dirname(destination));
      removeTemporary(partial);
      db.prepare("VACUUM INTO ?").run(partial);
      syncFile(partial);
    } catch (err) {
      if (String((err as { code?: unknown }).code).startsWith("SQLITE_CORRUPT"))
        throw damaged(source, (err as Error).message);
      throw cannotWrite(destination, err);
    }
    const pages = checkCopy(partial, source, destination);
    if (existsSync(destination)) {
      throw new OrbitError(
        "ALREADY_EXISTS",
        `${destination} was made by something else meanwhile; give a new file name`,
      );
    }
    try {
      renameSync(partial, destination);
    } catch (err) {
      throw cannotWrite(destination, err);
    }
    return { file: destination, pages, migration: Math.max(0, ...applied.map((m) => m.version)) };
  } catch (err) {
    removeTemporary(partial);
    throw err;
  } finally {
    reading.close();
  }
}

/**
 * Puts a file written by `VACUUM INTO` on the disk before it is renamed into place: SQLite does not
 * sync what it writes so, and a power cut after the rename could leave a half-written file under
 * the name.
 */
function syncFile(file: string): void {
  const fd = openSync(file, "r+");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Checks a backup's copy as restore will check it (one it would refuse is not kept); its pages. */
function checkCopy(copy: string, source: string, destination: string): number {
  let db: Database.Database;
  try {
    db = new Database(copy, { fileMustExist: true });
  } catch (err) {
    throw cannotWrite(destination, err);
  }
  try {
    // VACUUM INTO rebuilt every table and index from the source's rows: what is damaged in the
    // copy was damaged in the source, or by the disk it was written to.
    mustBeIntact(db, source);
    return db.pragma("page_count", { simple: true }) as number;
  } finally {
    db.close();
  }
}

/**
 * Removes a file written under a temporary name, with what SQLite may have left beside it; never
 * throws (it runs on the way out of a failure, whose message matters more).
 */
function removeTemporary(file: string): void {
  for (const f of [file, `${file}-journal`, `${file}-wal`, `${file}-shm`]) {
    try {
      rmSync(f, { force: true });
    } catch {}
  }
}

/**
 * Refuses a damaged database with the first of what SQLite's `integrity_check` found. Not
 * `quick_check`: it does not compare indexes with their tables, and a backup with 8 bytes
 * overwritten, "row 1493 missing from index orbit_executions_workflow_ended", was restored and
 * served (a tester). It reads every page and index: 0.45 s for 80 MB, measured (docs/operations.md).
 */
function mustBeIntact(db: Database.Database, file: string): void {
  let found: string[];
  try {
    found = db
      .prepare<[], { integrity_check: string }>("PRAGMA integrity_check(3)")
      .all()
      .map((r) => r.integrity_check);
  } catch (err) {
    // Some damage stops the check itself ("database disk image is malformed").
    if (!String((err as { code?: unknown }).code).startsWith("SQLITE_CORRUPT")) throw err;
    found = [(err as Error).message];
  }
  // SQLite's report puts a line break after its heading: one line for a terminal.
  if (found.join() !== "ok") throw damaged(file, found.join("; ").replace(/\s*\n\s*/g, " "));
}

const damaged = (file: string, found: string): OrbitError =>
  new OrbitError("INVALID_ARGUMENT", `${file} is damaged: ${found}`);

/**
 * Refuses a database that a running server holds: every WAL connection keeps a shared lock on the
 * file, so an exclusive lock is refused (SQLITE_BUSY) while one is open. Replacing it then would
 * delete the live -wal and leave the server writing to an unlinked file, losing what it acknowledges
 * (docs/operations.md § Back up and restore: stop the server first). A file SQLite cannot lock for
 * another reason (not a database) is left to be replaced.
 */
function refuseIfOpen(file: string): void {
  let db: Database.Database;
  try {
    db = new Database(file, { fileMustExist: true, timeout: 0 });
  } catch {
    return;
  }
  try {
    db.pragma("locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
    db.exec("ROLLBACK");
  } catch (err) {
    if ((err as { code?: unknown }).code === "SQLITE_BUSY") {
      throw new OrbitError("CONFLICT", `${file} is open in a running Orbit server; stop the server, then restore`);
    }
  } finally {
    db.close();
  }
}

/**
 * Puts a backup in place as `<dataDir>/orbit.db` (the server must be stopped). Refuses a file that is
 * not an Orbit database or comes from a newer release, and an existing database unless `force`.
 */
export function restoreSqlite(backup: string, dataDir: string, force = false): { file: string; migration: number } {
  mustExist(backup, () => new OrbitError("NOT_FOUND", `no backup file at ${backup}`), "a backup file");
  const file = join(dataDir, "orbit.db");
  const partial = `${file}.restoring`;
  const reading = openReading(backup);
  const check = reading.db;
  let applied: AppliedMigration[];
  try {
    applied = appliedMigrations(check, backup);
    mustBeIntact(check, backup);
    try {
      pendingMigrations(loadMigrations("sqlite"), applied, "sqlite");
    } catch (err) {
      throw new OrbitError("INVALID_ARGUMENT", `cannot restore ${backup}: ${(err as Error).message}`);
    }
    if (existsSync(file) && !force) {
      throw new OrbitError(
        "ALREADY_EXISTS",
        `${file} exists; stop the server and add --force to replace it with ${backup}`,
      );
    }
    if (existsSync(file)) refuseIfOpen(file);
    try {
      makeDirs(dataDir);
    } catch (err) {
      throw cannotWrite(dataDir, err, dataDir);
    }
    // Written next to it, then renamed: a crash half-way never leaves a half-written orbit.db. What
    // was checked is what is written, through this connection: the file with its -wal, if a crashed
    // server left one (a copy of the file alone put an empty or older database in place and said
    // "restored", a tester), as one file of its own.
    // A failed write leaves nothing (a full disk left a 0-byte orbit.db.restoring, a tester).
    try {
      removeTemporary(partial);
      check.prepare("VACUUM INTO ?").run(partial);
      syncFile(partial);
    } catch (err) {
      removeTemporary(partial);
      throw cannotWrite(dataDir, err, dataDir);
    }
  } finally {
    reading.close();
  }
  try {
    install(partial, file);
  } catch (err) {
    removeTemporary(partial);
    throw err;
  }
  return { file, migration: Math.max(0, ...applied.map((m) => m.version)) };
}
