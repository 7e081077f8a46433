/**
 * A full disk is over when the file system has room again, or a real write commits: not when the
 * readiness probe's one page fits into the WAL's old frames while every fire still fails (a
 * tester's /readyz and doctor said ready half the time on a full disk; src/store/sqlite/file-identity.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, expect, it, vi } from "vitest";
import { FileIdentity, FileWatch } from "../../src/store/sqlite/file-identity.js";
import { SqliteConnection } from "../../src/store/sqlite/sqlite-connection.js";

const dir = mkdtempSync(join(tmpdir(), "orbit-full-probe-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("keeps a full disk's failure through a probe or a write that succeeds while the file system has no room, clears it once it has", async () => {
  const file = join(dir, "orbit.db");
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  const identity = FileIdentity.of(file);
  expect(identity).not.toBeNull();
  const free = vi.spyOn(identity!, "freeBytes").mockReturnValue(4096);
  const connection = new SqliteConnection();
  connection.attach(db, 5000, new FileWatch(identity!));
  const full = Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
  await expect(
    connection.transaction(async () => {
      throw full;
    }),
  ).rejects.toMatchObject({ code: "UNAVAILABLE" });
  expect(connection.unwritable).toBe("SQLITE_FULL: database or disk is full");
  // The probe's write succeeds here (this disk has room), but the file system says it has none.
  expect(await connection.probeWrite()).toBe("SQLITE_FULL: database or disk is full");
  expect(await connection.probeWrite()).toBe("SQLITE_FULL: database or disk is full");
  // Nor does another write that commits (a worker's report into the WAL's old frames, while every
  // fire fails): /readyz and doctor said ready (a tester's full disk, 3 of 3 runs).
  await connection.transaction((exec) => exec.run("CREATE TABLE IF NOT EXISTS t (x INTEGER)", []));
  expect(connection.unwritable).toBe("SQLITE_FULL: database or disk is full");
  free.mockReturnValue(64 * 1024 * 1024);
  expect(await connection.probeWrite()).toBeNull();
  expect(connection.unwritable).toBeNull();
  // With room, a write that commits ends it too.
  free.mockReturnValue(4096);
  await expect(
    connection.transaction(async () => {
      throw full;
    }),
  ).rejects.toMatchObject({ code: "UNAVAILABLE" });
  free.mockReturnValue(64 * 1024 * 1024);
  await connection.transaction((exec) => exec.run("INSERT INTO t (x) VALUES (1)", []));
  expect(connection.unwritable).toBeNull();
  // Another cause (a read-only file made writable again) is over at the probe's first success.
  const readOnly = Object.assign(new Error("attempt to write a readonly database"), { code: "SQLITE_READONLY" });
  free.mockReturnValue(0);
  await expect(
    connection.transaction(async () => {
      throw readOnly;
    }),
  ).rejects.toMatchObject({ code: "UNAVAILABLE" });
  expect(await connection.probeWrite()).toBeNull();
  await connection.close();
});
