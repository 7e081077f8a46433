/** /v1/workflows and /v1/executions over HTTP, and the request-level refusals (JSON, size, keys). */
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { parseInstant } from "../../src/time/format.js";
import { ORDER_INPUT, ORDER_SCHEMA, SEED_NOW, SEED_SCHEDULE, startTestServer, type TestServer } from "./helpers.js";

let t: TestServer;
beforeEach(async () => {
  t = await startTestServer({ maxActiveExecutions: 2 });
});
afterEach(async () => {
  await t.stop();
});

describe("/v1/workflows", () => {
  it("registers (201), repeats identically (200), refuses another schema (409)", async () => {
    const body = { name: "OrderProcessing", version: "1.0.0", input_schema: ORDER_SCHEMA, description: "orders" };
    const first = await t.call("POST", "/v1/workflows", body);
    expect(first.status).toBe(201);
    expect(Object.keys(first.body)).toEqual([
      "name",
      "version",
      "input_schema",
      "description",
      "created_at",
      "deprecated_at",
    ]);
    expect((await t.call("POST", "/v1/workflows", body)).status).toBe(200);
    const other = await t.call("POST", "/v1/workflows", { ...body, input_schema: { type: "object" } });
    expect(other.status).toBe(409);
    expect(other.body.code).toBe("ALREADY_EXISTS");
    await t.call("POST", "/v1/workflows", { name: "OrderProcessing", version: "1.2.0" });
    const list = await t.call("GET", "/v1/workflows");
    expect(list.body.workflows.map((w: { version: string }) => w.version)).toEqual(["1.2.0", "1.0.0"]);
    const one = await t.call("GET", "/v1/workflows/OrderProcessing");
    expect(one.body.name).toBe("OrderProcessing");
    expect(one.body.versions.map((w: { version: string }) => w.version)).toEqual(["1.2.0", "1.0.0"]);
    expect((await t.call("GET", "/v1/workflows/Nope")).status).toBe(404);
  });

  it("refuses bad bodies naming the field", async () => {
    const missing = await t.call("POST", "/v1/workflows", { name: "A" });
    expect(missing.body).toEqual({ code: "INVALID_ARGUMENT", message: 'the request body needs "version"' });
    const extra = await t.call("POST", "/v1/workflows", { name: "A", version: "1.0.0", input_shema: {} });
    expect(extra.body.message).toMatch(
      /^unknown field "input_shema" in the request body; did you mean "input_schema"\?/,
    );
    const semver = await t.call("POST", "/v1/workflows", { name: "A", version: "v1" });
    expect(semver.body.message).toMatch(/is not a semver version/);
    expect((await t.call("GET", "/v1/workflows")).body.workflows).toEqual([]);
  });
});

