/**
 * Storage the server cannot use is refused or reported, not served with 500s (issue 11, item 10;
 * docs/operations.md § Start-up, docs/server.md § Health): a database URL of another kind than PostgreSQL is refused at
 * start; a read-only `orbit.db` is refused at start; a file that becomes unwritable under a running
 * server fails writes with 503 UNAVAILABLE and makes /readyz not-ready until it is writable again.
 *
 * Read-only is made with `chattr +i` when running as root (root writes through any mode bits), else
 * with `chmod 0444`; the running-server case needs `chattr` (an open file keeps its write access
 * after chmod) and is skipped, saying so, without it.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, linkSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { StartupError, startServer } from "../../src/server/server.js";
import { orbit } from "../e2e/harness.js";
import { PG_URL } from "../helpers/db.js";

const root = process.getuid?.() === 0;
const chattr = (flag: "+i" | "-i", file: string): boolean => {
  try {
    execFileSync("chattr", [flag, file], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
};
/** Whether this machine can make a file immutable under a running process. */
const immutable = (() => {
  if (!root) return false;
  const probe = mkdtempSync(join(tmpdir(), "orbit-chattr-"));
  const file = join(probe, "f");
  execFileSync("touch", [file]);
  const ok = chattr("+i", file) && chattr("-i", file);
  rmSync(probe, { recursive: true, force: true });
  return ok;
})();

/** Makes `file` read-only for this process; returns the undo. */
function readOnly(file: string): () => void {
  if (root) {
    if (!chattr("+i", file)) throw new Error("chattr +i failed");
    return () => void chattr("-i", file);
  }
  chmodSync(file, 0o444);
  return () => chmodSync(file, 0o644);
}

const dir = mkdtempSync(join(tmpdir(), "orbit-storage-"));

