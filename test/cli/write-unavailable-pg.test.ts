/**
 * A write whose COMMIT reached PostgreSQL but whose answer did not (a tester's proxy swallowed 30%
 * of COMMIT answers): the server answers 503 UNAVAILABLE, and `orbit schedule trigger` said "retry
 * shortly", exit 1, though the execution had started; the retry it asked for started a second one
 * under `overlap: allow`. Now the CLI repeats the write with the same Idempotency-Key, which a real
 * server answers with the first answer: one execution, exit 0. The answer is lost by a proxy that
 * passes the COMMIT on and then stalls (test/faults/db-proxy.ts); the stall ends during the CLI's
 * wait between tries.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ORDER_INPUT, startTestServer } from "../api/helpers.js";
import { DbProxy } from "../faults/db-proxy.js";
import { adminRows, PG_URL } from "../helpers/db.js";
import { runCli } from "./run-cli.js";

describe.skipIf(!PG_URL)("a write whose COMMIT answer was lost (PostgreSQL)", () => {
  const schema = `orbit_cli_commit_${randomBytes(5).toString("hex")}`;
  beforeAll(() => adminRows(`CREATE SCHEMA ${schema}`));
  afterAll(() => adminRows(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));

  it("orbit schedule trigger repeats it with its key: one execution, and its answer (exit 0)", async () => {
    const target = new URL(PG_URL!);
    const proxy = new DbProxy(target.hostname, Number(target.port || 5432));
    await proxy.up();
    // A statement unanswered 1 s fails 503 (the default is 30 s).
    const t = await startTestServer({
      database: proxy.url(PG_URL!),
      databaseSchema: schema,
      databaseAnswerTimeoutMs: 1000,
    });
    try {
      await t.registerOrders();
      const body = {
        schedule_id: "trig",
        workflow: "OrderProcessing",
        interval: "1h",
        overlap: "allow",
        input: ORDER_INPUT,
      };
      expect((await t.call("POST", "/v1/schedules", body)).status).toBe(201);
      // The key is a parameter of the trigger's transaction only: the proxy stalls after its COMMIT.
      const key = `cli-commit-lost-${randomBytes(4).toString("hex")}`;
      const commitSent = proxy.stallAfterCommit(key);
      const waits: number[] = [];
      const r = await runCli(["schedule", "trigger", "trig", "--idempotency-key", key], {
        env: { ORBIT_SERVER: t.server.url },
        // The first try was answered 503: the database comes back before the second.
        sleep: async (ms) => {
          waits.push(ms);
          await commitSent;
          proxy.resume();
          await t.until(
            async () => (await t.call("GET", "/readyz")).status,
            (s) => s === 200,
            "ready again after the stall",
          );
        },
      });
      // One line says the CLI tries again (the server had answered 503), and nothing else.
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(
        /^orbit: the server answered 503 UNAVAILABLE \(the database did not answer [^\n]*; trying again with the same Idempotency-Key \(up to 4 more tries, 0\.5 s to 4 s apart\)\n$/,
      );
      expect(waits).toHaveLength(1);
      const started = /^started execution (trig:manual:\S+)\n$/.exec(r.stdout)?.[1];
      expect(started, r.stdout).toBeDefined();
      const executions = await adminRows<{ execution_id: string }>(
        `SELECT execution_id FROM ${schema}.orbit_executions WHERE schedule_id = 'trig'`,
      );
      expect(executions.map((e) => e.execution_id)).toEqual([started]);
    } finally {
      proxy.resume();
      await t.stop();
      await proxy.down();
    }
  }, 60_000);
});
