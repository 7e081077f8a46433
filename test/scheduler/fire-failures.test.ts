/**
 * A fire whose writes keep failing in the database while reads still work (a full disk, a trigger
 * refusing the insert) pauses the firing loop for a second between tries instead of retrying at
 * once: it used to spin a core and log 1,300 lines a second. Repeated failures of the same schedule
 * are logged once a minute, with how many were held back. The occurrence stays due and fires once
 * the writes work again (src/scheduler/loop.ts, docs/operations.md § A full disk).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Store } from "../../src/store/store.js";
import { sqliteDialect, useStore } from "../helpers/db.js";
import { type Harness, makeHarness } from "./harness.js";

/** `store` whose fire transactions (urgent) fail like a full disk while `full.on`; counts them. */
function fillable(store: Store, full: { on: boolean; attempts: number }): Store {
  return new Proxy(store, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (prop === "transaction") {
        return (fn: (tx: unknown) => Promise<unknown>, options?: { urgent?: boolean }) => {
          if (!options?.urgent) return (target.transaction as (...a: unknown[]) => Promise<unknown>)(fn, options);
          full.attempts++;
          // The reads work; the writes fail at the end, and the transaction rolls back.
          return (target.transaction as (...a: unknown[]) => Promise<unknown>)(async (tx: unknown) => {
            const result = await fn(tx);
            if (full.on) throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
            return result;
          }, options);
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** Lets the loop run on the event loop for `ms` of wall time (the manual clock stands still). */
const turns = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe("fires that fail in the database [sqlite]", () => {
  const db = useStore(sqliteDialect);
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.scheduler.close();
    h = null;
  });

  it("are tried once a second, logged once, and fire when the writes work again", async () => {
    const full = { on: false, attempts: 0 };
    const errors: Array<{ msg: string; repeated?: number }> = [];
    const warnings: string[] = [];
    const log = {
      warn: (_: object, msg: string) => void warnings.push(msg),
      error: (obj: { repeated?: number }, msg: string) => void errors.push({ msg, ...obj }),
    };
    h = await makeHarness(fillable(db.store, full), { now: "2026-11-15T00:00:30Z", log });
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "1m" });
    full.on = true;
    h.clock.set(Date.parse("2026-11-15T00:01:00Z"));
    h.scheduler.start();
    await turns(300);
    // One round: the batch, then the schedule on its own; then the pause on the (standing) clock.
    expect(full.attempts).toBeLessThanOrEqual(3);
    expect(errors.map((e) => e.msg)).toEqual([
      "fire failed in the database; the occurrence stays due and is tried again",
    ]);

    for (let i = 0; i < 3; i++) {
      const before = full.attempts;
      h.clock.advance(1000);
      await turns(50);
      expect(full.attempts - before).toBeGreaterThan(0);
      expect(full.attempts - before).toBeLessThanOrEqual(2);
    }
    expect(errors).toHaveLength(1); // the same failure again within the minute: held back

    full.on = false;
    h.clock.advance(1000);
    await turns(50);
    expect(h.reports.filter((r) => r.started === 1)).toHaveLength(1);
    const view = await h.scheduler.schedules.get("s");
    expect(view.fired).toBe(1);
    expect(view.next_fire_at).toBe("2026-11-15T00:02:00Z");
  });
});
