/**
 * Backup and restore on SQLite (docs/operations.md § Back up and restore): a backup taken while the
 * store is open and firing is consistent; after a restore the schedule picks up from the backup's
 * state and every occurrence since is decided once (skip_missed: the missed ones are in the ledger
 * as missed, the next one starts once, firing again starts nothing).
 */
import { execFile } from "node:child_process";
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { backupSqlite, restoreSqlite } from "../../src/store/sqlite/backup.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { orbit, ROOT } from "../e2e/harness.js";
import { childArgs } from "../helpers/child.js";
import { makeHarness, ORDER_INPUT } from "../scheduler/harness.js";

describe("backup and restore [sqlite]", () => {
  const dir = mkdtempSync(join(tmpdir(), "orbit-backup-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("restore then fire: the occurrences since the backup are decided once", async () => {
    const live = new SqliteStore({ dataDir: join(dir, "live") });
    await live.open();
    const h = await makeHarness(live);
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      interval: "10m",
      input: ORDER_INPUT,
    });
    await h.fireAt("2026-11-15T19:00:00.100Z");
    await h.executions.complete("s:2026-11-15T19:00:00Z", {});
    await h.fireAt("2026-11-15T19:10:00.100Z");
    await h.executions.complete("s:2026-11-15T19:10:00Z", {});
    // The backup runs on its own connection while this store stays open and keeps firing.
    const backup = join(dir, "b.db");
    const taking = backupSqlite(live.filename, backup);
    await h.fireAt("2026-11-15T19:20:00.100Z");
    const report = await taking;
    expect(report.migration).toBeGreaterThanOrEqual(6);
    await live.close();

    expect(await refusal(() => restoreSqlite(backup, join(dir, "live")))).toMatch(
      /exists; stop the server and add --force/,
    );
    restoreSqlite(backup, join(dir, "restored"));
    const restored = new SqliteStore({ dataDir: join(dir, "restored") });
    await restored.open();
    const r = await makeHarness(restored, { now: "2026-11-15T19:35:00.000Z" });
    const before = (await restored.listExecutions({ scheduleId: "s", limit: 100 })).map((e) => e.executionId);
    // The backup holds 19:00 and 19:10, and maybe 19:20 if that fire committed before the copy.
    expect(before.slice(-2).sort()).toEqual(["s:2026-11-15T19:00:00Z", "s:2026-11-15T19:10:00Z"]);
    await r.fireAt("2026-11-15T19:35:00.000Z");
    await r.fireAt("2026-11-15T19:35:00.000Z");
    const ledger = await restored.listOccurrences("s", { limit: 100 });
    const missed = ledger.filter((o) => o.kind === "skipped" && o.reason === "missed");
    expect(missed.length).toBeGreaterThan(0);
    // A 19:20 execution in the backup is RUNNING there: end it, or 19:40 is skipped for overlap.
    if (before.includes("s:2026-11-15T19:20:00Z")) await r.executions.complete("s:2026-11-15T19:20:00Z", {});
    await r.fireAt("2026-11-15T19:40:00.100Z");
    await r.fireAt("2026-11-15T19:40:00.200Z");
    const after = (await restored.listExecutions({ scheduleId: "s", limit: 100 })).map((e) => e.executionId);
    expect(after.filter((id) => id === "s:2026-11-15T19:40:00Z")).toHaveLength(1);
    expect(new Set(after).size).toBe(after.length);
    // Every nominal occurrence from 19:00 to 19:40 is accounted for exactly once: started or missed.
    const started = ledger.filter((o) => o.kind === "started").length + 1; // + 19:40, fired after the read
    const missedCount = missed.reduce((n, o) => n + o.count, 0);
    expect(started + missedCount).toBe(5);
    await restored.close();
  });

  it("restore --force refuses a database a running server has open, and replaces it once stopped", async () => {
    // It deleted the live -wal and -shm and renamed a file over the open database: the server kept
    // answering from the unlinked file, and what it acknowledged afterwards was gone at its restart.
    const live = new SqliteStore({ dataDir: join(dir, "busy") });
    await live.open();
    const h = await makeHarness(live);
    await h.scheduler.schedules.create({ schedule_id: "kept", workflow: "OrderProcessing", interval: "1h" });
    const backup = join(dir, "busy-backup.db");
    await backupSqlite(live.filename, backup);
    await h.scheduler.schedules.create({ schedule_id: "after-backup", workflow: "OrderProcessing", interval: "1h" });
    expect(await refusal(() => restoreSqlite(backup, join(dir, "busy"), true))).toBe(
      `${live.filename} is open in a running Orbit server; stop the server, then restore`,
    );
    expect((await live.getSchedule("after-backup"))?.scheduleId).toBe("after-backup");
    await live.close();
    restoreSqlite(backup, join(dir, "busy"), true);
    const restored = new SqliteStore({ dataDir: join(dir, "busy") });
    await restored.open();
    expect(await restored.getSchedule("after-backup")).toBeNull();
    expect((await restored.getSchedule("kept"))?.scheduleId).toBe("kept");
    await restored.close();
  });

  it("backup and restore read a database in a folder they may not write (SQLite could not create its -shm there)", async () => {
    // "not an Orbit database: attempt to write a readonly database", for a good backup on a
    // read-only mount or in another user's folder. Root writes anywhere, so as root the commands
    // run as nobody, for whom the folder is read-only.
    const live = new SqliteStore({ dataDir: join(dir, "ro-live") });
    await live.open();
    const h = await makeHarness(live);
    await h.scheduler.schedules.create({ schedule_id: "kept", workflow: "OrderProcessing", interval: "1h" });
    await live.close();
    const shared = mkdtempSync(join(tmpdir(), "orbit-backup-ro-"));
    try {
      const readOnly = join(shared, "ro");
      mkdirSync(readOnly);
      copyFileSync(live.filename, join(readOnly, "orbit.db"));
      const out = join(shared, "out");
      mkdirSync(out);
      chmodSync(shared, 0o755);
      chmodSync(out, 0o777);
      chmodSync(readOnly, 0o555);
      const asOther = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
      const run = (args: string[]) =>
        new Promise<{ code: number; stderr: string }>((resolve) => {
          execFile(
            process.execPath,
            [...childArgs(join(ROOT, "src/cli/entry.ts")), ...args],
            { cwd: ROOT, timeout: 30_000, ...asOther },
            (err, _stdout, stderr) => resolve({ code: err === null ? 0 : Number(err.code ?? -1), stderr }),
          );
        });
      const backup = await run(["backup", join(out, "b.db"), "--data-dir", readOnly]);
      expect(backup.stderr).toBe("");
      expect(backup.code).toBe(0);
      const restore = await run(["restore", join(readOnly, "orbit.db"), "--data-dir", join(out, "restored")]);
      expect(restore.stderr).toBe("");
      expect(restore.code).toBe(0);
      // Where it may not write: one line each, not "unexpected error" and a stack (a tester).
      const noBackup = await run(["backup", join(readOnly, "b.db"), "--data-dir", readOnly]);
      expect(noBackup.stderr).toBe(`orbit: cannot write ${join(readOnly, "b.db")}: permission denied\n`);
      expect(noBackup.code).toBe(1);
      const noRestore = await run(["restore", join(out, "b.db"), "--data-dir", join(readOnly, "d")]);
      expect(noRestore.stderr).toBe(`orbit: cannot write ${join(readOnly, "d")}: permission denied\n`);
      expect(noRestore.code).toBe(1);
      for (const file of [join(out, "b.db"), join(out, "restored", "orbit.db")]) {
        const copy = new SqliteStore({ filename: file });
        await copy.open();
        expect((await copy.getSchedule("kept"))?.scheduleId).toBe("kept");
        await copy.close();
      }
    } finally {
      rmSync(shared, { recursive: true, force: true });
    }
  });

  it("restore of a crashed server's database puts in place what its -wal holds too, and says so for a file it cannot read", async () => {
    // The check read the file with its -wal, the copy took the file alone: an empty or older
    // database was put in place, and the command said "restored" (a tester, after kill -9).
    const live = new SqliteStore({ dataDir: join(dir, "crashed") });
    await live.open();
    const h = await makeHarness(live);
    await h.scheduler.schedules.create({ schedule_id: "in-the-wal", workflow: "OrderProcessing", interval: "1h" });
    // As kill -9 leaves them: the file and its -wal, not checkpointed (the store is still open).
    const crashed = join(dir, "crashed-copy");
    mkdirSync(crashed);
    copyFileSync(live.filename, join(crashed, "orbit.db"));
    copyFileSync(`${live.filename}-wal`, join(crashed, "orbit.db-wal"));
    await live.close();
    restoreSqlite(join(crashed, "orbit.db"), join(dir, "from-crashed"));
    const restored = new SqliteStore({ dataDir: join(dir, "from-crashed") });
    await restored.open();
    expect((await restored.getSchedule("in-the-wal"))?.scheduleId).toBe("in-the-wal");
    await restored.close();
    expect(existsSync(join(dir, "from-crashed", "orbit.db.restoring"))).toBe(false);
  });

  it("orbit backup refuses PostgreSQL with the tools to use; orbit restore refuses a file that is not Orbit's", async () => {
    const pg = await orbit(["backup", join(dir, "x.db"), "--database", "postgres://u@127.0.0.1/db"]);
    expect(pg.code).toBe(1);
    expect(pg.stderr).toMatch(/for PostgreSQL use pg_dump\/pg_restore or point-in-time recovery/);
    const junk = join(dir, "junk.db");
    const Database = (await import("better-sqlite3")).default;
    new Database(junk).exec("CREATE TABLE t (x)");
    const r = await orbit(["restore", junk, "--data-dir", join(dir, "never")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/is not an Orbit database/);
    expect(existsSync(join(dir, "never", "orbit.db"))).toBe(false);
    // A backup of a folder without a database says where the server's is named.
    const none = await orbit(["backup", join(dir, "none.db"), "--data-dir", join(dir, "never")]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(
      `no Orbit database at ${join(dir, "never", "orbit.db")}; --data-dir must be the folder`,
    );
    expect(existsSync(join(dir, "none.db"))).toBe(false);
  });

  it("orbit restore refuses a damaged backup on one line (the integrity report's newline was printed as \\u000a)", async () => {
    const made = new SqliteStore({ dataDir: join(dir, "to-damage") });
    await made.open();
    const h = await makeHarness(made);
    for (let i = 0; i < 200; i++)
      await h.scheduler.schedules.create({
        schedule_id: `s-${i}`,
        workflow: "OrderProcessing",
        interval: "1h",
        input: ORDER_INPUT,
      });
    await made.close();
    const file = join(dir, "to-damage", "orbit.db");
    const Database = (await import("better-sqlite3")).default;
    const map = new Database(file);
    map.pragma("wal_checkpoint(TRUNCATE)");
    const leaves = map
      .prepare("SELECT pageno FROM dbstat WHERE name = 'orbit_schedules_due' AND pagetype = 'leaf' ORDER BY pageno")
      .all() as { pageno: number }[];
    map.close();
    // An index leaf's cell count made wrong: the file opens and reads, quick_check finds it.
    const fd = openSync(file, "r+");
    writeSync(fd, Buffer.from([0x00, 0x01]), 0, 2, ((leaves[0]?.pageno ?? 2) - 1) * 4096 + 3);
    closeSync(fd);
    const r = await orbit(["restore", file, "--data-dir", join(dir, "never-2")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/is damaged: /);
    expect(r.stderr).not.toContain("\\u000a");
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(existsSync(join(dir, "never-2", "orbit.db"))).toBe(false);
  });

  it("orbit restore refuses a backup whose index no longer matches its table (quick_check said ok)", async () => {
    // 8 bytes overwritten in a table's page: "row 1493 missing from index orbit_executions_workflow_ended",
    // which only integrity_check compares; restore said "restored" and a server served it (a tester).
    const made = new SqliteStore({ dataDir: join(dir, "index-damage") });
    await made.open();
    const h = await makeHarness(made);
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "10m" });
    await h.fireAt("2026-11-15T19:00:00.100Z");
    await made.close();
    const file = join(dir, "index-damage", "orbit.db");
    const Database = (await import("better-sqlite3")).default;
    const map = new Database(file);
    map.pragma("wal_checkpoint(TRUNCATE)");
    const pages = map
      .prepare("SELECT pageno FROM dbstat WHERE name = 'orbit_executions' AND pagetype = 'leaf'")
      .all() as { pageno: number }[];
    map.close();
    // The execution id in the table's row changed, one byte, as the index still has it.
    const id = Buffer.from("s:2026-11-15T19:00:00Z");
    const fd = openSync(file, "r+");
    let at = -1;
    for (const { pageno } of pages) {
      const page = Buffer.alloc(4096);
      readSync(fd, page, 0, 4096, (pageno - 1) * 4096);
      if (page.indexOf(id) >= 0) at = (pageno - 1) * 4096 + page.indexOf(id);
    }
    expect(at).toBeGreaterThan(0);
    writeSync(fd, Buffer.from("t"), 0, 1, at);
    closeSync(fd);
    const check = new Database(file, { readonly: true });
    expect(check.pragma("quick_check", { simple: true })).toBe("ok");
    check.close();
    expect(await refusal(() => restoreSqlite(file, join(dir, "never-3")))).toMatch(
      new RegExp(`^${file} is damaged: row 1 missing from index orbit_executions_\\w+; `),
    );
    expect(existsSync(join(dir, "never-3", "orbit.db"))).toBe(false);
  });

  it("orbit restore calls a cut-short or overwritten SQLite file damaged, and a file that is not SQLite not an Orbit database", async () => {
    // A backup cut to half was "not an Orbit database: database disk image is malformed" (a tester).
    const made = new SqliteStore({ dataDir: join(dir, "to-cut") });
    await made.open();
    const h = await makeHarness(made);
    for (let i = 0; i < 100; i++)
      await h.scheduler.schedules.create({ schedule_id: `s-${i}`, workflow: "OrderProcessing", interval: "1h" });
    await made.close();
    const whole = readFileSync(join(dir, "to-cut", "orbit.db"));
    const cases: [string, Buffer, RegExp][] = [
      ["half.db", whole.subarray(0, whole.length / 2), / is damaged: database disk image is malformed$/],
      // The page size in the header made 3: SQLite says "file is not a database" of a file that is one.
      [
        "bad-header.db",
        Buffer.concat([whole.subarray(0, 16), Buffer.from([0, 3]), whole.subarray(18)]),
        / is damaged: /,
      ],
      [
        "text.db",
        Buffer.from("not a database at all\n".repeat(300)),
        / is not an Orbit database: file is not a database$/,
      ],
    ];
    for (const [name, bytes, said] of cases) {
      writeFileSync(join(dir, name), bytes);
      expect(await refusal(() => restoreSqlite(join(dir, name), join(dir, "never-4")))).toMatch(said);
    }
    expect(existsSync(join(dir, "never-4", "orbit.db"))).toBe(false);
  });
});

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("expected a refusal");
}
