/**
 * Fault suite, PostgreSQL (docs/security.md "Faults"): the server's own database connections are
 * terminated with pg_terminate_backend while eight clients write. Scoped by application_name to this
 * test's server, so other suites on the same PostgreSQL are untouched. The server must stay up (an
 * unhandled 'error' event would fail the test run), answer only 2xx or 503 UNAVAILABLE, keep every
 * write it acknowledged, report not-ready while the database refuses it, and fire again afterwards.
 */
import { randomBytes } from "node:crypto";
import { type AddressInfo, createServer } from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LEADERSHIP_QUERY_TIMEOUT_MS, Leadership } from "../../src/server/leadership.js";
import { PostgresListener } from "../../src/store/postgres/listener.js";
import { CONNECT_TIMEOUT_MS, PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { ORDER_INPUT, startTestServer } from "../api/helpers.js";
import { adminRows, PG_URL } from "../helpers/db.js";
import { DbProxy } from "./db-proxy.js";

/** Terminates every backend of one application name; resolves to how many there were. */
async function terminate(appName: string): Promise<number> {
  const rows = await adminRows<{ n: string }>(
    "SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE application_name = $1",
    [appName],
  );
  return Number(rows[0]?.n ?? 0);
}

function withAppName(url: string, appName: string): string {
  const u = new URL(url);
  u.searchParams.set("application_name", appName);
  return u.toString();
}

describe.skipIf(!PG_URL)("fault: the server's PostgreSQL connections are terminated under write load", () => {
  const schema = `orbit_fault_${randomBytes(5).toString("hex")}`;
  beforeAll(() => adminRows(`CREATE SCHEMA ${schema}`));
  afterAll(() => adminRows(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));

  it.each(["single", "active-standby"] as const)(
    "%s: stays up, answers 2xx or 503, keeps every acknowledged write and fires again",
    async (cluster) => {
      const appName = `orbit_fault_${randomBytes(4).toString("hex")}`;
      const t = await startTestServer({ database: withAppName(PG_URL!, appName), databaseSchema: schema, cluster });
      try {
        await t.registerOrders();
        const created = await t.call("POST", "/v1/schedules", {
          schedule_id: `tick-${cluster}`,
          workflow: "OrderProcessing",
          interval: "10s",
          input: ORDER_INPUT,
        });
        expect(created.status).toBe(201);

        const acked: string[] = [];
        const statuses = new Map<number, number>();
        let stop = false;
        const writer = async (w: number) => {
          for (let i = 0; !stop; i++) {
            const id = `${cluster}-w${w}-${i}`;
            const body = { execution_id: id, workflow: "OrderProcessing", input: ORDER_INPUT };
            const r = await t.call("POST", "/v1/executions", body);
            statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
            if (r.status >= 200 && r.status < 300) acked.push(id);
            else expect(r.body).toEqual({ code: "UNAVAILABLE", message: expect.stringContaining("database") });
          }
        };
        const writers = Array.from({ length: 8 }, (_, w) => writer(w));
        const ackedAtLeast = (n: number) =>
          t.until(
            async () => acked.length,
            (k) => k >= n,
            `${n} acknowledged writes`,
          );
        let terminated = 0;
        for (let round = 1; round <= 5; round++) {
          await ackedAtLeast(round * 25);
          terminated += await terminate(appName);
        }
        // Recovery: writes are acknowledged again after the last termination.
        const afterLast = acked.length;
        await ackedAtLeast(afterLast + 25);
        stop = true;
        await Promise.all(writers);

        expect(terminated).toBeGreaterThan(5);
        expect([...statuses.keys()].filter((s) => s !== 201 && s !== 503)).toEqual([]);
        const stored = await adminRows<{ execution_id: string }>(
          `SELECT execution_id FROM ${schema}.orbit_executions WHERE execution_id = ANY($1)`,
          [acked],
        );
        const present = new Set(stored.map((r) => r.execution_id));
        expect(acked.filter((id) => !present.has(id))).toEqual([]);

        // The firing loop survived its failed rounds and fires the next occurrence.
        await t.until(
          async () => (await t.call("GET", "/readyz")).status,
          (s) => s === 200,
          "ready again",
        );
        await t.until(
          async () => {
            t.clock.advance(1000);
            return (await t.call("GET", `/v1/schedules/tick-${cluster}`)).body.fired;
          },
          (n) => n >= 1,
          "the schedule to fire after the terminations",
        );
        console.log(
          `pg-terminate ${cluster}: ${terminated} backends terminated in 5 rounds; answers ${JSON.stringify(Object.fromEntries(statuses))}; ${acked.length} acknowledged writes, all stored`,
        );
      } finally {
        await t.stop();
      }
    },
    60_000,
  );

  it("a connection terminated the moment it is ready fails its transaction or migration 503, never the process", async () => {
    // The FATAL comes in the same read as the ReadyForQuery that completed the connection: before
    // the pool's caller could listen on the client unless it listens inside the hand-over (an
    // unhandled 'error' event then fails this file, and kills a server).
    const target = new URL(PG_URL!);
    const proxy = new DbProxy(target.hostname, Number(target.port || 5432));
    await proxy.up();
    const store = new PostgresStore({ connectionString: proxy.url(PG_URL!), searchPath: schema });
    try {
      await store.open();
      expect(store.outageCount()).toBe(0);
      await proxy.down(); // the pool's idle connection goes: each transaction below connects anew
      proxy.terminateWhenReady = true;
      await proxy.up();
      for (let i = 0; i < 5; i++) {
        await expect(store.transaction((tx) => tx.getExecution("none"))).rejects.toMatchObject({ code: "UNAVAILABLE" });
      }
      // Counted: the lease reaper of a server no worker talks to owes the leases a grace for them.
      expect(store.outageCount()).toBeGreaterThanOrEqual(5);
      // A server starting meets it in its migration's connection.
      const starting = new PostgresStore({ connectionString: proxy.url(PG_URL!), searchPath: schema });
      await expect(starting.open()).rejects.toMatchObject({ code: "UNAVAILABLE" });
      proxy.terminateWhenReady = false;
      expect(await store.transaction((tx) => tx.getExecution("none"))).toBeNull();
    } finally {
      await store.close();
      await proxy.down();
    }
  });

  it("a connection attempt that gets no answer fails 503 after the connect timeout, not the pool's wait", async () => {
    // A listener that accepts and never answers: the attempt hangs until the client's own timeout.
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", () => resolve()));
    const { port } = silent.address() as AddressInfo;
    const store = new PostgresStore({
      connectionString: `postgres://postgres@127.0.0.1:${port}/test`,
      connectTimeoutMs: 200,
      poolWaitMs: 600_000,
    });
    try {
      // Said as a stalled statement is (pg's own words were only "timeout expired").
      await expect(store.open()).rejects.toMatchObject({
        code: "UNAVAILABLE",
        message:
          "could not connect to the database within 200 ms (a network stall, a firewall dropping packets, or a frozen or overloaded database host); retry shortly",
      });
      // The LISTEN and leadership connections, on their own clients, say it alike in the log.
      const said: string[] = [];
      const listener = new PostgresListener({
        connectionString: `postgres://postgres@127.0.0.1:${port}/test`,
        channel: "orbit_nothing",
        onNotify: () => undefined,
        onError: (err) => said.push(err.message),
        retryMs: 600_000,
      });
      const leadership = new Leadership({
        connectionString: `postgres://postgres@127.0.0.1:${port}/test`,
        onError: (err) => said.push((err as Error).message),
      });
      try {
        await Promise.all([listener.startOrRetry(), leadership.start()]);
      } finally {
        await Promise.all([listener.close(), leadership.close()]);
      }
      expect(said.sort()).toEqual(
        [
          `could not connect to the database within ${CONNECT_TIMEOUT_MS} ms (a network stall, a firewall dropping packets, or a frozen or overloaded database host); retry shortly`,
          `could not connect to the database within ${LEADERSHIP_QUERY_TIMEOUT_MS} ms (a network stall, a firewall dropping packets, or a frozen or overloaded database host); retry shortly`,
        ].sort(),
      );
    } finally {
      await store.close();
      silent.close();
    }
  });

  it("survives the database going away and coming back: 503 and not-ready meanwhile, then recovers by itself", async () => {
    const target = new URL(PG_URL!);
    const proxy = new DbProxy(target.hostname, Number(target.port || 5432));
    await proxy.up();
    const t = await startTestServer({ database: proxy.url(PG_URL!), databaseSchema: schema });
    try {
      await t.registerOrders();
      const start = (id: string) =>
        t.call("POST", "/v1/executions", { execution_id: id, workflow: "OrderProcessing", input: ORDER_INPUT });
      expect(
        (
          await t.call("POST", "/v1/schedules", {
            schedule_id: "restart-tick",
            workflow: "OrderProcessing",
            interval: "10s",
            input: ORDER_INPUT,
          })
        ).status,
      ).toBe(201);
      expect((await start("before-restart")).status).toBe(201);

      await proxy.down();
      const during = await start("during-restart");
      expect(during.status).toBe(503);
      expect(during.body.code).toBe("UNAVAILABLE");
      expect((await t.call("GET", "/v1/schedules/restart-tick")).status).toBe(503);
      const ready = await t.call("GET", "/readyz");
      expect(ready.status).toBe(503);
      expect(ready.body.message).toMatch(/database/);
      expect((await t.call("GET", "/healthz")).status).toBe(200);
      // The firing loop meets the outage too, and keeps retrying.
      t.clock.advance(10_000);

      await proxy.up();
      await t.until(
        async () => (await t.call("GET", "/readyz")).status,
        (s) => s === 200,
        "ready again",
      );
      expect((await start("after-restart")).status).toBe(201);
      await t.until(
        async () => {
          t.clock.advance(1000);
          return (await t.call("GET", "/v1/schedules/restart-tick")).body.fired;
        },
        (n) => n >= 1,
        "firing after the restart",
      );
      const ids = await adminRows<{ execution_id: string }>(
        `SELECT execution_id FROM ${schema}.orbit_executions WHERE execution_id LIKE '%restart' ORDER BY 1`,
      );
      expect(ids.map((r) => r.execution_id)).toEqual(["after-restart", "before-restart"]);
    } finally {
      await t.stop();
      await proxy.down();
    }
  }, 60_000);
});

describe.skipIf(!PG_URL)("fault: PostgreSQL not reachable yet when a server starts", () => {
  const schema = `orbit_wait_${randomBytes(5).toString("hex")}`;
  beforeAll(async () => {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`CREATE SCHEMA ${schema}`);
    await client.end();
  });
  afterAll(async () => {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  });

  it("waits for it, a try every second, and starts once it answers (it exited at the first refusal)", async () => {
    const target = new URL(PG_URL!);
    const proxy = new DbProxy(target.hostname, Number(target.port || 5432));
    await proxy.up();
    const url = proxy.url(PG_URL!);
    await proxy.down(); // the port refuses until the database "comes up"
    const starting = startTestServer({ database: url, databaseSchema: schema, databaseWaitMs: 20_000 });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await proxy.up();
    const t = await starting;
    try {
      expect((await t.call("GET", "/readyz")).status).toBe(200);
    } finally {
      await t.stop();
      await proxy.down();
    }
    // databaseWaitMs 0: the first refusal fails the start, naming the URL and the cause.
    await expect(startTestServer({ database: url, databaseSchema: schema, databaseWaitMs: 0 })).rejects.toThrow(
      /^cannot open PostgreSQL at .*: the database is unavailable/,
    );
    // A start that waited and gave up says so: it ended on the outage's own "retry shortly".
    const gaveUp = startTestServer({ database: url, databaseSchema: schema, databaseWaitMs: 1500 });
    await expect(gaveUp).rejects.toThrow(
      /^cannot open PostgreSQL at .*: still unreachable after trying for 1500 ms: the database is unavailable \(.*ECONNREFUSED.*\); start it, or wait longer with --database-wait$/,
    );
  }, 60_000);
});

