/**
 * What orbit backup and orbit restore leave on disk when they are killed or fail (docs/operations.md
 * § Back up and restore): never a file under the backup's name, and after a failure nothing at all.
 * The full-disk cases run the command in a mount namespace of its own on a small tmpfs (unshare);
 * they are skipped where this machine cannot make one (not root and no user namespaces).
 */
import { execFile, execFileSync } from "node:child_process";
import {
  closeSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  watch,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backupSqlite, restoreSqlite } from "../../src/store/sqlite/backup.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { orbit, ROOT } from "../e2e/harness.js";
import { childArgs } from "../helpers/child.js";

const ENTRY = join(ROOT, "src/cli/entry.ts");

/** unshare's flags that let a child mount a tmpfs of its own here, or null where nothing does. */
const UNSHARE = ((): string[] | null => {
  const flags = process.getuid?.() === 0 ? ["-m"] : ["-rm"];
  try {
    execFileSync("unshare", [...flags, "sh", "-c", `mount -t tmpfs tmpfs ${tmpdir()}`], { stdio: "ignore" });
    return flags;
  } catch {
    return null;
  }
})();

describe("backup and restore files [sqlite]", () => {
  const dir = mkdtempSync(join(tmpdir(), "orbit-backup-files-"));
  const live = join(dir, "live");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  beforeAll(async () => {
    // ~17 MB: a backup takes long enough that a kill lands while it writes.
    const store = new SqliteStore({ dataDir: live });
    await store.open();
    await store.close();
    const db = new Database(join(live, "orbit.db"));
    const insert = db.prepare(
      `INSERT INTO orbit_executions (execution_id, workflow, version, input, status, created_ms)
       VALUES (?, 'OrderProcessing', '1', ?, 'COMPLETED', ?)`,
    );
    db.transaction(() => {
      for (let i = 0; i < 25_000; i++) insert.run(`e-${i}`, JSON.stringify({ order: i, note: "x".repeat(200) }), i);
    })();
    db.close();
  });

  it("a backup killed part-way leaves no file under its name, and the same command then writes it", async () => {
    // kill -9 left an empty file under the name and its -journal: the next run said "exists; give a
    // new file name" and restore "not an Orbit database" (a tester, 9 times out of 9).
    const out = join(dir, "killed");
    mkdirSync(out);
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("ORBIT_")));
    const args = [...childArgs(ENTRY), "backup", join(out, "b.db"), "--data-dir", live];
    const child = execFile(process.execPath, args, { cwd: ROOT, env: clean });
    const ended = new Promise((resolve) => child.once("exit", resolve));
    // Killed at the first file it makes, wherever the copy is.
    const watcher = watch(out, () => child.kill("SIGKILL"));
    expect(await ended).toBe(null);
    watcher.close();
    const left = readdirSync(out);
    expect(left).not.toContain("b.db");
    expect(left.length).toBeGreaterThan(0);
    for (const name of left) expect(name).toMatch(/^b\.db\.partial(-journal)?$/);

    const again = await orbit(["backup", join(out, "b.db"), "--data-dir", live]);
    expect(again.stderr).toBe("");
    expect(again.code).toBe(0);
    expect(readdirSync(out)).toEqual(["b.db"]);
    expect(restoreSqlite(join(out, "b.db"), join(dir, "restored-killed")).migration).toBeGreaterThan(0);
  });

  it.skipIf(UNSHARE === null)(
    "a backup onto a full disk, or a restore into a full folder, says so and leaves nothing behind",
    async () => {
      // The backup left <name>-journal and the restore a 0-byte orbit.db.restoring (a tester).
      const good = join(dir, "good.db");
      await backupSqlite(join(live, "orbit.db"), good);
      const full = join(dir, "full");
      mkdirSync(full);
      const backup = await onTmpfs(full, "size=1m", ["backup", join(full, "b.db"), "--data-dir", live]);
      expect(backup.stderr).toBe(`orbit: cannot write ${join(full, "b.db")}: database or disk is full\n`);
      expect(backup.code).toBe(1);
      expect(backup.left).toEqual([]);
      const restore = await onTmpfs(full, "size=1m", ["restore", good, "--data-dir", full]);
      expect(restore.stderr).toBe(`orbit: cannot write ${full}: database or disk is full\n`);
      expect(restore.code).toBe(1);
      expect(restore.left).toEqual([]);
    },
  );

  it("a backup finishes while the server writes all the time", async () => {
    // SQLite's online backup API started over at every write another connection made meanwhile: on
    // a busy 80 MB database it copied 31,000 steps of 100 pages in 20 s and never finished.
    const writer = new Database(join(live, "orbit.db"));
    writer.pragma("journal_mode = WAL");
    const write = writer.prepare("UPDATE orbit_executions SET attempt = attempt + 1 WHERE execution_id = 'e-1'");
    let settled = false;
    const taking = backupSqlite(join(live, "orbit.db"), join(dir, "busy.db")).finally(() => {
      settled = true;
    });
    // A write between every two turns of the event loop, 2,000 of them, or until the backup is done.
    for (let i = 0; i < 2_000 && !settled; i++) {
      write.run();
      await new Promise((resolve) => setImmediate(resolve));
    }
    const finishedAmidWrites = settled;
    await taking;
    writer.close();
    expect(finishedAmidWrites).toBe(true);
    expect(restoreSqlite(join(dir, "busy.db"), join(dir, "restored-busy")).migration).toBeGreaterThan(0);
  });

  it("a backup of a database with a damaged page says the database is damaged and keeps nothing", async () => {
    const damagedDir = join(dir, "damaged-live");
    mkdirSync(damagedDir);
    const file = join(damagedDir, "orbit.db");
    copyFileSync(join(live, "orbit.db"), file);
    const map = new Database(file);
    const page = map
      .prepare("SELECT pageno FROM dbstat WHERE name = 'orbit_executions' AND pagetype = 'leaf' LIMIT 1 OFFSET 10")
      .pluck()
      .get() as number;
    map.close();
    // A table page's header overwritten: the migrations still read, the copy meets the page.
    const fd = openSync(file, "r+");
    writeSync(fd, Buffer.alloc(8, 0xff), 0, 8, (page - 1) * 4096);
    closeSync(fd);
    const out = join(dir, "from-damaged");
    const r = await orbit(["backup", join(out, "b.db"), "--data-dir", damagedDir]);
    expect(r.stderr).toBe(`orbit: ${file} is damaged: database disk image is malformed\n`);
    expect(r.code).toBe(1);
    expect(readdirSync(out)).toEqual([]);
  });

  it("a folder given as the backup file is called a folder (restore said 'cannot read …: disk I/O error')", async () => {
    const folder = join(dir, "a-folder");
    mkdirSync(folder);
    const restore = await orbit(["restore", folder, "--data-dir", join(dir, "never")]);
    expect(restore.stderr).toBe(`orbit: ${folder} is a folder, not a backup file\n`);
    expect(restore.code).toBe(1);
    const backup = await orbit(["backup", folder, "--data-dir", live]);
    expect(backup.stderr).toBe(`orbit: ${folder} is a folder; give the backup's file name in it\n`);
    expect(backup.code).toBe(1);
    expect(readdirSync(folder)).toEqual([]);
  });

  it.skipIf(UNSHARE === null)(
    "a restore or backup onto a read-only mount says so in one line, whether the folder exists or not",
    async () => {
      // "permission denied" for an existing folder, the raw "EROFS: read-only file system, mkdir …"
      // for a new one (a tester).
      const good = join(dir, "good-ro.db");
      await backupSqlite(join(live, "orbit.db"), good);
      const ro = join(dir, "ro");
      mkdirSync(ro);
      for (const dataDir of [ro, join(ro, "d")]) {
        const restore = await onTmpfs(ro, "ro", ["restore", good, "--data-dir", dataDir]);
        expect(restore.stderr).toBe(`orbit: cannot write ${dataDir}: read-only file system\n`);
        expect(restore.code).toBe(1);
      }
      for (const file of [join(ro, "b.db"), join(ro, "d", "b.db")]) {
        const backup = await onTmpfs(ro, "ro", ["backup", file, "--data-dir", live]);
        expect(backup.stderr).toBe(`orbit: cannot write ${file}: read-only file system\n`);
        expect(backup.code).toBe(1);
      }
    },
  );
});

/**
 * Runs `orbit <args…>` in a mount namespace of its own where `mountpoint` is a new tmpfs mounted
 * with `options`; what it left in `mountpoint` is listed before the namespace goes.
 */
function onTmpfs(
  mountpoint: string,
  options: string,
  args: string[],
): Promise<{ code: number; stderr: string; left: string[] }> {
  const script = `mount -t tmpfs -o "$O" tmpfs "$M" || exit 97; "$@"; rc=$?; echo "--left--"; ls -A "$M"; exit $rc`;
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("ORBIT_")));
  return new Promise((resolve) => {
    execFile(
      "unshare",
      [...(UNSHARE ?? []), "sh", "-c", script, "sh", process.execPath, ...childArgs(ENTRY), ...args],
      { cwd: ROOT, env: { ...clean, M: mountpoint, O: options }, timeout: 30_000 },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === "number" ? err.code : -1;
        const left = (stdout.split("--left--\n")[1] ?? "").split("\n").filter((name) => name !== "");
        resolve({ code, stderr, left });
      },
    );
  });
}