/** The message a server start on `data` is refused with (a StartupError); fails when it starts. */
async function startRefusal(data: string): Promise<string> {
  const err = await startServer({ port: 0, dataDir: data, logger: "silent" }).then(
    (s) => s.close().then(() => null),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StartupError);
  return (err as Error).message;
}
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("database URLs", () => {
  it("says SQLite's settings are ignored on a PostgreSQL server (it ignored them without a word)", async () => {
    // A refused URL ends the start at once: the warning comes first.
    const r = await orbit([
      "server",
      "--port",
      "0",
      "--database",
      "mysql://db/orbit",
      "--sqlite-synchronous",
      "normal",
      "--sqlite-cache-mb",
      "8",
    ]);
    expect(r.stderr.split("\n")[0]).toBe(
      "orbit: --sqlite-synchronous and --sqlite-cache-mb apply to SQLite only; this server uses PostgreSQL, so they are ignored",
    );
  });

  it("names the modes --sqlite-synchronous takes, as every other choice (it said 'Full or normal.')", async () => {
    const r = await orbit(["server", "--port", "0", "--sqlite-synchronous", "off"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "orbit: option '--sqlite-synchronous <mode>' argument 'off' is invalid. Give one of full, normal.",
    );
  });

  it("refuses a retention under an hour: 6m is six minutes, not months", async () => {
    // A pass a minute deleted every ended run of --retention 0s, and 6m meant as months a day's (a tester).
    for (const [flag, value, given] of [
      ["--retention", "6m", "6m"],
      ["--retention-workflow", "Audit=0s", "0s"],
    ]) {
      const r = await orbit(["server", "--port", "0", flag as string, value as string]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        `"${given}" keeps ended executions less than an hour; a retention is at least 1h (m is minutes: six months is 180d).`,
      );
    }
  });

  it("waits --database-wait for a PostgreSQL it cannot reach, then says it gave up (it said 'retry shortly')", async () => {
    // A port nothing listens on: every try is refused.
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const url = `postgres://orbit@127.0.0.1:${closed}/orbit`;
    const r = await orbit(["server", "--port", "0", "--database", url, "--database-wait", "1s"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("trying again every second for up to 1 s (--database-wait)");
    expect(r.stderr).toMatch(
      new RegExp(
        `^orbit: cannot open PostgreSQL at ${url}: still unreachable after trying for 1 s: the database is unavailable \\(.*ECONNREFUSED.*\\); start it, or wait longer with --database-wait`,
      ),
    );
  });

  it.skipIf(!PG_URL)(
    "fails at once on a PostgreSQL database that does not exist, saying to create it (it said 'retry shortly')",
    async () => {
      const url = new URL(PG_URL as string);
      url.pathname = `/orbit_missing_${process.pid}`;
      const r = await orbit(["server", "--port", "0", "--database", url.toString(), "--database-wait", "30s"]);
      expect(r.code).toBe(1);
      expect(r.stdout).not.toContain("trying again every second");
      expect(r.stderr).toBe(
        `orbit: cannot open PostgreSQL at ${url.toString()}: database "orbit_missing_${process.pid}" does not exist; create it (CREATE DATABASE), or correct the database name in the URL\n`,
      );
    },
  );

  it("refuses mysql:// (and anything not PostgreSQL) at start, naming the scheme but not the password", async () => {
    const r = await orbit(["server", "--port", "0", "--database", "mysql://app:s3cret@db:3306/orbit"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      "orbit: --database mysql://…: Orbit does not support mysql; give a PostgreSQL URL (postgres://user@host:5432/db or postgresql://…), or leave it unset to use SQLite in --data-dir\n",
    );
    const env = await orbit(["server", "--port", "0"], { ORBIT_DATABASE_URL: "sqlite:///tmp/x.db" });
    expect(env.code).toBe(1);
    expect(env.stderr).toMatch(/^orbit: ORBIT_DATABASE_URL sqlite:\/\/…: Orbit does not support sqlite; /);
    for (const database of ["mysql://root@localhost/orbit", "mongodb+srv://x", "db.example.com:5432/orbit", "orbit"]) {
      const err = await startServer({ port: 0, database, dataDir: join(dir, "never"), logger: "silent" }).then(
        () => null,
        (e: unknown) => e as Error,
      );
      expect({ database, message: err?.message }).toMatchObject({
        database,
        message: expect.stringMatching(/^--database .*give a PostgreSQL URL/),
      });
    }
    // PostgreSQL's scheme with one slash: not "Orbit does not support postgres" (a tester).
    for (const database of ["postgres:/orbit", "postgresql:broken"]) {
      const err = await startServer({ port: 0, database, dataDir: join(dir, "never"), logger: "silent" }).then(
        () => null,
        (e: unknown) => e as Error,
      );
      const scheme = database.split(":")[0];
      expect(err?.message).toBe(
        `--database ${scheme}:…: a PostgreSQL URL starts with ${scheme}:// (two slashes), as in postgres://user@host:5432/db`,
      );
    }
  });
});

describe("a read-only SQLite database", () => {
  it("is refused at start with the file and the cause (it used to start and answer ready)", async () => {
    const data = join(dir, "ro-start");
    const first = await startServer({ port: 0, dataDir: data, logger: "silent" });
    await first.close();
    const undo = readOnly(join(data, "orbit.db"));
    try {
      expect(await startRefusal(data)).toBe(
        `cannot open the SQLite database ${data}/orbit.db: the database file is read-only (SQLITE_READONLY: attempt to write a readonly database); Orbit must write to it: check the permissions of the file and its folder, and that the file system is not mounted read-only`,
      );
    } finally {
      undo();
    }
    const again = await startServer({ port: 0, dataDir: data, logger: "silent" });
    await again.close();
  });

  it("a database file with another hard link is refused: a server on the other link ran beside the first, each firing every occurrence into its own WAL", async () => {
    const first = join(dir, "linked-a");
    const second = join(dir, "linked-b");
    const server = await startServer({ port: 0, dataDir: first, logger: "silent" });
    mkdirSync(second);
    linkSync(join(first, "orbit.db"), join(second, "orbit.db"));
    try {
      // Beside the running server (the data folder's lock is the other folder's), and on its own.
      for (let i = 0; i < 2; i++) {
        expect(await startRefusal(second)).toBe(
          `cannot open the SQLite database ${second}/orbit.db: the database file has 2 hard links (it is reachable by another path): SQLite keeps the WAL beside the path it was opened by, so a server opening another link writes its own WAL and both fire every occurrence, and the file is damaged; keep one link (docs/storage.md § One server per file)`,
        );
        if (i === 0) await server.close();
      }
    } finally {
      rmSync(join(second, "orbit.db"), { force: true });
    }
    const again = await startServer({ port: 0, dataDir: first, logger: "silent" });
    await again.close();
  });

  it("a data folder that cannot be written is refused naming the folder (it said only SQLITE_CANTOPEN)", async () => {
    const data = join(dir, "ro-folder");
    mkdirSync(data);
    const undo = readOnly(data);
    try {
      expect(await startRefusal(data)).toBe(
        `cannot open the SQLite database ${data}/orbit.db: the folder ${data} cannot be written (permission denied); Orbit must create orbit.db and its -wal and -shm files there: check the folder's permissions (the server's user must be able to write it)`,
      );
    } finally {
      undo();
    }
  });

  it("a folder that cannot be written, holding orbit.db already, says the -wal and -shm files are what it must create", async () => {
    // It said "Orbit must create orbit.db" of a folder holding one (a tester).
    const data = join(dir, "ro-folder-with-db");
    const first = await startServer({ port: 0, dataDir: data, logger: "silent" });
    await first.close();
    const undo = readOnly(data);
    try {
      expect(await startRefusal(data)).toBe(
        `cannot open the SQLite database ${data}/orbit.db: the folder ${data} cannot be written (permission denied); Orbit must write orbit.db and create its -wal and -shm files beside it: check the folder's permissions (the server's user must be able to write it)`,
      );
    } finally {
      undo();
    }
  });

  it.skipIf(!immutable)(
    "made unwritable under a running server: writes are 503 and /readyz not-ready, until it is writable again",
    async () => {
      const data = join(dir, "ro-running");
      const s = await startServer({ port: 0, dataDir: data, logger: "silent" });
      const register = (name: string) =>
        fetch(`${s.url}/v1/workflows`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name, version: "1.0.0" }),
        });
      const ready = async () => {
        const r = await fetch(`${s.url}/readyz`);
        return { status: r.status, body: (await r.json()) as { status: string; message?: string } };
      };
      try {
        expect((await register("A")).status).toBe(201);
        const files = [join(data, "orbit.db"), join(data, "orbit.db-wal")];
        for (const f of files) chattr("+i", f);
        try {
          const refused = await register("B");
          expect(refused.status).toBe(503);
          const body = (await refused.json()) as { code: string; message: string };
          expect(body.code).toBe("UNAVAILABLE");
          expect(body.message).toMatch(/^the SQLite database cannot be written \(SQLITE_IOERR/);
          const r = await ready();
          expect(r.status).toBe(503);
          expect(r.body.status).toBe("not_ready");
          expect(r.body.message).toMatch(/^the database cannot be written: SQLITE_/);
        } finally {
          for (const f of files) chattr("-i", f);
        }
        expect(await ready()).toEqual({ status: 200, body: { status: "ready", role: "single" } });
        expect((await register("C")).status).toBe(201);
        const names = (await (await fetch(`${s.url}/v1/workflows`)).json()) as { workflows: { name: string }[] };
        expect(names.workflows.map((w) => w.name)).toEqual(["A", "C"]);
      } finally {
        await s.close();
      }
    },
  );
});
