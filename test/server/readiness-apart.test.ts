/**
 * /readyz's check runs apart from the server's pool (Store.readApart): with a lock held on an Orbit
 * table, the fire, the polls and the requests each wait on a pooled connection until none is free,
 * and a check waiting behind them said "the database does not answer: no answer within 2000 ms"
 * while it did, 503 for part of the stall and 200 for the rest (a tester). A fake store, so the
 * pool's queue is exact; the real one is test/faults/pg-table-lock.test.ts.
 */
import { describe, expect, it } from "vitest";
import { readinessCheck } from "../../src/server/readiness.js";
import type { StoreOps } from "../../src/store/store.js";

describe("readiness apart from the pool", () => {
  it("is ready while every pooled connection waits, when the database answers apart from them", async () => {
    const store = {
      databaseNow: () => new Promise<number>(() => undefined), // behind the pool's queue, for good
      writeProblem: async () => null,
      lastAnswerAt: () => null, // nothing on the pool gets an answer meanwhile
      readApart: <T>(fn: (ops: StoreOps) => Promise<T>) => fn({ databaseNow: async () => 1 } as unknown as StoreOps),
    };
    const check = readinessCheck({ store, role: () => "shared", ready: () => true, timeoutMs: 30 });
    for (let i = 0; i < 3; i++) expect(await check()).toEqual({ ready: true, role: "shared" });
  });

  it("is not ready, saying so, when the database does not answer apart from the pool either", async () => {
    const store = {
      databaseNow: async () => 1,
      writeProblem: async () => null,
      lastAnswerAt: () => null,
      readApart: () => new Promise<never>(() => undefined),
    };
    const check = readinessCheck({ store, role: () => "single", ready: () => true, timeoutMs: 30 });
    expect(await check()).toEqual({
      ready: false,
      role: "single",
      message: "the database does not answer: no answer within 30 ms",
    });
  });
});
