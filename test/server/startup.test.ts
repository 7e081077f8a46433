/**
 * Start-up failures (docs/operations.md § Start-up): `orbit server` exits 1 at once with a message
 * that names the address, file or URL and the cause, and leaves nothing running (the process exits
 * on its own: no reaper timer left behind, no swallowed SIGTERM).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StartupError, startServer } from "../../src/server/server.js";
import { reasonOf } from "../../src/server/startup-error.js";
import { orbit } from "../e2e/harness.js";

describe("start-up failures", () => {
  let dir = "";
  let blocker: Server;
  let busyPort = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "orbit-startup-"));
    blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    busyPort = (blocker.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => blocker.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it("says the SQLite driver is not built instead of the thirteen paths the bindings package tried", () => {
    // A newcomer's `npm start` while `npm install` was still compiling better-sqlite3.
    const missing = new Error(
      "Could not locate the bindings file. Tried:\n → /x/node_modules/better-sqlite3/build/better_sqlite3.node",
    );
    expect(reasonOf(missing)).toBe(
      "the SQLite driver (better-sqlite3) is not built for this Node.js: wait for `npm install` to finish, or run `npm rebuild better-sqlite3`",
    );
  });

  it("orbit server on a busy port exits 1 and names the address", async () => {
    const r = await orbit([
      "server",
      "--port",
      String(busyPort),
      "--data-dir",
      join(dir, "busy"),
      "--log-level",
      "error",
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `orbit: cannot listen on 127.0.0.1:${busyPort}: the address is already in use (another server, or another orbit server, listens there)\n`,
    );
    // Found before the store opens: the refused start leaves no new database behind (it did).
    expect(existsSync(join(dir, "busy"))).toBe(false);
  });

  it("a data directory that is a file: exits 1 naming the database file", async () => {
    const file = join(dir, "not-a-dir");
    writeFileSync(file, "x");
    const r = await orbit(["server", "--port", "0", "--data-dir", file, "--log-level", "error"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^orbit: cannot open the SQLite database ${file}/orbit\\.db: .*EEXIST`));
  });

  // Node 20's recursive mkdirSync never returns under /proc (ENOENT, retried for ever): the server
  // hung at start-up, spinning a core and ignoring SIGTERM.
  it.runIf(existsSync("/proc/self"))("a data directory that cannot be created: exits 1 naming it", async () => {
    const r = await orbit(["server", "--port", "0", "--data-dir", "/proc/orbit-nope/data", "--log-level", "error"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^orbit: .*\/proc\/orbit-nope\/data.*: no such file or directory\n$/);
  });

  it("a database written by a newer release is refused with the file and what to do", async () => {
    const data = join(dir, "newer");
    const first = await startServer({ port: 0, dataDir: data, logger: "silent" });
    await first.close();
    const db = new Database(join(data, "orbit.db"));
    db.prepare("INSERT INTO orbit_migrations (version, name, applied_ms) VALUES (999, 'from_the_future', 0)").run();
    db.close();
    const r = await orbit(["server", "--port", "0", "--data-dir", data, "--log-level", "error"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`orbit: cannot open the SQLite database ${data}/orbit.db:`);
    expect(r.stderr).toContain("it was written by a newer Orbit; upgrade Orbit to open it");
  });

  it("embedded: startServer rejects with a StartupError naming the address and closes what it opened", async () => {
    const data = join(dir, "embedded");
    const err = await startServer({ port: busyPort, dataDir: data, logger: "silent" }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StartupError);
    expect((err as StartupError).target).toBe(`127.0.0.1:${busyPort}`);
    // The store was closed: a second server opens the same file and starts.
    const again = await startServer({ port: 0, dataDir: data, logger: "silent" });
    await again.close();
  });

  it("a second server on the same SQLite folder is refused while the first runs, and starts once it stopped", async () => {
    // It started and fired beside the first (found starting `orbit server` twice on one --data-dir).
    const data = join(dir, "shared-folder");
    const first = await startServer({ port: 0, dataDir: data, logger: "silent" });
    const second = await orbit(["server", "--port", "0", "--data-dir", data, "--log-level", "error"]);
    expect(second.code).toBe(1);
    expect(second.stderr).toBe(
      `orbit: cannot open the SQLite database ${data}/orbit.db: another Orbit server is using ${data} (${data}/orbit.lock is locked): stop it, or give this server another --data-dir\n`,
    );
    const embedded = await startServer({ port: 0, dataDir: data, logger: "silent" }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(embedded).toBeInstanceOf(StartupError);
    await first.close();
    const after = await startServer({ port: 0, dataDir: data, logger: "silent" });
    await after.close();
  });
});
