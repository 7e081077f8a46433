/**
 * The firing loop's warning that a fire batch still waits for the database (src/scheduler/stall-watch.ts):
 * it comes while a batch really waits, and not when the process itself was stopped or
 * starved (SIGSTOP, a paused VM): then the warning's own timer runs late, before the batch's answer
 * is read, and a batch that took no time on the database looked as if it had waited the whole pause.
 * The pause is a synchronous busy spell inside the batch; the answer comes on a timer due after it.
 * A batch that fails and falls back to firing each schedule alone counts each one's wait from its
 * own start (the warnings went on counting from the failed batch's start through the fallback).
 */
import { describe, expect, it } from "vitest";
import type { Store } from "../../src/store/store.js";
import { sqliteDialect, useStore } from "../helpers/db.js";
import { makeHarness } from "./harness.js";

const STALL_WARN_MS = 50;

/** `store` whose fire batches (urgent transactions) first run `before`, then go on. */
function delayedBatches(store: Store, before: () => Promise<void>): Store {
  return new Proxy(store, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (prop === "transaction") {
        return async (fn: unknown, options?: { urgent?: boolean }) => {
          if (options?.urgent) await before();
          return (target.transaction as (...a: unknown[]) => Promise<unknown>)(fn, options);
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

const later = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe("the fire batch stall warning [sqlite]", () => {
  const db = useStore(sqliteDialect);

  async function fireWith(before: () => Promise<void>): Promise<string[]> {
    const warnings: string[] = [];
    const log = { warn: (_: object, msg: string) => void warnings.push(msg), error: () => undefined };
    const store = delayedBatches(db.store, before);
    const h = await makeHarness(store, { now: "2026-11-15T00:00:30Z", log, stallWarnMs: STALL_WARN_MS });
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "1m" });
    expect(await h.fireAt("2026-11-15T00:01:00Z")).toBe(1);
    return warnings;
  }

  it("warns while a batch waits for the database", async () => {
    const warnings = await fireWith(() => later(6 * STALL_WARN_MS));
    expect(warnings[0]).toMatch(/^a fire batch is still waiting for the database: a lock held on the database file/);
  });

  it("says nothing when the process was stopped while the batch ran", async () => {
    const warnings = await fireWith(async () => {
      const until = performance.now() + 6 * STALL_WARN_MS;
      while (performance.now() < until); // the process is stopped: no timer runs
      await later(1); // its answer, read after the late timer has run
    });
    expect(warnings).toEqual([]);
  });

  it("counts a fallback fire's wait from its own start, not from the failed batch's", async () => {
    const warnings: { waited: number; msg: string }[] = [];
    const log = {
      warn: (fields: object, msg: string) =>
        void warnings.push({ waited: (fields as { waited_ms: number }).waited_ms, msg }),
      error: () => undefined,
    };
    let urgent = 0;
    let failedAt = 0;
    const store = new Proxy(db.store, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop, target);
        if (prop !== "transaction") return typeof value === "function" ? value.bind(target) : value;
        type Tx = (tx: unknown) => Promise<unknown>;
        return async (fn: Tx, options?: { urgent?: boolean }) => {
          const run = (f: Tx, o?: object) =>
            (target.transaction as (f: Tx, o?: object) => Promise<unknown>).call(target, f, o);
          if (!options?.urgent) return run(fn, options);
          if (++urgent === 1) {
            // The batch: it reads its due rows, waits 1 s, then fails and rolls back.
            return run(async (tx) => {
              await fn(tx);
              await later(20 * STALL_WARN_MS);
              failedAt = warnings.length;
              throw new Error("the batch fails");
            }, options);
          }
          await later(6 * STALL_WARN_MS); // each schedule's own fire waits 300 ms
          return run(fn, options);
        };
      },
    });
    const h = await makeHarness(store as Store, { now: "2026-11-15T00:00:30Z", log, stallWarnMs: STALL_WARN_MS });
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "1m" });
    expect(await h.fireAt("2026-11-15T00:01:00Z")).toBe(1);
    const fallback = warnings.slice(failedAt).filter((w) => w.msg.startsWith("a fire batch is still waiting"));
    expect(fallback.length).toBeGreaterThan(0);
    expect(fallback.filter((w) => w.waited >= 20 * STALL_WARN_MS)).toEqual([]);
  });
});
