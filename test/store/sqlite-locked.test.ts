/**
 * Another process holding the SQLite file's write lock past the busy timeout (an `sqlite3` shell's
 * BEGIN IMMEDIATE) makes a write fail with 503 UNAVAILABLE, which workers resend and the loop
 * retries: it was 500 INTERNAL, and a worker's step report failed the attempt of a workflow that
 * never failed. Once the lock is let go, writes succeed again. The wait is spent off the event loop:
 * inside SQLite's busy handler it froze the server for the whole wait, again for every statement
 * (a tester's 30 s lock left /healthz unanswered throughout).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, expect, it } from "vitest";
import { OrbitError } from "../../src/domain/errors.js";
import { reasonOf } from "../../src/server/startup-error.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A store on a fresh file that waits `busyTimeoutMs` for locks, and another connection to the file. */
async function storeAndOther(busyTimeoutMs: number): Promise<{ store: SqliteStore; other: Database.Database }> {
  const dir = mkdtempSync(join(tmpdir(), "orbit-locked-"));
  dirs.push(dir);
  const filename = join(dir, "orbit.db");
  const store = new SqliteStore({ filename, busyTimeoutMs });
  await store.open();
  return { store, other: new Database(filename) };
}

const workflow = (version: string) => ({
  name: "W",
  version,
  inputSchema: null,
  description: null,
  createdMs: 0,
  deprecatedMs: null,
});

it("a write lock held by another process past the busy timeout is 503 UNAVAILABLE, and passes", async () => {
  const { store, other } = await storeAndOther(20);
  try {
    other.exec("BEGIN IMMEDIATE");
    const refused = await store.insertWorkflow(workflow("1.0.0")).then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(OrbitError);
    expect(refused).toMatchObject({ code: "UNAVAILABLE" });
    expect((refused as OrbitError).message).toMatch(/^the SQLite database is locked by another process \(SQLITE_BUSY/);
    other.exec("COMMIT");
    expect(await store.insertWorkflow(workflow("1.0.0"))).toBe(true);
  } finally {
    other.close();
    await store.close();
  }
});

it("waits for the lock off the event loop: a timer runs meanwhile, and the write goes through once it is let go", async () => {
  const { store, other } = await storeAndOther(3000);
  try {
    other.exec("BEGIN IMMEDIATE");
    const order: string[] = [];
    // The other process lets go from a timer: it can only run while the write waits if the wait
    // leaves the event loop free (a wait inside SQLite's busy handler holds it for all 3 s).
    setTimeout(() => {
      order.push("timer");
      other.exec("COMMIT");
    }, 30);
    const inserted = await store.insertWorkflow(workflow("1.0.0")).finally(() => order.push("write"));
    expect({ inserted, order }).toEqual({ inserted: true, order: ["timer", "write"] });
  } finally {
    other.close();
    await store.close();
  }
});

it("opening waits for another process's lock for the whole budget (a start beside a backup tool), then says what holds it", async () => {
  const { store, other } = await storeAndOther(20);
  await store.close();
  const filename = other.name;
  try {
    other.exec("BEGIN IMMEDIATE");
    const late = new SqliteStore({ filename, busyTimeoutMs: 300 });
    const started = performance.now();
    const refused = await late.open().then(
      () => null,
      (e: unknown) => e,
    );
    // A lower bound: SQLite's busy handler sleeps at least that long before it gives up (it gave up after 10 ms).
    expect(performance.now() - started).toBeGreaterThanOrEqual(250);
    expect(refused).toMatchObject({ code: "SQLITE_BUSY" });
    expect(reasonOf(refused)).toMatch(/^database is locked \(SQLITE_BUSY\): another process held the file's lock/);
    other.exec("COMMIT");
    const opened = new SqliteStore({ filename, busyTimeoutMs: 300 });
    await opened.open();
    await opened.close();
  } finally {
    other.close();
  }
});
