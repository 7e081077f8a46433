/**
 * The SQLite store's mutex (src/store/mutex.ts): one holder at a time, first come first served
 * within a lane, and urgent waiters (the firing loop's transactions) ahead of the others, never
 * interrupting the holder; while the firing loop reserves it, only urgent waiters. And through the store: an urgent transaction queued behind worker
 * traffic runs next (docs/storage.md § SQLite).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Mutex } from "../../src/store/mutex.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

function gate(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

describe("Mutex", () => {
  it("serves urgent waiters first, each lane in order, never two holders", async () => {
    const m = new Mutex();
    const order: string[] = [];
    let inside = 0;
    const hold = gate();
    const job = (name: string, urgent = false) =>
      m.run(async () => {
        inside++;
        expect(inside).toBe(1);
        order.push(name);
        if (name === "holder") await hold.opened;
        await Promise.resolve();
        inside--;
      }, urgent);
    const all = [job("holder"), job("n1"), job("n2"), job("u1", true), job("n3"), job("u2", true)];
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(["holder"]); // urgent never interrupts the holder
    expect(m.pending).toBe(6);
    hold.open();
    await Promise.all(all);
    expect(order).toEqual(["holder", "u1", "u2", "n1", "n2", "n3"]);
    expect(m.pending).toBe(0);
  });

  it("while reserved, lets only urgent waiters in; the others run once it is released", async () => {
    const m = new Mutex();
    const order: string[] = [];
    const release = m.reserve();
    const normal = m.run(() => void order.push("worker"));
    await m.run(() => void order.push("fire-1"), true);
    await new Promise((resolve) => setImmediate(resolve)); // the gap between two fire batches
    await m.run(() => void order.push("fire-2"), true);
    expect(order).toEqual(["fire-1", "fire-2"]);
    release();
    release(); // idempotent
    await normal;
    expect(order).toEqual(["fire-1", "fire-2", "worker"]);
    await m.run(() => void order.push("after"));
    expect(order.at(-1)).toBe("after");
  });

  it("releases when the holder throws, and runs an uncontended job after the caller's turn", async () => {
    const m = new Mutex();
    await expect(m.run(() => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    let ran = false;
    const p = m.run(() => {
      ran = true;
    });
    expect(ran).toBe(false);
    await p;
    expect(ran).toBe(true);
    await m.drain();
  });
});

describe("SqliteStore urgent transactions", () => {
  let dir: string | null = null;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = null;
  });

  it("run ahead of queued operations that are not urgent", async () => {
    dir = mkdtempSync(join(tmpdir(), "orbit-mutex-"));
    const store = new SqliteStore({ dataDir: dir });
    await store.open();
    try {
      const order: string[] = [];
      const hold = gate();
      const holder = store.transaction(async () => {
        order.push("holder");
        await hold.opened;
      });
      const queued = [
        store.transaction(async () => void order.push("worker-1")),
        store.nextDueMs().then(() => void order.push("worker-2")),
        store.transaction(async () => void order.push("fire"), { urgent: true }),
      ];
      await new Promise((resolve) => setImmediate(resolve));
      hold.open();
      await Promise.all([holder, ...queued]);
      expect(order).toEqual(["holder", "fire", "worker-1", "worker-2"]);
    } finally {
      await store.close();
    }
  });
});
