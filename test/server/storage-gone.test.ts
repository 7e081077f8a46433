/**
 * The SQLite file under a running server (docs/storage.md § The file under a running server): a
 * data dir deleted, or a file replaced, refuses writes with 503 and makes /readyz not-ready, where
 * every write was acknowledged into an unlinked file that no restart would open; and a full disk
 * stays not-ready until the file system has room again, where a one-page probe that fitted into the
 * WAL's old frames said ready while every fire failed.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/server/server.js";

const dir = mkdtempSync(join(tmpdir(), "orbit-storage-gone-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const register = (s: RunningServer, name: string) =>
  fetch(`${s.url}/v1/workflows`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name, version: "1.0.0" }),
  });
/** Runs `fn` against a server on a fresh data dir `name`, closing it after. */
async function onServer(name: string, fn: (s: RunningServer, data: string) => Promise<void>): Promise<void> {
  const data = join(dir, name);
  const s = await startServer({ port: 0, dataDir: data, logger: "silent" });
  try {
    await fn(s, data);
  } finally {
    await s.close();
  }
}

const ready = async (s: RunningServer) => {
  const r = await fetch(`${s.url}/readyz`);
  return { status: r.status, body: (await r.json()) as { status: string; message?: string } };
};

it("refuses writes and is not ready once its data dir is deleted, instead of acknowledging writes a restart loses", async () => {
  await onServer("deleted", async (s, data) => {
    expect((await register(s, "Before")).status).toBe(201);
    rmSync(data, { recursive: true, force: true });
    const gone = `the database file ${data}/orbit.db was deleted while the server ran, so a write now would be lost at the next start; writes are refused: stop the server, then restore the file from a backup (orbit restore) or start on an empty one`;
    const refused = await register(s, "After");
    expect([refused.status, await refused.json()]).toEqual([503, { code: "UNAVAILABLE", message: gone }]);
    expect(await ready(s)).toEqual({
      status: 503,
      body: expect.objectContaining({ status: "not_ready", message: `the database cannot be written: ${gone}` }),
    });
    // Reads go on from the open file.
    const names = (await (await fetch(`${s.url}/v1/workflows`)).json()) as { workflows: { name: string }[] };
    expect(names.workflows.map((w) => w.name)).toEqual(["Before"]);
  });
});

it("refuses writes once its file is replaced by another (a copy put back under its name)", async () => {
  await onServer("replaced", async (s, data) => {
    expect((await register(s, "Before")).status).toBe(201);
    const file = join(data, "orbit.db");
    // A backup put back under the name (orbit backup, then mv), as a tester did.
    const backup = new Database(file, { readonly: true });
    backup.exec(`VACUUM INTO '${file}.copy'`);
    backup.close();
    // The server goes on writing after the backup, into its -wal.
    for (let i = 0; i < 20; i++) expect((await register(s, `Later${i}`)).status).toBe(201);
    renameSync(`${file}.copy`, file);
    const refused = await register(s, "After");
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { message: string }).message).toMatch(
      /^the database file .*orbit\.db was replaced by another file while the server ran/,
    );
    expect((await ready(s)).status).toBe(503);
    // A kill -9 now leaves the data dir as it is: the next start opens the new file with the -wal
    // beside it, which held the replaced file's pages, and found the new one malformed ("orphan
    // index"). The server empties its log once it sees the file replaced.
    const crashed = join(dir, "replaced-crashed");
    mkdirSync(crashed);
    for (const name of ["orbit.db", "orbit.db-wal", "orbit.db-shm"]) {
      try {
        copyFileSync(join(data, name), join(crashed, name));
      } catch {
        // a file SQLite did not keep
      }
    }
    const reopened = new Database(join(crashed, "orbit.db"));
    expect(reopened.pragma("integrity_check", { simple: true })).toBe("ok");
    expect(reopened.prepare("SELECT name FROM orbit_workflows").pluck().all()).toEqual(["Before"]);
    reopened.close();
  });
});