describe("/v1/executions", () => {
  beforeEach(async () => {
    await t.registerOrders();
  });

  it("starts (201), returns an existing id (200), reads, lists, shows events, cancels", async () => {
    const start = { execution_id: "e-1", workflow: "OrderProcessing", input: ORDER_INPUT };
    const first = await t.call("POST", "/v1/executions", start);
    expect(first.status).toBe(201);
    expect(Object.keys(first.body)).toEqual([
      "execution_id",
      "workflow",
      "version",
      "input",
      "status",
      "schedule_id",
      "trigger",
      "result",
      "error",
      "created_at",
      "started_at",
      "ended_at",
      "run",
      "attempt",
    ]);
    expect((await t.call("POST", "/v1/executions", start)).status).toBe(200);
    t.clock.advance(1000);
    const second = await t.call("POST", "/v1/executions", { workflow: "OrderProcessing", version: "1.0.0" });
    expect(second.status).toBe(201);
    const page = await t.call("GET", "/v1/executions?limit=1");
    expect(page.body.executions[0].execution_id).toBe(second.body.execution_id);
    const next = await t.call("GET", `/v1/executions?limit=1&cursor=${page.body.next_cursor}`);
    expect(next.body.executions[0].execution_id).toBe("e-1");
    expect((await t.call("GET", "/v1/executions?status=COMPLETED")).body.executions).toEqual([]);
    expect((await t.call("GET", "/v1/executions/e-1")).body.status).toBe("RUNNING");
    const events = await t.call("GET", "/v1/executions/e-1/events");
    expect(events.body.events[0]).toMatchObject({ seq: 1, type: "WorkflowCreated" });
    const cancelled = await t.call("POST", "/v1/executions/e-1/cancel", { reason: "not needed" });
    expect(cancelled.body).toMatchObject({ status: "CANCELLED", cancel_reason: "not needed" });
    expect((await t.call("POST", "/v1/executions/nope/cancel")).status).toBe(404);
    expect((await t.call("GET", "/v1/executions/nope/events")).status).toBe(404);
  });

  it("gives a start the body's run_timeout and start_timeout, none when null (docs/outcomes.md § Timeouts)", async () => {
    const now = parseInstant(SEED_NOW);
    const both = { execution_id: "both", workflow: "OrderProcessing", input: ORDER_INPUT };
    expect((await t.call("POST", "/v1/executions", { ...both, start_timeout: "30s", run_timeout: "2h" })).status).toBe(
      201,
    );
    const none = { execution_id: "none", workflow: "OrderProcessing", input: ORDER_INPUT, run_timeout: null };
    expect((await t.call("POST", "/v1/executions", none)).status).toBe(201);
    // The deadlines are not in the execution's JSON: read them from the server's database.
    const store = new SqliteStore({ filename: join(t.dir, "orbit.db"), busyTimeoutMs: 5000 });
    await store.open();
    try {
      expect(await store.getExecutionDeadlines("both")).toEqual({
        startDeadlineMs: now + 30_000,
        runDeadlineMs: now + 7_200_000,
      });
      expect(await store.getExecutionDeadlines("none")).toEqual({ startDeadlineMs: null, runDeadlineMs: null });
    } finally {
      await store.close();
    }
  });

  it('refuses the execution ids "." and "..", which no URL can address, storing nothing', async () => {
    // Accepted before: /v1/executions/. reads as the list and /v1/executions/.. as /v1/, so the
    // execution could never be read, cancelled or have its events listed (as schedule ids already).
    for (const id of [".", ".."]) {
      const r = await t.call("POST", "/v1/executions", { execution_id: id, workflow: "OrderProcessing" });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({
        code: "INVALID_ARGUMENT",
        message: `execution_id "${id}" is invalid: it must not be "." or ".." (a URL cannot name it)`,
      });
    }
    expect((await t.call("GET", "/v1/executions")).body.executions).toEqual([]);
  });

  it("answers 429 RESOURCE_EXHAUSTED beyond --max-active-executions, storing nothing", async () => {
    for (const id of ["a", "b"])
      expect((await t.call("POST", "/v1/executions", { execution_id: id, workflow: "OrderProcessing" })).status).toBe(
        201,
      );
    const r = await t.call("POST", "/v1/executions", { execution_id: "c", workflow: "OrderProcessing" });
    expect(r.status).toBe(429);
    expect(r.body.code).toBe("RESOURCE_EXHAUSTED");
    expect(r.body.message).toMatch(/--max-active-executions/);
    expect((await t.call("GET", "/v1/executions/c")).status).toBe(404);
  });

  it("refuses input that breaks the schema, is deeper than 64 or larger than the body limit", async () => {
    const bad = await t.call("POST", "/v1/executions", { workflow: "OrderProcessing", input: { amount: "lots" } });
    expect(bad.body).toEqual({
      code: "INVALID_ARGUMENT",
      message: "input does not match OrderProcessing@1.0.0: /amount must be number",
    });
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 70; i++) deep = { d: deep };
    const tooDeep = await t.call("POST", "/v1/executions", { workflow: "OrderProcessing", input: deep });
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.body.message).toMatch(/64/);
    const big = await t.call("POST", "/v1/executions", {
      workflow: "OrderProcessing",
      input: { blob: "x".repeat(1_200_000) },
    });
    expect(big.status).toBe(400);
    expect(big.body.message).toMatch(/1 MB|1,048,576|1048576/);
    const huge = await t.call("POST", "/v1/executions", {
      workflow: "OrderProcessing",
      input: { blob: "x".repeat(3_000_000) },
    });
    expect(huge.status).toBe(400);
    expect(huge.body).toEqual({
      code: "INVALID_ARGUMENT",
      message: "the request body is larger than 2097152 bytes (2 MB); an input may be at most 1 MB",
    });
    expect((await t.call("GET", "/v1/executions")).body.executions).toEqual([]);
  });
});

describe("request-level refusals", () => {
  it("malformed JSON, a non-JSON body, unknown routes", async () => {
    const malformed = await t.call("POST", "/v1/schedules", "{not json");
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({ code: "INVALID_ARGUMENT", message: "the request body is not valid JSON" });
    const res = await fetch(`${t.server.url}/v1/schedules`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "hi",
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      code: "INVALID_ARGUMENT",
      message: "the request body must be JSON (content-type: application/json)",
    });
    const unknown = await t.call("GET", "/v1/nothing");
    expect(unknown.status).toBe(404);
    // Every answer says it is Orbit's (the client refuses a 2xx answer without it).
    expect(unknown.headers.get("orbit-version")).toMatch(/^\d+\.\d+\.\d+/);
    expect((await t.call("GET", "/v1/schedules")).headers.get("orbit-version")).toMatch(/^\d+\.\d+\.\d+/);
    // Fastify's refusals before routing too (a bad percent-encoding).
    const badPath = await t.call("GET", "/v1/schedules/%ZZ");
    expect(badPath.status).toBe(400);
    expect(badPath.headers.get("orbit-version")).toMatch(/^\d+\.\d+\.\d+/);
    expect(unknown.body).toEqual({ code: "NOT_FOUND", message: "no route GET /v1/nothing; see /v1/openapi.json" });
    // An unknown route quoted the whole URL back, 15,000 characters of it: a segment past the
    // limit is the 400 of a known route, a long path is cut.
    const long = await t.call("GET", `/v1/${"x".repeat(15_000)}`);
    expect(long.status).toBe(400);
    expect(long.body).toEqual({
      code: "INVALID_ARGUMENT",
      message: "a path segment of the URL is longer than 2048 characters; ids are at most 255",
    });
    // Measured decoded, as on a known route: 700 escaped letters are 700 characters.
    expect((await t.call("GET", `/v1/nothing/${"%61".repeat(700)}`)).status).toBe(404);
    const cut = await t.call("GET", `/v1/${"x".repeat(300)}`);
    expect(cut.status).toBe(404);
    expect(cut.body.message).toBe(`no route GET /v1/${"x".repeat(116)}… (304 characters); see /v1/openapi.json`);
    const nullBody = await t.call("POST", "/v1/schedules", "null");
    expect(nullBody.status).toBe(400);
  });

  it("a refused schedule create leaves no schedule behind", async () => {
    await t.registerOrders();
    const r = await t.call("POST", "/v1/schedules", { ...SEED_SCHEDULE, input: { amount: "lots" } });
    expect(r.status).toBe(400);
    expect((await t.call("GET", "/v1/schedules")).body.schedules).toEqual([]);
  });
});
