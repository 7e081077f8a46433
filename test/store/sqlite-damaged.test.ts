/**
 * A damaged SQLite file (docs/operations.md § Faults): a read that meets a malformed page answers
 * 503 naming the damage and what to do, and /readyz stays not-ready, instead of 500 INTERNAL with
 * the cause only in the log while /readyz said ready.
 */

import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { expect, it } from "vitest";
import { startServer } from "../../src/server/server.js";

it("answers 503 'the SQLite database file is damaged' and stays not ready", async () => {
  const dir = mkdtempSync(join(tmpdir(), "orbit-damaged-"));
  const first = await startServer({ port: 0, dataDir: dir, logger: "silent" });
  const post = (url: string, path: string, body: unknown) =>
    fetch(url + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  await post(first.url, "/v1/workflows", { name: "W", version: "1.0.0" });
  for (let i = 0; i < 300; i++) {
    await post(first.url, "/v1/executions", {
      execution_id: `e-${i}`,
      workflow: "W",
      input: { pad: "x".repeat(2000) },
    });
  }
  await first.close();

  // Damage the header of every other leaf page of the executions (SQLite's page map, dbstat): the
  // server opens (the schema and the other tables stay readable) and a list meets it.
  const file = join(dir, "orbit.db");
  const page = 4096;
  expect(readFileSync(file).subarray(0, 15).toString()).toBe("SQLite format 3");
  // Every page in the file itself first: a page whose newest version waited in the WAL would be
  // read from there, and the damage to the file missed (as it once did on the CI machine).
  const map = new Database(file);
  map.pragma("wal_checkpoint(TRUNCATE)");
  const pages = map
    .prepare("SELECT pageno FROM dbstat WHERE name = 'orbit_executions' AND pagetype = 'leaf' ORDER BY pageno")
    .all() as { pageno: number }[];
  map.close();
  expect(pages.length).toBeGreaterThan(100);
  const fd = openSync(file, "r+");
  for (const [i, { pageno }] of pages.entries()) {
    if (i % 2 === 1) writeSync(fd, Buffer.alloc(16, 0xff), 0, 16, (pageno - 1) * page);
  }
  closeSync(fd);
  // The damage is there for any reader of the table: what the server must then say is the test.
  const check = new Database(file, { readonly: true });
  expect(() => check.prepare("SELECT COUNT(input) FROM orbit_executions").get()).toThrow(/malformed|corrupt/i);
  check.close();

  const server = await startServer({ port: 0, dataDir: dir, logger: "silent" });
  try {
    const list = await fetch(`${server.url}/v1/executions?limit=1000`);
    const body = (await list.json()) as { code: string; message: string };
    expect({ status: list.status, code: body.code }).toEqual({ status: 503, code: "UNAVAILABLE" });
    expect(body.message).toMatch(
      /^the SQLite database file is damaged \(SQLITE_(CORRUPT|NOTADB)\b.*\); stop the server and restore the file from a backup \(orbit backup\)$/,
    );
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { message: string }).message).toMatch(/damaged|SQLITE_CORRUPT/);
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