it("refuses writes once its write-ahead log is deleted, whose writes a crash would lose with it", async () => {
  // A tester's `rm orbit.db-wal`, three creates answered 201, kill -9: the restart found an empty
  // database, the schema included; /readyz and doctor had said ready.
  await onServer("wal-deleted", async (s, data) => {
    expect((await register(s, "Before")).status).toBe(201);
    rmSync(join(data, "orbit.db-wal"));
    const refused = await register(s, "After");
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { message: string }).message).toBe(
      `the database's write-ahead log ${data}/orbit.db-wal was deleted while the server ran, so a write now would be lost at a crash; writes are refused, and those it held are copied into the database file (a checkpoint): restart the server, which makes a new log (a clean stop keeps every write)`,
    );
    expect((await ready(s)).status).toBe(503);
    // What it acknowledged before is in orbit.db now, as a kill -9 (no checkpoint at close) would find it.
    const copy = join(dir, "wal-deleted-copy.db");
    copyFileSync(join(data, "orbit.db"), copy);
    const names = new Database(copy, { readonly: true })
      .prepare("SELECT name FROM orbit_workflows ORDER BY name")
      .pluck()
      .all();
    expect(names).toEqual(["Before"]);
  });
});

it("refuses writes once the data dir's lock file is deleted, which let a second server open the file beside it", async () => {
  await onServer("lock-deleted", async (s, data) => {
    expect((await register(s, "Before")).status).toBe(201);
    rmSync(join(data, "orbit.lock"));
    const refused = await register(s, "After");
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { message: string }).message).toMatch(
      /^the data dir's lock file .*orbit\.lock was deleted while the server ran, so another server may now open this database beside it/,
    );
  });
});

/** A 4 MB tmpfs at a new folder, or null where this process may not mount one. */
function smallDisk(): { path: string; unmount: () => void } | null {
  const path = join(dir, "tmpfs");
  mkdirSync(path, { recursive: true });
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", path], { stdio: "ignore" });
  } catch {
    return null;
  }
  return { path, unmount: () => execFileSync("umount", [path], { stdio: "ignore" }) };
}
const disk = process.getuid?.() === 0 ? smallDisk() : null;
afterAll(() => disk?.unmount());

it.skipIf(disk === null)("stays not ready on a full disk until the file system has room again", async () => {
  const data = join(disk!.path, "data");
  const s = await startServer({ port: 0, dataDir: data, logger: "silent" });
  const filler = join(disk!.path, "filler");
  try {
    for (let i = 0; i < 30; i++) expect((await register(s, `W${i}`)).status).toBe(201);
    try {
      execFileSync("dd", ["if=/dev/zero", `of=${filler}`, "bs=64k"], { stdio: "ignore" });
    } catch {
      // dd stops with "No space left on device": the disk is full
    }
    // Writes that need new pages: schedules with a 200 KB input each.
    const big = (id: string) =>
      fetch(`${s.url}/v1/schedules`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          schedule_id: id,
          workflow: "W0",
          interval: "1h",
          paused: true,
          input: { pad: "x".repeat(200_000) },
        }),
      });
    let refused: Response | null = null;
    for (let i = 0; i < 40 && refused === null; i++) {
      const r = await big(`full-${i}`);
      if (r.status === 503) refused = r;
    }
    expect(refused?.status).toBe(503);
    // Every readiness check now says not ready: the probe's one page may fit into the WAL's old
    // frames, and it took that for the disk having room (ready half the time, a tester's loop).
    for (let i = 0; i < 5; i++) {
      const r = await ready(s);
      expect([r.status, r.body.message]).toEqual([503, expect.stringMatching(/SQLITE_FULL/)]);
    }
    rmSync(filler);
    expect(await ready(s)).toEqual({ status: 200, body: { status: "ready", role: "single" } });
    expect((await big("room")).status).toBe(201);
  } finally {
    rmSync(filler, { force: true });
    await s.close();
  }
});
