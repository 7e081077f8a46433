/**
 * Store.atomically on both dialects (src/api/idempotency.ts claims an Idempotency-Key with it): every
 * store call made while it runs joins its transaction — the `tx` argument, plain calls on the store
 * and nested transactions (savepoints) — so all of them commit together or none does; a nested
 * transaction that fails rolls back only its own writes. SQLite gained it for
 * test/faults/sigkill-writes.test.ts (a key recorded after its write could be lost by a SIGKILL).
 */
import { expect, it } from "vitest";
import type { Store } from "../../src/store/store.js";
import { describeEachDialect, useStore } from "../helpers/db.js";

const key = (k: string) => ({ scope: "s", key: k, requestHash: "h", response: null, status: 201, createdMs: 1 });
const present = async (store: Store, keys: string[]) => {
  const out: string[] = [];
  for (const k of keys) if ((await store.getIdempotencyKey("s", k)) !== null) out.push(k);
  return out;
};

describeEachDialect("Store.atomically", (dialect) => {
  const db = useStore(dialect);

  it("commits the tx's, the plain calls' and the nested transactions' writes together", async () => {
    const store = db.store;
    expect(store.atomically).toBeTypeOf("function");
    await store.atomically!(async (tx) => {
      await tx.insertIdempotencyKey(key("tx"));
      await store.insertIdempotencyKey(key("plain"));
      await store.transaction((t) => t.insertIdempotencyKey(key("nested")));
      // Inside, the plain calls read the transaction's own writes.
      expect(await present(store, ["tx", "plain", "nested"])).toEqual(["tx", "plain", "nested"]);
    });
    expect(await present(store, ["tx", "plain", "nested"])).toEqual(["tx", "plain", "nested"]);
  });

  it("rolls all of them back when it throws", async () => {
    const store = db.store;
    await expect(
      store.atomically!(async (tx) => {
        await tx.insertIdempotencyKey(key("tx"));
        await store.insertIdempotencyKey(key("plain"));
        await store.transaction((t) => t.insertIdempotencyKey(key("nested")));
        throw new Error("the request failed");
      }),
    ).rejects.toThrow("the request failed");
    expect(await present(store, ["tx", "plain", "nested"])).toEqual([]);
    // The store is usable afterwards, inside and outside atomically.
    await store.insertIdempotencyKey(key("after"));
    await store.atomically!((tx) => tx.insertIdempotencyKey(key("again")));
    expect(await present(store, ["after", "again"])).toEqual(["after", "again"]);
  });

  it("a nested transaction that fails rolls back only its own writes", async () => {
    const store = db.store;
    await store.atomically!(async (tx) => {
      await tx.insertIdempotencyKey(key("kept"));
      await expect(
        store.transaction(async (t) => {
          await t.insertIdempotencyKey(key("undone"));
          throw new Error("nested failure");
        }),
      ).rejects.toThrow("nested failure");
      await store.insertIdempotencyKey(key("later"));
    });
    expect(await present(store, ["kept", "undone", "later"])).toEqual(["kept", "later"]);
  });

  it("a call from outside waits for the commit and then sees all of it (SQLite) or none before it", async () => {
    const store = db.store;
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    let inside: () => void = () => undefined;
    const entered = new Promise<void>((r) => (inside = r));
    const work = store.atomically!(async (tx) => {
      await tx.insertIdempotencyKey(key("a"));
      await store.insertIdempotencyKey(key("b"));
      inside();
      await held;
    });
    await entered;
    // Started outside the transaction's async context: it does not join it.
    const outside = new Promise<string[]>((resolve, reject) => {
      setImmediate(() => present(store, ["a", "b"]).then(resolve, reject));
    });
    const seen = dialect.name === "sqlite" ? null : await outside;
    release();
    await work;
    if (seen !== null) expect(seen).toEqual([]);
    else expect(await outside).toEqual(["a", "b"]);
  });
});
