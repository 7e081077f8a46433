/**
 * Fault suite, PostgreSQL: a network stall between the server and its database (a partition, a
 * frozen database host, a firewall dropping packets). The proxy keeps every connection open and
 * accepts new ones, but passes nothing on and resets nothing. Requests hung for as long as the stall
 * lasted, /readyz included (answering 200 when a 90 s stall ended); now a statement without an
 * answer fails 503 UNAVAILABLE after the store's bound, its connection is destroyed, /readyz answers
 * 503 not_ready, and when the stall ends the server answers and fires again by itself. A fire whose
 * COMMIT reached the database but whose answer did not is not started twice.
 *
 * No timings are asserted: each stall lasts until the test has its answers, so "answers before the
 * stall ends" is what passing means (without the bound these tests hang until vitest's timeout).
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ORDER_INPUT, startTestServer, type TestServer } from "../api/helpers.js";
import { adminRows, PG_URL } from "../helpers/db.js";
import { DbProxy } from "./db-proxy.js";

/** A statement unanswered this long fails: short, so the test is quick (the default is 30 s). */
const ANSWER_TIMEOUT_MS = 1000;

describe.skipIf(!PG_URL)("fault: the network to PostgreSQL stalls (open sockets, no answers, no resets)", () => {
  const schema = `orbit_stall_${randomBytes(5).toString("hex")}`;
  beforeAll(() => adminRows(`CREATE SCHEMA ${schema}`));
  afterAll(() => adminRows(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));

  /** A server behind a fresh proxy with a 10 s schedule `id` that has fired once (the pool is warm). */
  async function firingBehindProxy(id: string): Promise<{ t: TestServer; proxy: DbProxy }> {
    const target = new URL(PG_URL!);
    const proxy = new DbProxy(target.hostname, Number(target.port || 5432));
    await proxy.up();
    const t = await startTestServer({
      database: proxy.url(PG_URL!),
      databaseSchema: schema,
      databaseAnswerTimeoutMs: ANSWER_TIMEOUT_MS,
    });
    await t.registerOrders();
    // No worker runs the executions: `allow` starts each occurrence anyway (the default skips it).
    const body = {
      schedule_id: id,
      workflow: "OrderProcessing",
      interval: "10s",
      overlap: "allow",
      input: ORDER_INPUT,
    };
    expect((await t.call("POST", "/v1/schedules", body)).status).toBe(201);
    await firedAtLeast(t, id, 1);
    return { t, proxy };
  }

  /** Moves the test clock a second at a time until `id` has fired `n` times (an event of the server's). */
  function firedAtLeast(t: TestServer, id: string, n: number): Promise<number> {
    return t.until(
      async () => {
        t.clock.advance(1000);
        const r = await t.call("GET", `/v1/schedules/${id}`);
        return r.status === 200 ? (r.body as { fired: number }).fired : -1;
      },
      (fired) => fired >= n,
      `${id} to fire ${n} times`,
    );
  }

  /** Every occurrence of `id` is in its ledger once, and each started one has its one execution. */
  async function expectOnce(id: string): Promise<void> {
    const doubled = await adminRows(
      `SELECT occurrence_ms, count(*) AS n FROM ${schema}.orbit_occurrences
       WHERE schedule_id = $1 GROUP BY occurrence_ms HAVING count(*) > 1`,
      [id],
    );
    expect(doubled).toEqual([]);
    const [row] = await adminRows<{ fired: string; started: string; executions: string }>(
      `SELECT (SELECT fired FROM ${schema}.orbit_schedules WHERE schedule_id = $1) AS fired,
              (SELECT count(*) FROM ${schema}.orbit_occurrences WHERE schedule_id = $1 AND kind = 'started') AS started,
              (SELECT count(*) FROM ${schema}.orbit_executions e JOIN ${schema}.orbit_occurrences o
                 ON o.execution_id = e.execution_id WHERE o.schedule_id = $1 AND o.kind = 'started') AS executions`,
      [id],
    );
    expect(Number(row?.started)).toBe(Number(row?.fired));
    expect(Number(row?.executions)).toBe(Number(row?.fired));
  }

  it("answers 503 while it lasts (/readyz, a read, a trigger), then recovers by itself and fires once per occurrence", async () => {
    const { t, proxy } = await firingBehindProxy("stall-tick");
    try {
      const before = (await t.call("GET", "/v1/schedules/stall-tick")).body as { fired: number };
      proxy.stall();
      // The pool's connections are open and silent: each statement waits for its bound, then 503.
      const [ready, read, trigger] = await Promise.all([
        t.call("GET", "/readyz"),
        t.call("GET", "/v1/schedules/stall-tick"),
        t.call("POST", "/v1/schedules/stall-tick/trigger"),
      ]);
      expect(ready.status).toBe(503);
      expect(ready.body).toMatchObject({ status: "not_ready", message: expect.stringContaining("database") });
      expect(read.status).toBe(503);
      expect(read.body).toMatchObject({ code: "UNAVAILABLE" });
      expect(trigger.status).toBe(503);
      expect(trigger.body).toMatchObject({ code: "UNAVAILABLE" });
      // An occurrence comes due inside the stall: the firing loop meets it too, and retries.
      t.clock.advance(10_000);
      expect((await t.call("GET", "/readyz")).status).toBe(503);

      proxy.resume();
      await t.until(
        async () => (await t.call("GET", "/readyz")).status,
        (s) => s === 200,
        "ready again after the stall",
      );
      expect((await t.call("GET", "/v1/schedules/stall-tick")).status).toBe(200);
      await firedAtLeast(t, "stall-tick", before.fired + 2);
      await expectOnce("stall-tick");
    } finally {
      proxy.resume();
      await t.stop();
      await proxy.down();
    }
  }, 60_000);

  it("a fire whose COMMIT reached the database but whose answer did not starts its occurrence once", async () => {
    const { t, proxy } = await firingBehindProxy("stall-commit");
    try {
      const [row] = await adminRows<{ fired: string }>(
        `SELECT fired FROM ${schema}.orbit_schedules WHERE schedule_id = 'stall-commit'`,
      );
      const before = Number(row?.fired);
      // The fire's transaction is the one that sends the next occurrence's execution id.
      const next = (await t.call("GET", "/v1/schedules/stall-commit")).body as { next_fire_at: string };
      const commitSent = proxy.stallAfterCommit(`stall-commit:${next.next_fire_at}`);
      t.clock.advance(10_000); // the next occurrence is due: the loop fires it, its COMMIT goes out
      await commitSent;
      // The database committed the fire; the server never hears so (the transaction fails after its bound).
      await t.until(
        async () =>
          Number(
            (
              await adminRows<{ fired: string }>(
                `SELECT fired FROM ${schema}.orbit_schedules WHERE schedule_id = 'stall-commit'`,
              )
            )[0]?.fired,
          ),
        (fired) => fired > before,
        "the stalled fire's commit in the database",
      );
      expect((await t.call("GET", "/v1/schedules/stall-commit")).status).toBe(503);

      proxy.resume();
      await t.until(
        async () => (await t.call("GET", "/readyz")).status,
        (s) => s === 200,
        "ready again after the stall",
      );
      await firedAtLeast(t, "stall-commit", before + 2);
      await expectOnce("stall-commit");
    } finally {
      proxy.resume();
      await t.stop();
      await proxy.down();
    }
  }, 60_000);
});
