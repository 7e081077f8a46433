/**
 * The SQLite connection's settings (docs/storage.md § SQLite, docs/operations.md § Sizing): WAL,
 * synchronous FULL unless `normal`, and a page cache of 4 MB unless `cacheMb` / `--sqlite-cache-mb`
 * says otherwise; a bad cache size refuses to start; a WAL that grew large shrinks back.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { startServer } from "../../src/server/server.js";
import { SqliteStore, WAL_SIZE_LIMIT_BYTES } from "../../src/store/sqlite/sqlite-store.js";

const dirs: string[] = [];
const dataDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "orbit-sqlite-settings-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function pragmasOf(options: ConstructorParameters<typeof SqliteStore>[0]) {
  const store = new SqliteStore({ dataDir: dataDir(), ...options });
  await store.open();
  try {
    return await store.pragmas();
  } finally {
    await store.close();
  }
}

describe("SQLite settings", () => {
  it("defaults: WAL, synchronous FULL, a 4 MB page cache", async () => {
    expect(await pragmasOf({})).toEqual({ journalMode: "wal", synchronous: 2, cacheKb: 4 * 1024 });
  });

  it("cacheMb and synchronous normal are applied", async () => {
    expect(await pragmasOf({ cacheMb: 64, synchronous: "normal" })).toEqual({
      journalMode: "wal",
      synchronous: 1,
      cacheKb: 64 * 1024,
    });
  });

  it("a server with a cache size that is not a whole number of MB from 1 refuses to start", async () => {
    for (const bad of [0, -8, 1.5, Number.NaN]) {
      await expect(startServer({ port: 0, logger: "silent", dataDir: dataDir(), sqliteCacheMb: bad })).rejects.toThrow(
        `--sqlite-cache-mb must be a whole number from 1 to 65536, got ${bad}`,
      );
    }
    const server = await startServer({ port: 0, logger: "silent", dataDir: dataDir(), sqliteCacheMb: 4 });
    await server.close();
  });

  it("a WAL grown past the limit is truncated back to it when the store next writes after a checkpoint", async () => {
    const dir = dataDir();
    const store = new SqliteStore({ dataDir: dir });
    await store.open();
    const wal = join(dir, "orbit.db-wal");
    try {
      // One commit of the limit + 16 MB (from a second connection: the store has no raw SQL): the
      // WAL must hold all of it until the commit, then a checkpoint copies it into the database.
      const other = new Database(join(dir, "orbit.db"));
      other.exec("CREATE TABLE bulk (b BLOB)");
      const insert = other.prepare("INSERT INTO bulk VALUES (zeroblob(1048576))");
      other.transaction(() => {
        for (let i = 0; i < WAL_SIZE_LIMIT_BYTES / 1048576 + 16; i++) insert.run();
      })();
      other.pragma("wal_checkpoint(PASSIVE)");
      other.close();
      expect(statSync(wal).size).toBeGreaterThan(WAL_SIZE_LIMIT_BYTES);
      // The store's next write starts the WAL over from its beginning, and truncates it.
      const record = { scope: "s", key: "k", requestHash: "h", response: null, status: 200, createdMs: 0 };
      await store.transaction((tx) => tx.insertIdempotencyKey(record));
      expect(statSync(wal).size).toBeLessThanOrEqual(WAL_SIZE_LIMIT_BYTES);
    } finally {
      await store.close();
    }
  });
});
