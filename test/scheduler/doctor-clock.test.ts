/**
 * `orbit doctor`'s clock check (src/scheduler/doctor.ts) times only the reading of the database's
 * clock, on a connection it holds: timed from before `store.databaseNow()`, the wait for a
 * connection counted too, and near the end of a 90 s table lock doctor said "this server's clock is
 * 10244 ms behind the database's" of two clocks on one host (a tester). A reading too slow to tell
 * the clocks apart says so instead of warning. Both clocks here are this host's.
 */
import { expect, it } from "vitest";
import { runDoctor, SKEW_ROUND_TRIP_MAX_MS, SKEW_WARN_MS } from "../../src/scheduler/doctor.js";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import type { Store, StoreOps } from "../../src/store/store.js";
import { describeEachDialect, PG_URL, useStore } from "../helpers/db.js";

const hostClock = { now: () => Date.now() };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `store` with `change` applied to some of its properties. */
function withProps(store: Store, change: Partial<Record<keyof Store, unknown>>): Store {
  return new Proxy(store, {
    get(target, prop) {
      if (prop in change) return change[prop as keyof Store];
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describeEachDialect("orbit doctor's clock check", (dialect) => {
  const db = useStore(dialect);

  it("does not count the wait for the database's connection as skew", async () => {
    // One connection (SQLite has only one): held by another transaction for longer than twice the
    // warning threshold, from just before the clock check asks for it.
    let store = db.store;
    if (dialect.name === "postgres") {
      store = new PostgresStore({
        connectionString: PG_URL!,
        searchPath: db.location.env.ORBIT_TEST_PG_SCHEMA!,
        maxConnections: 1,
      });
      await store.open();
    }
    const heldMs = 2 * SKEW_WARN_MS + 500;
    let holding: Promise<unknown> = Promise.resolve();
    const migrationsThenHold = async () => {
      const applied = await store.appliedMigrations();
      // The migrations check comes right before the clock check: take the connection now.
      let taken!: () => void;
      const held = new Promise<void>((resolve) => {
        taken = resolve;
      });
      holding = store.transaction(async () => {
        taken();
        await sleep(heldMs);
      });
      await held;
      return applied;
    };
    try {
      const asked = performance.now();
      const report = await runDoctor(withProps(store, { appliedMigrations: migrationsThenHold }), hostClock);
      await holding;
      expect(performance.now() - asked).toBeGreaterThanOrEqual(heldMs);
      const clock = report.checks.find((c) => c.name === "clock");
      expect(clock).toMatchObject({ status: "ok" });
      // A loaded machine may make the reading itself too slow to tell ("not measured"); never a skew.
      const said = /^this server's clock is (\d+) ms (ahead of|behind) the database's$/.exec(clock!.message);
      if (said !== null) expect(Number(said[1])).toBeLessThanOrEqual(SKEW_ROUND_TRIP_MAX_MS / 2);
      else expect(clock!.message).toMatch(/^not measured: /);
    } finally {
      if (store !== db.store) await store.close();
    }
  });

  it("says the clock was not measured when reading the database's takes too long to tell", async () => {
    // Every reading of the database's clock, on the held connection, takes twice the most it may.
    const slow = (tx: StoreOps): StoreOps =>
      new Proxy(tx, {
        get(target, prop) {
          const value: unknown = Reflect.get(target, prop, target);
          if (prop === "databaseNow") {
            return async () => {
              await sleep(2 * SKEW_ROUND_TRIP_MAX_MS);
              return target.databaseNow();
            };
          }
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
    const store = withProps(db.store, {
      transaction: <T>(fn: (tx: StoreOps) => Promise<T>) => db.store.transaction((tx) => fn(slow(tx))),
      databaseNow: async () => {
        await sleep(2 * SKEW_ROUND_TRIP_MAX_MS);
        return db.store.databaseNow();
      },
    });
    const clock = (await runDoctor(store, hostClock)).checks.find((c) => c.name === "clock");
    expect(clock?.status).toBe("ok");
    expect(clock?.message).toMatch(
      /^not measured: the database took \d+ ms to answer a reading of its clock \(more than 250 ms\), too long to tell the clocks apart to within 125 ms; run orbit doctor again once it answers quickly$/,
    );
  });
});
