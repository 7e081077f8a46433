/**
 * /readyz's check (src/server/readiness.ts): a check that waits past its bound while the database
 * answers other statements is a busy database, not a missing one; one that answers nothing in that
 * time is not ready. A fake store, so the pool's queue is exact; the bound is shortened.
 */
import { describe, expect, it } from "vitest";
import { readinessCheck } from "../../src/server/readiness.js";
import { postgresDialect, useStore } from "../helpers/db.js";

type FakeStore = {
  databaseNow: () => Promise<number>;
  writeProblem: () => Promise<string | null>;
  lastAnswerAt: () => number | null;
  knownWriteProblem?: () => string | null;
};

/** A store whose check waits behind a queue that never reaches it, while `answered` says when others got answers. */
function busyStore(answered: () => number | null): FakeStore {
  return {
    databaseNow: () => new Promise<number>(() => undefined),
    writeProblem: async () => null,
    lastAnswerAt: answered,
  };
}

const check = (store: FakeStore, ready = true) =>
  readinessCheck({ store, role: () => "single", ready: () => ready, timeoutMs: 30 });

describe("readiness", () => {
  it("is ready when the database answers its check", async () => {
    const store = { databaseNow: async () => 1, writeProblem: async () => null, lastAnswerAt: () => null };
    expect(await check(store)()).toEqual({ ready: true, role: "single" });
  });

  it("is ready when its check waits past the bound while other statements get answers", async () => {
    let answered: number | null = null;
    const store = busyStore(() => answered);
    const timer = setInterval(() => (answered = performance.now()), 5);
    try {
      expect(await check(store)()).toEqual({ ready: true, role: "single" });
    } finally {
      clearInterval(timer);
    }
  });

  it("is not ready when nothing got an answer while its check waited", async () => {
    // The last answer came before the check was asked: a stall since.
    const before = performance.now();
    const r = await check(busyStore(() => before))();
    expect(r).toEqual({
      ready: false,
      role: "single",
      message: "the database does not answer: no answer within 30 ms",
    });
    const never = await check(busyStore(() => null))();
    expect(never.ready).toBe(false);
  });

  it("names the cause writes met when its check gets no answer (SQLite waiting for another process's lock)", async () => {
    const locked = "the SQLite database is locked by another process (SQLITE_BUSY: database is locked)";
    const r = await check({ ...busyStore(() => null), knownWriteProblem: () => locked })();
    expect(r).toEqual({ ready: false, role: "single", message: `the database cannot be written: ${locked}` });
  });

  it("is not ready when the check fails, however recent the last answer", async () => {
    const store = {
      databaseNow: async (): Promise<number> => {
        throw new Error("connect ECONNREFUSED 127.0.0.1:5432");
      },
      writeProblem: async () => null,
      lastAnswerAt: () => performance.now() + 1000,
    };
    expect(await check(store)()).toMatchObject({
      ready: false,
      message: "the database does not answer: connect ECONNREFUSED 127.0.0.1:5432",
    });
  });

  it("keeps the last write problem it saw while the database is busy", async () => {
    let problem: string | null = "the database is a standby";
    let hang = false;
    let answered: number | null = null;
    const store = {
      databaseNow: () => (hang ? new Promise<number>(() => undefined) : Promise.resolve(1)),
      writeProblem: async () => problem,
      lastAnswerAt: () => answered,
    };
    const ready = check(store);
    expect(await ready()).toMatchObject({
      ready: false,
      message: "the database cannot be written: the database is a standby",
    });
    hang = true;
    problem = null;
    const timer = setInterval(() => (answered = performance.now()), 5);
    try {
      expect(await ready()).toMatchObject({
        ready: false,
        message: "the database cannot be written: the database is a standby",
      });
    } finally {
      clearInterval(timer);
    }
  });

  it("is not ready while starting or stopping", async () => {
    expect(
      await check(
        busyStore(() => null),
        false,
      )(),
    ).toEqual({
      ready: false,
      role: "single",
      message: "starting or stopping",
    });
  });
});

describe.skipIf(!postgresDialect.enabled)("readiness: PostgreSQL's last answer [postgres]", () => {
  const db = useStore(postgresDialect);

  it("moves with every statement that gets an answer, in or out of a transaction", async () => {
    const store = db.store;
    const before = performance.now();
    await store.databaseNow();
    const second = store.lastAnswerAt?.() as number;
    expect(second).toBeGreaterThanOrEqual(before);
    await store.transaction(async (tx) => {
      await tx.databaseNow();
    });
    expect(store.lastAnswerAt?.() as number).toBeGreaterThan(second);
  });
});
