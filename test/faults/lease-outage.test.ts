/**
 * A lease that lapsed during the server's own database outage is kept for the worker's first
 * heartbeat after it (docs/workflows.md § Leases): the reaper gives every lapsed lease a grace on
 * its first pass after a worker request was answered 503, and a worker request that comes before
 * that pass now gives it itself. Before, a heartbeat that beat the reaper's pass (up to a second
 * after the database came back) was answered "lost"; the worker dropped the run it had finished,
 * the reaper then extended the lease anyway, and the run ran again as attempt 2 half a minute later
 * (found by a tester refusing PostgreSQL connections for 35 s). PostgreSQL, through a proxy that
 * refuses connections; the server's manual clock keeps the reaper asleep between its passes.
 */
import { randomBytes } from "node:crypto";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../api/helpers.js";
import { adminQuery, PG_URL } from "../helpers/db.js";
import { DbProxy } from "./db-proxy.js";

const LEASE_MS = 30_000;
const offer = { worker_id: "w1", workflows: [{ name: "W", version: "1.0.0", max_attempts: 3, backoff_ms: 0 }] };

describe.skipIf(!PG_URL)("a lease through the server's own database outage", () => {
  const schema = `orbit_lease_outage_${randomBytes(5).toString("hex")}`;
  const proxy = new DbProxy("127.0.0.1", Number(new URL(PG_URL ?? "postgres://x:5432").port || 5432));
  const lines: string[] = [];
  let t: TestServer;
  beforeAll(async () => {
    await adminQuery(`CREATE SCHEMA ${schema}`);
    await proxy.up();
    const logger = pino({ level: "warn" }, { write: (s: string) => void lines.push(s) });
    t = await startTestServer({ database: proxy.url(PG_URL as string), databaseSchema: schema, logger });
  });
  afterAll(async () => {
    await t?.stop();
    await proxy.down();
    await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });

  it("answers the first heartbeat after an outage longer than the lease 'held', and the run completes as attempt 1", async () => {
    await t.ok("POST", "/v1/workflows", { name: "W", version: "1.0.0" });
    await t.ok("POST", "/v1/executions", { execution_id: "e", workflow: "W", input: {} });
    const polled = await t.ok("POST", "/v1/worker/poll", { ...offer, wait_ms: 0 });
    const taskId: string = polled.tasks[0].task_id;
    const beat = () => t.call("POST", "/v1/worker/heartbeat", { worker_id: "w1", task_ids: [taskId] });

    // The database goes away; the worker's heartbeat is answered 503.
    await proxy.down();
    expect((await beat()).status).toBe(503);
    // Longer than the lease passes. The reaper wakes, fails to reach the database, and sleeps.
    const failedBefore = lines.filter((l) => l.includes("reaping expired worker leases failed")).length;
    t.clock.advance(LEASE_MS + 5000);
    await t.until(
      async () => lines.filter((l) => l.includes("reaping expired worker leases failed")).length,
      (n) => n > failedBefore,
      "the reaper's failed pass",
    );
    // The database is back; the worker's next heartbeat comes before the reaper's next pass.
    await proxy.up();
    const after = await beat();
    expect(after.status).toBe(200);
    expect(after.body.tasks[taskId]).toEqual({ lease: "held", cancel_requested: null });
    const done = await t.call("POST", `/v1/worker/tasks/${taskId}/complete`, { worker_id: "w1", result: { ok: 1 } });
    expect(done.status).toBe(200);
    expect(await t.ok("GET", "/v1/executions/e")).toMatchObject({ status: "COMPLETED", attempt: 1 });
  });
});
