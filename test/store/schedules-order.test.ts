/**
 * SQLite keeps orbit_schedules in schedule id order (migration 0013, docs/storage.md § Schedules in
 * id order): a fire batch of a herd, read in the firing loop's order, lies on neighbouring pages of
 * the table whatever order the schedules were created in, so its commit writes few pages to the WAL.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { schedule, T0 } from "./fixtures/records.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** WAL frames are a 24-byte header and one page; the file starts with a 32-byte header. */
const walPages = (file: string, pageSize: number): number => Math.max(0, (statSync(file).size - 32) / (24 + pageSize));

describe("SQLite schedules in id order", () => {
  it("a batch of 200 due schedules created in a shuffled order writes about 20 pages of the table, not one per row", async () => {
    const dir = mkdtempSync(join(tmpdir(), "orbit-schedules-order-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const store = new SqliteStore({ dataDir: dir });
    await store.open();
    cleanups.push(() => store.close());
    // 2,000 schedules made one by one in an order that is not their ids' (a fixed shuffle).
    const ids = Array.from({ length: 2000 }, (_, i) => `sched-${String(i).padStart(4, "0")}`);
    for (let i = ids.length - 1, seed = 7; i > 0; i--) {
      seed = (seed * 48271) % 2147483647;
      const j = seed % (i + 1);
      [ids[i], ids[j]] = [ids[j] as string, ids[i] as string];
    }
    for (const id of ids) {
      await store.transaction((tx) => tx.insertSchedule(schedule(id, { input: { note: "x".repeat(300) } })));
    }

    const batch = (await store.listDueSchedules({ dueAtOrBeforeMs: T0 + 10_000, limit: 200 })).map((s) => s.scheduleId);
    expect(batch).toEqual([...ids].sort().slice(0, 200));

    const db = new Database(join(dir, "orbit.db"));
    cleanups.push(() => {
      db.close();
    });
    const pageSize = Number(db.pragma("page_size", { simple: true }));
    db.pragma("wal_checkpoint(TRUNCATE)");
    expect(walPages(join(dir, "orbit.db-wal"), pageSize)).toBe(0);
    const advance = db.prepare("UPDATE orbit_schedules SET fired = fired + 1 WHERE schedule_id = ?");
    db.transaction(() => {
      for (const id of batch) advance.run(id);
    })();
    // 200 rows of about 500 bytes lie on 25–30 pages in id order; in creation order they were 143.
    const written = walPages(join(dir, "orbit.db-wal"), pageSize);
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThan(50);
  });
});
