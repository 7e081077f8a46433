/**
 * Fault suite, PostgreSQL: the Orbit process itself stops running (a laptop or VM suspended, SIGSTOP,
 * a blocked event loop) while a statement is out. The database answers at once, but the answer
 * timer fires before the answer is read, so the statement fails all the same. That failure used to
 * say "the database did not answer within 30000 ms (a network stall, a frozen or overloaded
 * database host …)" at error level, sending the operator to a database that was fine (a tester's
 * SIGSTOP of 180 s); a timer that fired a second or more late now says it was this process.
 *
 * The freeze is a synchronous wait in the test's own process, which holds the store's event loop as
 * a SIGSTOP holds a server's: the proxy keeps the statement until the freeze begins, so the answer
 * can only be read after it, and the answer timer (due during the freeze) fires first.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { adminRows, PG_URL } from "../helpers/db.js";
import { DbProxy } from "./db-proxy.js";

const ANSWER_TIMEOUT_MS = 300;

/** Holds the thread, as a suspended process is held. */
function freeze(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // the process is not running
  }
}

describe.skipIf(!PG_URL)("fault: the Orbit process stops running while PostgreSQL answers", () => {
  const schema = `orbit_frozen_${randomBytes(5).toString("hex")}`;
  let proxy: DbProxy;
  let store: PostgresStore;

  beforeAll(async () => {
    await adminRows(`CREATE SCHEMA ${schema}`);
    const target = new URL(PG_URL!);
    proxy = new DbProxy(target.hostname, Number(target.port || 5432));
    await proxy.up();
    store = new PostgresStore({
      connectionString: proxy.url(PG_URL!),
      searchPath: schema,
      maxConnections: 1,
      answerTimeoutMs: ANSWER_TIMEOUT_MS,
    });
    await store.open();
    await store.nextDeadlineMs(); // the one connection is made and warm
  });
  afterAll(async () => {
    await store?.close().catch(() => undefined);
    await proxy?.down();
    await adminRows(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });

  /** Sends a statement through a stalled proxy and resolves once the proxy holds it (to its outcome, wrapped). */
  async function statementHeld(): Promise<{ outcome: Promise<unknown> }> {
    proxy.stall();
    const outcome = store.nextDeadlineMs().then(
      () => null,
      (err: unknown) => err,
    );
    while (proxy.holding === 0) await new Promise((resolve) => setImmediate(resolve));
    return { outcome };
  }

  it("a statement whose answer waited while this process was frozen says the process was not running", async () => {
    const { outcome } = await statementHeld();
    proxy.resume(); // the database answers at once; nothing reads it until the freeze ends
    freeze(ANSWER_TIMEOUT_MS + 1500);
    const err = (await outcome) as { code?: string; message?: string } | null;
    expect(err).not.toBeNull();
    expect(err?.code).toBe("UNAVAILABLE");
    expect(err?.message).toMatch(
      /^this Orbit process was not running for about \d+ s \(a suspended machine or VM, SIGSTOP, or a blocked event loop\), so the database's answer was not read within 300 ms; retry shortly$/,
    );
    // The store works on as soon as the process runs again.
    expect(await store.nextDeadlineMs()).toBeNull();
  });

  it("a database that does not answer while this process runs is still a database that did not answer", async () => {
    await store.nextDeadlineMs(); // a connection made, whatever the test before left
    const { outcome } = await statementHeld();
    const err = (await outcome) as { code?: string; message?: string } | null;
    proxy.resume();
    expect(err?.code).toBe("UNAVAILABLE");
    expect(err?.message).toMatch(/^the database did not answer within 300 ms \(a network stall/);
    expect(await store.nextDeadlineMs()).toBeNull();
  });
});
