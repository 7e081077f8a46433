/**
 * Fault suite, PostgreSQL: another session holds a lock on an Orbit table (an operator's `LOCK
 * TABLE … IN ACCESS EXCLUSIVE MODE` from psql) while the server runs. The fire waits, and so does
 * every request that reads the table, each on a connection of the pool, until none is free. A
 * tester found /metrics unanswered for 30 s (Prometheus gives up at 10 s), then
 * `orbit_schedules_overdue NaN` without a word of why, and /readyz 503 "the database does not
 * answer" for part of the stall and 200 for the rest. Now readiness and the scrape's reads run on
 * connections apart from the pool: /readyz is 200 throughout (the lock is the database's, and
 * stalls every server of it alike), and /metrics answers within its bound with the firing loop's
 * wait, `orbit_database_up 1`, and the reads the lock stopped marked `orbit_scrape_read_success 0`.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SCRAPE_READ_MS } from "../../src/api/metrics.js";
import { READINESS_TIMEOUT_MS } from "../../src/server/readiness.js";
import { ORDER_INPUT, startTestServer, type TestServer } from "../api/helpers.js";
import { adminQuery, adminRows, PG_URL } from "../helpers/db.js";

/** node-postgres's default pool size, which the server keeps. */
const POOL = 10;

describe.skipIf(!PG_URL)("fault: a lock held on an Orbit table keeps the fire and the pool waiting", () => {
  const schema = `orbit_tlock_${randomBytes(5).toString("hex")}`;
  let t: TestServer;
  let holder: pg.Client;

  beforeAll(() => adminQuery(`CREATE SCHEMA ${schema}`));
  afterAll(() => adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
  beforeEach(async () => {
    t = await startTestServer({ database: PG_URL, databaseSchema: schema });
    holder = new pg.Client({ connectionString: PG_URL });
    await holder.connect();
  });
  afterEach(async () => {
    await holder.query("ROLLBACK").catch(() => undefined);
    await holder.end();
    await t.stop();
  });

  /** Resolves once at least `n` sessions wait for a lock on a table of the test's schema (polled). */
  async function lockWaiters(n: number): Promise<void> {
    await t.until(
      async () =>
        (
          await adminRows<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity a
              WHERE a.wait_event_type = 'Lock' AND EXISTS (
                SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
                  JOIN pg_namespace s ON s.oid = c.relnamespace
                 WHERE l.pid = a.pid AND NOT l.granted AND s.nspname = $1)`,
            [schema],
          )
        )[0]?.n ?? 0,
      (waiting) => waiting >= n,
      `${n} sessions waiting on the lock`,
    );
  }

  const value = (text: string, series: string): number => {
    const line = text.split("\n").find((l) => l.startsWith(`${series} `));
    if (line === undefined) throw new Error(`no ${series} in the scrape`);
    return Number(line.slice(series.length + 1));
  };

  it("stays ready, and a scrape answers within its bound with the firing's wait, while every pooled connection waits", async () => {
    await t.registerOrders();
    const schedule = { schedule_id: "held", workflow: "OrderProcessing", interval: "10s", input: ORDER_INPUT };
    expect((await t.call("POST", "/v1/schedules", { ...schedule, overlap: "allow" })).status).toBe(201);

    await holder.query("BEGIN");
    await holder.query(`LOCK TABLE ${schema}.orbit_schedules IN ACCESS EXCLUSIVE MODE`);
    t.clock.advance(60_000); // the schedule is due: its fire batch waits on the lock
    await lockWaiters(1);
    // Reads of the schedules wait too, one pooled connection each, until the pool has none left.
    const reads = Array.from({ length: POOL + 2 }, () => t.call("GET", "/v1/schedules"));
    await lockWaiters(POOL);

    // Ready throughout, past the check's own bound (it was 503 "the database does not answer").
    const until = performance.now() + READINESS_TIMEOUT_MS + 500;
    do {
      const ready = await t.call("GET", "/readyz");
      expect({ status: ready.status, body: ready.body }).toEqual({
        status: 200,
        body: { status: "ready", role: "single" },
      });
    } while (performance.now() < until);

    const asked = performance.now();
    const scrape = await fetch(`${t.server.url}/metrics`, { signal: AbortSignal.timeout(9_000) });
    const took = performance.now() - asked;
    expect(scrape.status).toBe(200);
    expect(took).toBeLessThan(SCRAPE_READ_MS + 2_000);
    const text = await scrape.text();
    expect(value(text, "orbit_schedule_fire_waiting_seconds")).toBeGreaterThan(READINESS_TIMEOUT_MS / 1000);
    expect(value(text, "orbit_database_up")).toBe(1);
    expect(text).toMatch(/^orbit_schedules_overdue NaN$/m);
    expect(value(text, 'orbit_scrape_read_success{metric="orbit_schedules_overdue"}')).toBe(0);
    expect(value(text, 'orbit_scrape_read_success{metric="orbit_schedule_consecutive_failures"}')).toBe(0);
    // orbit_executions is not locked: read.
    expect(value(text, 'orbit_scrape_read_success{metric="orbit_executions"}')).toBe(1);

    await holder.query("ROLLBACK");
    expect((await Promise.all(reads)).map((r) => r.status)).toEqual(Array(POOL + 2).fill(200));
    // Fired once the lock is gone. Waited for, not read at once: a round that was reading the next
    // due instant when the lock came fires the schedule beside the loop (fireHeld), which the
    // firing's wait does not count, so "no wait" came a moment before `fired: 1` (CI, 7 Dec).
    await t.until(
      async () => (await t.call("GET", "/v1/schedules/held")).body,
      (body) => (body as { fired?: number }).fired === 1,
      "the schedule to fire once the lock is released",
    );
    const after = await t.until(
      async () => (await fetch(`${t.server.url}/metrics`)).text(),
      (s) => value(s, "orbit_schedule_fire_waiting_seconds") === 0 && /^orbit_schedules_overdue 0$/m.test(s),
      "the fire to end its wait",
    );
    expect(value(after, 'orbit_scrape_read_success{metric="orbit_schedules_overdue"}')).toBe(1);
    expect((await t.call("GET", "/v1/schedules/held")).body).toMatchObject({ fired: 1 });
  });

  it("stays ready while a lock on orbit_worker_tasks keeps the fire and the requests that start executions waiting", async () => {
    await t.registerOrders();
    const schedule = { schedule_id: "tasks", workflow: "OrderProcessing", interval: "10s", input: ORDER_INPUT };
    expect((await t.call("POST", "/v1/schedules", { ...schedule, overlap: "allow" })).status).toBe(201);

    await holder.query("BEGIN");
    await holder.query(`LOCK TABLE ${schema}.orbit_worker_tasks IN ACCESS EXCLUSIVE MODE`);
    t.clock.advance(60_000);
    await lockWaiters(1);
    const starts = Array.from({ length: POOL + 2 }, (_, i) =>
      t.call("POST", "/v1/executions", { workflow: "OrderProcessing", execution_id: `e-${i}`, input: ORDER_INPUT }),
    );
    await lockWaiters(POOL);
    const until = performance.now() + READINESS_TIMEOUT_MS + 500;
    do {
      expect((await t.call("GET", "/readyz")).status).toBe(200);
    } while (performance.now() < until);
    await holder.query("ROLLBACK");
    expect((await Promise.all(starts)).map((r) => r.status)).toEqual(Array(POOL + 2).fill(201));
  });
});
