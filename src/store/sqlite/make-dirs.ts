/**
 * `mkdir -p` that always ends: Node 20's `mkdirSync(path, { recursive: true })` never returns for a
 * path under a file system that refuses new entries with ENOENT (`/proc/nope`: it retries the
 * parent for ever), so `orbit server --data-dir /proc/nope` hung at start-up. This walks up to the
 * nearest existing folder and creates each missing one once; a refusal throws, naming the path.
 */
import { accessSync, constants, existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

export function makeDirs(path: string): void {
  const full = resolve(path);
  const missing: string[] = [];
  for (let p = full; ; p = dirname(p)) {
    const stat = statSync(p, { throwIfNoEntry: false });
    if (stat?.isDirectory()) break;
    // A file where a folder should be: mkdir's own EEXIST names it.
    if (stat !== undefined) mkdirSync(p);
    missing.push(p);
    if (dirname(p) === p) break;
  }
  for (const p of missing.reverse()) {
    try {
      mkdirSync(p);
    } catch (err) {
      // Another process made it meanwhile: fine. Anything else names the path (err.message does).
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
}

/**
 * SQLite's "unable to open database file" when the reason is the folder: it must create orbit.db
 * and its -wal and -shm files there (a read-only mount, a folder of another user).
 */
export function unwritableFolder(dir: string, err: unknown): Error | null {
  const code = (err as { code?: string }).code ?? "";
  if (!code.startsWith("SQLITE_CANTOPEN") && !code.startsWith("SQLITE_READONLY")) return null;
  try {
    accessSync(dir, constants.W_OK);
    return null;
  } catch (denied) {
    const readOnly = (denied as { code?: string }).code === "EROFS";
    const why = readOnly ? "the file system is mounted read-only" : "permission denied";
    // An orbit.db already there still needs its -wal and -shm created beside it: "must create
    // orbit.db" read as if the file were missing (a tester).
    const needs = existsSync(join(dir, "orbit.db"))
      ? "Orbit must write orbit.db and create its -wal and -shm files beside it"
      : "Orbit must create orbit.db and its -wal and -shm files there";
    const check = readOnly
      ? "mount the file system read-write, or start on another folder (--data-dir)"
      : "check the folder's permissions (the server's user must be able to write it)";
    return new Error(`the folder ${dir} cannot be written (${why}); ${needs}: ${check}`, { cause: err });
  }
}
