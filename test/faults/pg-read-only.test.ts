/**
 * PostgreSQL that refuses writes for a while, and statements it stops (docs/operations.md § When
 * PostgreSQL restarts): a write is answered 503 UNAVAILABLE naming why (it was 500 INTERNAL), the
 * server is not ready meanwhile (it said ready), and once the database takes writes again the
 * server does too without a restart (its pool kept the read-only sessions for minutes). A statement
 * stopped by `lock_timeout` is 503 too. The test's own role carries the settings, so no other test
 * sees them.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../api/helpers.js";
import { adminQuery, PG_URL } from "../helpers/db.js";

describe.skipIf(!PG_URL)("PostgreSQL refusing writes (postgres)", () => {
  const role = `orbit_ro_${randomBytes(4).toString("hex")}`;
  let t: TestServer;
  const terminate = () =>
    adminQuery(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '${role}'`);
  const start = (id: string) => t.call("POST", "/v1/executions", { workflow: "W", execution_id: id, input: {} });

  beforeAll(async () => {
    await adminQuery(`CREATE ROLE ${role} LOGIN`);
    await adminQuery(`CREATE SCHEMA ${role} AUTHORIZATION ${role}`);
    const url = new URL(PG_URL!);
    url.username = role;
    t = await startTestServer({ database: url.toString(), databaseSchema: role });
    expect((await t.call("POST", "/v1/workflows", { name: "W", version: "1.0.0" })).status).toBe(201);
  });
  afterAll(async () => {
    await t?.stop();
    await terminate();
    await adminQuery(`DROP SCHEMA IF EXISTS ${role} CASCADE`);
    await adminQuery(`DROP ROLE IF EXISTS ${role}`);
  });

  it("answers 503 and is not ready while writes are refused, and takes writes again by itself", async () => {
    expect((await start("before")).status).toBe(201);
    await adminQuery(`ALTER ROLE ${role} SET default_transaction_read_only = on`);
    await terminate(); // the role's sessions start again, read-only
    // A pooled connection terminated just now may answer first, with 503 "terminating connection
    // due to administrator command" (it was taken for the refusal, and the test failed at random):
    // wait for a session that starts read-only.
    const refused = await t.until(
      () => start("during"),
      (r) => r.status !== 201 && !String(r.body.message).includes("terminating connection"),
      "a write to be refused",
    );
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 503, code: "UNAVAILABLE" });
    expect(refused.body.message).toMatch(/^the database refuses writes \(cannot execute INSERT in a read-only/);
    const ready = await t.call("GET", "/readyz");
    expect(ready.status).toBe(503);
    expect(ready.body.message).toBe(
      "the database cannot be written: it refuses writes (default_transaction_read_only is on)",
    );

    // Writable again, nothing terminated: the read-only sessions in the pool are dropped as they
    // refuse, and the server takes writes again.
    // Ten writes at once: the pool's sessions, all read-only, each refused once.
    const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => start(`ro-${i}`)));
    expect(burst.every((r) => r.status === 503)).toBe(true);
    await adminQuery(`ALTER ROLE ${role} RESET default_transaction_read_only`);
    // Each refusal drops its session, so a write goes through within the pool's size (10) and one:
    // a refusal already converted by its statement went unseen and its read-only session went back
    // to the pool, where it was reused for as long as it never sat idle (a full CI run waited 9 s).
    const answers: number[] = [];
    for (let i = 0; i < 12 && answers.at(-1) !== 201; i++) answers.push((await start("after")).status);
    expect(answers.at(-1)).toBe(201);
    expect(answers.length).toBeLessThanOrEqual(11);
    await t.until(
      () => t.call("GET", "/readyz"),
      (r) => r.status === 200,
      "ready again",
    );
  });

  it("checks readiness on a pooled connection without leaving a listener on it each time", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => void warnings.push(w.name);
    process.on("warning", onWarning);
    try {
      // Each check borrows a connection of the pool (10): 40 checks reuse each several times.
      for (let i = 0; i < 40; i++) expect((await t.call("GET", "/readyz")).status).toBe(200);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings).not.toContain("MaxListenersExceededWarning");
  });

  it("answers 503 for a statement stopped by lock_timeout", async () => {
    await adminQuery(`ALTER ROLE ${role} SET lock_timeout = '200ms'`);
    await terminate();
    // Another session holds the executions table while the request wants it.
    const pg = (await import("pg")).default;
    const holder = new pg.Client({ connectionString: PG_URL });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(`LOCK TABLE ${role}.orbit_executions IN ACCESS EXCLUSIVE MODE`);
      const r = await start("locked");
      expect({ status: r.status, code: r.body.code }).toEqual({ status: 503, code: "UNAVAILABLE" });
      expect(r.body.message).toMatch(
        /^the database aborted the transaction \(canceling statement due to lock timeout\)/,
      );
    } finally {
      await holder.query("ROLLBACK").catch(() => undefined);
      await holder.end();
      await adminQuery(`ALTER ROLE ${role} RESET lock_timeout`);
    }
  });
});
