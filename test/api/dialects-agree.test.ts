/**
 * The same requests to a server on SQLite and one on PostgreSQL, on clocks at the same instant,
 * get the same answers, byte for byte once generated ids are masked: field order, key order inside
 * what callers gave (inputs, results, errors, step results, event data), numbers, messages. Most
 * suites run on both stores but compare values, which a reordered object still equals; this one
 * found that PostgreSQL's JSONB gave executions back with their keys reordered (docs/storage.md §
 * JSON columns). Needs ORBIT_TEST_DATABASE_URL.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminQuery, PG_URL } from "../helpers/db.js";
import { type Answer, startTestServer, type TestServer } from "./helpers.js";

if (!PG_URL) console.warn("skipped: test/api/dialects-agree.test.ts: ORBIT_TEST_DATABASE_URL is not set");

/**
 * Ids made of randomness (task ids, executions started without an id, and trace ids, which a test
 * file that registered an OpenTelemetry SDK in the same process makes non-null): the rest must match.
 */
const masked = (text: string): string =>
  text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uuid>")
    .replace(/"00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]"/g, '"<traceparent>"');

describe.skipIf(!PG_URL)("SQLite and PostgreSQL answer alike", () => {
  const schema = `orbit_agree_${randomBytes(5).toString("hex")}`;
  let servers: TestServer[] = [];
  beforeAll(async () => {
    await adminQuery(`CREATE SCHEMA ${schema}`);
    servers = [await startTestServer(), await startTestServer({ database: PG_URL!, databaseSchema: schema })];
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });

  /** The request on both servers; their answers must be equal; the SQLite one is returned. */
  async function both(method: string, path: string, body?: unknown): Promise<Answer> {
    const [lite, pg] = [await servers[0]!.call(method, path, body), await servers[1]!.call(method, path, body)];
    expect(`${pg?.status} ${masked(pg?.text ?? "")}`, `${method} ${path} on PostgreSQL`).toBe(
      `${lite?.status} ${masked(lite?.text ?? "")}`,
    );
    return lite as Answer;
  }

  /** A worker's call, on each server with that server's own task id. */
  async function eachTask(path: (taskId: string) => string, body: unknown, taskIds: string[]): Promise<void> {
    const answers: string[] = [];
    for (const [i, s] of servers.entries()) {
      const r = await s.call("POST", path(taskIds[i] ?? ""), body);
      answers.push(`${r.status} ${masked(r.text)}`);
    }
    expect(answers[1], `${path("<task>")} on PostgreSQL`).toBe(answers[0]);
  }

  async function poll(workflow: string, version: string): Promise<string[]> {
    const body = { worker_id: "w1", workflows: [{ name: workflow, version, max_attempts: 1, backoff_ms: 1000 }] };
    const ids: string[] = [];
    const answers: string[] = [];
    for (const s of servers) {
      const r = await s.call("POST", "/v1/worker/poll", { ...body, max_tasks: 1, wait_ms: 1000 });
      expect(r.body.tasks.length, r.text).toBe(1);
      ids.push(r.body.tasks[0].task_id);
      answers.push(masked(r.text));
    }
    expect(answers[1], `poll ${workflow} on PostgreSQL`).toBe(answers[0]);
    return ids;
  }

  it("from workflows and schedules through a fire, a worker's steps, a completion and a failure", async () => {
    await both("POST", "/v1/workflows", {
      name: "OrderProcessing",
      version: "1.0.0",
      input_schema: { type: "object", properties: { order_id: { type: "string" } } },
    });
    await both("POST", "/v1/workflows", { name: "report", version: "2.0.0", description: "the nightly report" });
    // The seed's body as text: `120.0` must come back as written on both.
    await both(
      "POST",
      "/v1/schedules",
      '{"schedule_id": "orders-every-10s", "workflow": "OrderProcessing", "interval": "10s", "input": {"order_id": "R-1", "customer_id": "cust-1", "amount": 120.0, "items": [{"sku": "BOOK-1", "quantity": 1}]}}',
    );
    await both("POST", "/v1/schedules", {
      schedule_id: "nightly",
      workflow: "report",
      cron: "30 2 * * *",
      timezone: "Europe/Berlin",
      input: { zeta: 1, alpha: { yy: 2, b: 3 }, list: [{ q: 1, aa: 2 }] },
      description: "report at 02:30 Berlin",
    });
    await both("POST", "/v1/schedules", { schedule_id: "nightly", workflow: "report", cron: "0 1 * * *" });
    await both("POST", "/v1/schedules", { schedule_id: "bad", workflow: "report", cron: "61 * * * *" });
    await both("GET", "/v1/schedules");
    await both("GET", "/v1/schedules?q=berlin");
    await both("GET", "/v1/schedules/nightly");

    // The seed schedule's first occurrence fires on both.
    for (const s of servers) {
      s.clock.set(Date.parse("2026-11-15T18:51:10Z"));
      await s.until(
        async () => (await s.call("GET", "/v1/schedules/orders-every-10s")).body.fired,
        (n) => n === 1,
        "the first fire",
      );
    }
    await both("GET", "/v1/schedules/orders-every-10s");
    await both("POST", "/v1/schedules/nightly/trigger", { input: { z: 1, a: [{ y: 1, b: 2 }] } });
    await both("POST", "/v1/schedules/nightly/backfill", {
      start_at: "2026-03-28T00:00:00Z",
      end_at: "2026-03-30T00:00:00Z",
    });

    // A worker runs the triggered report: a step, then its result.
    const manual = "nightly:manual:2026-11-15T18:51:10.000Z";
    const reportTasks = await poll("report", "2.0.0");
    await eachTask(
      (id) => `/v1/worker/tasks/${id}/steps`,
      {
        worker_id: "w1",
        step: "gather",
        seq: 1,
        result: { rows: 3, by: { team: "b", area: "a" } },
        compensable: false,
      },
      reportTasks,
    );
    await eachTask(
      (id) => `/v1/worker/tasks/${id}/complete`,
      { worker_id: "w1", result: { zz: 1, a: [{ y: 1, b: 2 }], mm: null } },
      reportTasks,
    );
    // And fails the fired order for good.
    const orderTasks = await poll("OrderProcessing", "1.0.0");
    await eachTask(
      (id) => `/v1/worker/tasks/${id}/fail`,
      {
        worker_id: "w1",
        error: { message: "card declined", type: "Declined", details: { z: 1, a: 2 } },
        retryable: false,
      },
      orderTasks,
    );

    await both("GET", `/v1/executions/${encodeURIComponent(manual)}`);
    await both("GET", `/v1/executions/${encodeURIComponent(manual)}/events`);
    await both("GET", "/v1/executions/orders-every-10s%3A2026-11-15T18%3A51%3A10Z");
    await both("GET", "/v1/executions/orders-every-10s%3A2026-11-15T18%3A51%3A10Z/events");
    await both("GET", "/v1/executions?limit=10");
    await both("GET", "/v1/executions?status=FAILED");
    await both("GET", "/v1/schedules/nightly/occurrences");
    await both("GET", "/v1/schedules/orders-every-10s/occurrences");
    await both("GET", "/v1/schedules?outcome=failed");
    await both("GET", "/v1/workflows");

    await both("POST", "/v1/executions/nightly%3A2026-03-28T01%3A30%3A00Z/cancel", { reason: "not needed" });
    await both("GET", "/v1/executions/nightly%3A2026-03-28T01%3A30%3A00Z/events");
    await both("POST", "/v1/executions/orders-every-10s%3A2026-11-15T18%3A51%3A10Z/retry", {});
    await both("PATCH", "/v1/workflows/report/settings", { run_timeout: "5m", start_timeout: "1h" });
    await both("GET", "/v1/workflows/report/settings");
    await both("GET", "/v1/workers");
    await both("PATCH", "/v1/schedules/nightly", { input: { b: 1, a: 2 }, description: null });
    await both("POST", "/v1/schedules/nightly/pause", { note: "holiday" });
    await both("POST", "/v1/schedules/nightly/resume", { catch_up: false });
    await both("DELETE", "/v1/schedules/nightly");
    await both("GET", "/v1/schedules/nightly");
    await both("GET", "/v1/schedules");
  });

  it("starts a schedule's input in its key order after a PATCH of another setting", async () => {
    // The PATCH rewrote the input from the settings PostgreSQL keeps as JSONB: executions started
    // after it got {"alpha", "zeta"} where the schedule shows {"zeta", "alpha"}.
    await both("POST", "/v1/workflows", { name: "patched-input", version: "1.0.0" });
    await both("POST", "/v1/schedules", {
      schedule_id: "patched",
      workflow: "patched-input",
      interval: "1h",
      input: { zeta: 1, alpha: { yy: 2, b: 3 } },
    });
    await both("PATCH", "/v1/schedules/patched", { description: "renamed" });
    const started = await both("POST", "/v1/schedules/patched/trigger", {});
    const execution = await both("GET", `/v1/executions/${encodeURIComponent(started.body.execution_id)}`);
    expect(execution.text).toContain('"input":{"zeta":1,"alpha":{"yy":2,"b":3}}');
  });
});
