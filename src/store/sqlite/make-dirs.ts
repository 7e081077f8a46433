/**
 * `mkdir -p` that always ends: Node 20's `mkdirSync(path, { recursive: true })` never returns for a
 * path under a file system that refuses new entries with ENOENT (`/proc/nope`: it retries the
 * parent for ever), so `orbit server --data-dir /proc/nope` hung at start-up. This walks up to the
 * nearest existing folder and creates each missing one once; a refusal throws, naming the path.
 */
import { mkdirSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";

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
