/** Health, readiness, metrics, the OpenAPI document, the docs/errors.md registry and shutdown. */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ServerMetrics } from "../../src/api/metrics.js";
import { ERROR_CODES, OrbitError } from "../../src/domain/errors.js";
import { startServer } from "../../src/server/server.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import { makeHarness } from "../scheduler/harness.js";
import { SEED_SCHEDULE, startTestServer, type TestServer } from "./helpers.js";

let t: TestServer;
beforeEach(async () => {
  t = await startTestServer();
});
afterEach(async () => {
  await t.stop();
});

describe("health and readiness", () => {
  it("/healthz and /readyz", async () => {
    expect((await t.call("GET", "/healthz")).body).toEqual({ status: "ok" });
    expect((await t.call("GET", "/readyz")).body).toEqual({ status: "ready", role: "single" });
  });
});

describe("/metrics", () => {
  it("shows the schedule metrics after a fire, on a registry of its own", async () => {
    await t.registerOrders();
    await t.call("POST", "/v1/schedules", SEED_SCHEDULE);
    t.clock.set(Date.parse("2026-11-15T18:51:10Z"));
    await t.until(
      async () => (await t.call("GET", "/v1/schedules/orders-every-10s")).body.fired,
      (n) => n === 1,
      "a fire",
    );
    // The execution is still RUNNING: the next occurrence is skipped by the overlap policy.
    t.clock.set(Date.parse("2026-11-15T18:51:20Z"));
    await t.until(
      async () => (await t.call("GET", "/v1/schedules/orders-every-10s")).body.skipped,
      (n) => n === 1,
      "a skip",
    );
    const r = await t.call("GET", "/metrics");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(r.text).toMatch(/^orbit_schedules_fired_total 1$/m);
    expect(r.text).toMatch(/^orbit_schedules_skipped_total\{reason="overlap"\} 1$/m);
    expect(r.text).toMatch(/^orbit_schedule_fire_lag_seconds_count 1$/m);
    expect(r.text).toMatch(/^orbit_schedules_overdue 0$/m);
    expect(r.text).toMatch(/^orbit_executions\{status="RUNNING"\} 1$/m);
    expect(r.text).toMatch(
      /^orbit_http_request_duration_seconds_count\{method="GET",route="\/v1\/schedules\/:id",status="200"\} \d+$/m,
    );
    expect(r.text).toMatch(/^process_cpu_user_seconds_total /m);
    expect(r.text).toMatch(/^orbit_database_up 1$/m);
  });

  it("counts a trigger skipped for another schedule's concurrency key under reason concurrency, not overlap", async () => {
    await t.registerOrders();
    const keyed = (id: string) => ({ ...SEED_SCHEDULE, schedule_id: id, interval: "1h", concurrency_key: "k" });
    await t.call("POST", "/v1/schedules", keyed("a"));
    await t.call("POST", "/v1/schedules", keyed("b"));
    expect((await t.call("POST", "/v1/schedules/a/trigger", {})).status).toBe(201);
    const held = await t.call("POST", "/v1/schedules/b/trigger", {});
    expect(held.body.message).toBe("not started: another schedule's execution holds concurrency key k");
    expect((await t.call("POST", "/v1/schedules/a/trigger", {})).body.started).toBe(false);
    const r = await t.call("GET", "/metrics");
    expect(r.text).toMatch(/^orbit_schedules_skipped_total\{reason="concurrency"\} 1$/m);
    expect(r.text).toMatch(/^orbit_schedules_skipped_total\{reason="overlap"\} 1$/m);
    expect(r.text).toMatch(/^orbit_schedules_fired_total 1$/m);
  });

  it("still answers a scrape with the database away: its own metrics, orbit_database_up 0, the database's unknown", async () => {
    const away = (): never => {
      throw new OrbitError("UNAVAILABLE", "the database is unavailable (connect ECONNREFUSED); retry shortly");
    };
    const store = new Proxy({} as Store, { get: () => async () => away() });
    const metrics = new ServerMetrics({ store, graceMs: 60_000, now: async () => 0 });
    const text = await metrics.text();
    expect(text).toMatch(/^orbit_database_up 0$/m);
    expect(text).toMatch(/^orbit_schedules_fired_total 0$/m);
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
    expect(text).not.toMatch(/^orbit_executions\{/m);
    expect(text).toMatch(/^orbit_schedules_overdue NaN$/m); // as the exposition format spells it (prom-client writes "Nan")
    // Another failure than the database's absence still fails the scrape.
    const broken = new Proxy({} as Store, {
      get: () => async () => {
        throw new Error("a bug");
      },
    });
    await expect(new ServerMetrics({ store: broken, graceMs: 60_000, now: async () => 0 }).text()).rejects.toThrow(
      "a bug",
    );
  });

  it("counts a schedule overdue when it is due longer ago than the grace and not fired", async () => {
    const dir = mkdtempSync(join(tmpdir(), "orbit-overdue-"));
    const store = new SqliteStore({ dataDir: dir });
    await store.open();
    try {
      // No firing loop runs here: the schedule stays due, as on a server that cannot fire.
      const h = await makeHarness(store);
      await h.scheduler.schedules.create({ ...SEED_SCHEDULE });
      let now = h.clock.now();
      const metrics = new ServerMetrics({ store, graceMs: 60_000, now: async () => now });
      expect(await metrics.text()).toMatch(/^orbit_schedules_overdue 0$/m);
      now = Date.parse("2026-11-15T18:52:10.001Z"); // due 18:51:10, grace 60 s
      expect(await metrics.text()).toMatch(/^orbit_schedules_overdue 1$/m);
      await h.scheduler.actions.pause("orders-every-10s", {});
      expect(await metrics.text()).toMatch(/^orbit_schedules_overdue 0$/m);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("/v1/openapi.json", () => {
  it("serves the web UI at / with its files' content types, and 404 for anything else", async () => {
    const page = await fetch(`${t.server.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await page.text()).toContain("<html");
    const script = await fetch(`${t.server.url}/app.js`);
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect((await fetch(`${t.server.url}/nothing.js`)).status).toBe(404);
    expect((await fetch(`${t.server.url}/..%2Fpackage.json`)).status).toBe(404);
  });

  it("documents every registered route, and every documented route exists", async () => {
    const doc = (await t.call("GET", "/v1/openapi.json")).body;
    expect(doc.openapi).toBe("3.1.0");
    const documented = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(ops)) documented.add(`${method.toUpperCase()} ${path}`);
    }
    // The web UI's static files (`/`, `/{name}`) are not part of the API document.
    const registered = new Set(
      t.server.routes.map((r) => r.replace(/:(\w+)/g, "{$1}")).filter((r) => r !== "GET /" && r !== "GET /{name}"),
    );
    expect([...registered].sort()).toEqual([...documented].sort());
    for (const route of [
      "POST /v1/schedules",
      "GET /v1/schedules/{id}/occurrences",
      "POST /v1/schedules/{id}/backfill",
      "POST /v1/executions/{id}/cancel",
      "GET /v1/workflows/{name}",
      "GET /metrics",
    ]) {
      expect(documented).toContain(route);
    }
    // Every documented route answers with something other than "no route", and validates its
    // request: schemas are compiled on a route's first request (src/api/validation.ts), so one
    // that does not compile would answer 500 here.
    for (const entry of documented) {
      const [method, path] = entry.split(" ") as [string, string];
      const r = await t.call(method, path.replace(/\{(\w+)\}/g, "x"), method === "GET" ? undefined : {});
      expect(r.text).not.toMatch(/no route/);
      expect(r.status, `${entry}: ${r.text}`).toBeLessThan(500);
    }
    const patch = doc.paths["/v1/schedules/{id}"].patch;
    expect(patch.parameters.map((p: { name: string }) => p.name)).toEqual([
      "id",
      "expected_revision",
      "If-Match",
      "Idempotency-Key",
    ]);
    expect(patch.requestBody.content["application/json"].schema.properties.catchup.enum).toContain("run_once");
  });

  it("gives the schedule bodies the server enforces: a body the document accepts is one the server takes", async () => {
    await t.registerOrders();
    const doc = (await t.call("GET", "/v1/openapi.json")).body;
    // CommonJS packages: their constructor is the module's `default` (as src/domain/input-schema.ts loads them).
    const require = createRequire(import.meta.url);
    const Ajv = (require("ajv/dist/2020.js") as typeof import("ajv/dist/2020.js")).default;
    const addFormats = (require("ajv-formats") as typeof import("ajv-formats")).default;
    const ajv = addFormats(new Ajv({ strict: false }));
    const schemaOf = (path: string, method: string) =>
      ajv.compile(doc.paths[path][method].requestBody.content["application/json"].schema);
    const create = schemaOf("/v1/schedules", "post");
    const patch = schemaOf("/v1/schedules/{id}", "patch");
    const batch = schemaOf("/v1/schedules/batch", "post");
    const seed = { ...SEED_SCHEDULE, schedule_id: "doc-1" };
    // Before, the document took any object: {} and misspelled settings passed it, and the server refused them.
    const cases: [string, (b: unknown) => boolean, string, string, unknown][] = [
      ["create", create, "POST", "/v1/schedules", {}],
      ["create", create, "POST", "/v1/schedules", { ...seed, misfire_polcy: 1 }],
      ["create", create, "POST", "/v1/schedules", { ...seed, cron: "* * * * *" }],
      ["create", create, "POST", "/v1/schedules", { schedule_id: "doc-2", workflow: "OrderProcessing" }],
      ["create", create, "POST", "/v1/schedules", seed],
      ["create", create, "POST", "/v1/schedules", { ...seed, schedule_id: "doc-5", cron: null }],
      ["batch", batch, "POST", "/v1/schedules/batch", { schedules: [{ ...seed, schedule_id: "doc-3", bogus: 1 }] }],
      ["batch", batch, "POST", "/v1/schedules/batch", { schedules: [{ ...seed, schedule_id: "doc-4" }] }],
      ["patch", patch, "PATCH", "/v1/schedules/doc-1", { bogus: 1 }],
      ["patch", patch, "PATCH", "/v1/schedules/doc-1", { interval: "20s", description: null }],
      ["patch", patch, "PATCH", "/v1/schedules/doc-1", { schedule_id: "doc-1" }],
    ];
    for (const [what, accepts, method, path, body] of cases) {
      const r = await t.call(method, path, body);
      expect(accepts(body), `${what} ${JSON.stringify(body)}: the server answered ${r.status} ${r.text}`).toBe(
        r.status < 400,
      );
    }
  });
});

describe("docs/errors.md", () => {
  it("documents exactly the codes of src/domain/errors.ts with their statuses", () => {
    const doc = readFileSync(new URL("../../docs/errors.md", import.meta.url), "utf8");
    const documented = [...doc.matchAll(/^## `([A-Z_]+)` \((\d{3})\)$/gm)].map((m) => [m[1], Number(m[2])]);
    expect(documented).toEqual(Object.entries(ERROR_CODES));
  });
});

describe("startup and shutdown", () => {
  it("refuses a cluster mode on SQLite with a clear message", async () => {
    await expect(startServer({ port: 0, dataDir: t.dir, cluster: "shared", logger: "silent" })).rejects.toThrow(
      "--cluster shared needs PostgreSQL (--database postgres://…): SQLite is one process's file",
    );
  });

  it("close() finishes an in-flight request, stops listening and is idempotent", async () => {
    // A grace longer than any backfill here: at 3 s, a loaded CI machine's backfill of 3,000 was
    // still running when close() dropped its connection ("other side closed").
    const s = await startTestServer({ closeGraceMs: 120_000 });
    await s.registerOrders();
    await s.call("POST", "/v1/schedules", SEED_SCHEDULE);
    // A backfill of 3,000 occurrences runs in batches; close() arrives while it is running.
    const inflight = s.call("POST", "/v1/schedules/orders-every-10s/backfill", {
      start_at: "2026-11-01T00:00:00Z",
      end_at: "2026-11-01T08:19:50Z",
    });
    // Waits for the backfill's own first execution: the schedule's own fire at the clock's instant
    // would show up in a list too, and close() then came before the backfill was even read.
    await s.until(
      async () => (await s.call("GET", "/v1/executions/orders-every-10s:2026-11-01T00:00:00Z")).status,
      (status) => status === 200,
      "the backfill to start",
    );
    // Both calls settle once the in-flight request has finished (a hang fails on the test's timeout;
    // no timed assertion: under load the backfill alone can take seconds).
    await Promise.all([s.server.close(), s.server.close()]);
    const r = await inflight;
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ occurrences: 3000, started: 3000 });
    await expect(fetch(`${s.server.url}/healthz`)).rejects.toThrow();
    await s.server.close();
    await s.stop();
  });
});