describe.skipIf(!PG_URL)("fault: a LISTEN connection refused at start-up", () => {
  const suffix = randomBytes(5).toString("hex");
  const role = `orbit_fault_role_${suffix}`;
  const schema = `orbit_fault_listen_${suffix}`;
  beforeAll(async () => {
    // One connection for the role: the store's pool holds it after migrating, so every LISTEN
    // connection the server opens next is refused ("too many connections for role").
    await adminRows(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT 1`);
    await adminRows(`CREATE SCHEMA ${schema} AUTHORIZATION ${role}`);
  });
  afterAll(async () => {
    await adminRows(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await adminRows(`DROP ROLE IF EXISTS ${role}`);
  });

  it.each(["single", "shared"] as const)(
    "%s: the server starts, then listens once the database lets it",
    async (cluster) => {
      // It failed the start as "cannot listen on 127.0.0.1:<port>: too many connections for role",
      // blaming the HTTP address for a database refusal (found terminating backends during starts).
      const url = new URL(PG_URL!);
      url.username = role;
      url.password = "";
      const t = await startTestServer({ database: url.toString(), databaseSchema: schema, cluster });
      try {
        await adminRows(`ALTER ROLE ${role} CONNECTION LIMIT -1`);
        const channels =
          cluster === "single"
            ? ["LISTEN orbit_worker_tasks"]
            : ["LISTEN orbit_schedules", "LISTEN orbit_worker_tasks"];
        await t.until(
          async () =>
            (
              await adminRows<{ query: string }>(
                "SELECT query FROM pg_stat_activity WHERE usename = $1 AND query LIKE 'LISTEN %' ORDER BY query",
                [role],
              )
            ).map((r) => r.query),
          (q) => JSON.stringify(q) === JSON.stringify(channels),
          "the LISTEN connections",
        );
        expect((await t.call("GET", "/readyz")).status).toBe(200);
      } finally {
        await t.stop();
        await adminRows(`ALTER ROLE ${role} CONNECTION LIMIT 1`);
      }
    },
    30_000,
  );
});
