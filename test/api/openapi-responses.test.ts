/**
 * The OpenAPI document describes what the server answers (docs/api.md § OpenAPI): a scenario that
 * touches every documented JSON route — a schedule with every setting, fires, a failed, a cancelled
 * and a retried execution, skipped and buffered ledger rows, triggers, a backfill, batch, validate
 * and apply, workflows and their settings, workers, the system routes — records each answer, and
 * each must validate against the document's schema for its route and status with every declared
 * object closed: a field the server sends but the document does not declare fails. (The schemas
 * were open, so `cron`, `interval`, a ledger row's `execution_id` and an execution's
 * `cancel_reason` went undeclared and unnoticed.)
 */
import Ajv2020Module, { type ErrorObject } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ORDER_INPUT } from "../helpers/seed.js";
import { type Answer, SEED_SCHEDULE, startTestServer, type TestServer } from "./helpers.js";

type Json = Record<string, unknown>;

/** `schema` with every object that declares properties closed to others (a copy). */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== "object") return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema as Json)) {
    // A map of names to schemas: its keys are names, not keywords.
    out[k] =
      k === "properties" || k === "$defs"
        ? Object.fromEntries(Object.entries(v as Json).map(([n, s]) => [n, closed(s)]))
        : closed(v);
  }
  const props = out.properties as Json | undefined;
  if (props !== undefined && Object.keys(props).length > 0) out.additionalProperties = false;
  return out;
}

interface Recorded {
  method: string;
  path: string;
  answer: Answer;
}

describe("/v1/openapi.json against the answers", () => {
  let t: TestServer;
  const seen: Recorded[] = [];
  /** Calls the server and records the answer; fails on a status of 400 or more. */
  const ok = async (method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
    const answer = await t.call(method, path, body, headers);
    if (answer.status >= 400) throw new Error(`${method} ${path}: ${answer.status} ${answer.text}`);
    seen.push({ method, path, answer });
    return answer.body;
  };

  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it("declares every field of every answer of the JSON routes", async () => {
    await ok("POST", "/v1/workflows", { name: "OrderProcessing", version: "1.0.0", description: "orders" });
    await ok("POST", "/v1/workflows", { name: "OrderProcessing", version: "1.0.0", description: "orders" });
    await ok("POST", "/v1/workflows", { name: "OrderProcessing", version: "0.9.0" });
    // Every setting there is.
    await ok("POST", "/v1/schedules", {
      schedule_id: "full",
      workflow: "OrderProcessing",
      version: "1.0.0",
      input: ORDER_INPUT,
      cron: "* * * * *",
      timezone: "Europe/Berlin",
      dst: "once",
      overlap: "buffer_one",
      concurrency_key: "orders",
      catchup: "catch_up",
      max_catch_up: 3,
      catchup_window: "1h",
      start_at: "2026-11-01T00:00:00Z",
      end_at: "2027-01-01T00:00:00Z",
      jitter: "1s",
      description: "every setting",
      run_timeout: "5m",
      start_timeout: "1h",
      pause_on_failure: 3,
      max_runs: 100,
      notify: "http://127.0.0.1:9/hook",
      labels: { team: "shop" },
    });
    await ok("POST", "/v1/schedules", SEED_SCHEDULE);
    await ok("POST", "/v1/schedules", {
      schedule_id: "paused-one",
      workflow: "OrderProcessing",
      interval: "1h",
      paused: true,
      pause_note: "not yet",
    });
    // Fires: every 10 s and every minute, until the ledger has started, skipped and buffered rows.
    const decided = (r: Answer) => (r.body.fired as number) + (r.body.skipped as number);
    for (let i = 1; i <= 8; i++) {
      t.clock.advance(10_000);
      await t.until(
        () => t.call("GET", "/v1/schedules/orders-every-10s"),
        (r) => decided(r) === i,
        `fire ${i}`,
      );
    }
    await ok("GET", "/v1/schedules");
    await ok("GET", "/v1/schedules?sort=next_fire&order=desc&limit=2");
    for (const id of ["full", "orders-every-10s", "paused-one"]) {
      await ok("GET", `/v1/schedules/${id}`);
      await ok("GET", `/v1/schedules/${id}/occurrences`);
      await ok("GET", `/v1/schedules/${id}/notifications`);
    }
    const executions = (await ok("GET", "/v1/executions")).executions as Json[];
    expect(executions.length).toBeGreaterThan(1);
    // A waiting execution (no worker yet) and its events.
    const first = String(executions[0]?.execution_id);
    await ok("GET", `/v1/executions/${encodeURIComponent(first)}`);
    await ok("GET", `/v1/executions/${encodeURIComponent(first)}/events`);

    // A worker fails one run and leaves the others running; one of those is cancelled.
    const { tasks } = await ok("POST", "/v1/worker/poll", {
      worker_id: "w1",
      workflows: [{ name: "OrderProcessing", version: "1.0.0", max_attempts: 1, backoff_ms: 0 }],
      max_tasks: 10,
      wait_ms: 0,
    });
    expect(tasks.length).toBeGreaterThan(1);
    await ok("POST", `/v1/worker/tasks/${tasks[0].task_id}/fail`, {
      worker_id: "w1",
      error: { message: "card declined", type: "PaymentError" },
      retryable: false,
    });
    const failedId = String(tasks[0].execution_id);
    const cancelId = String(tasks[1].execution_id);
    await ok("POST", `/v1/executions/${encodeURIComponent(cancelId)}/cancel`, { reason: "not needed" });
    await ok("GET", `/v1/executions/${encodeURIComponent(cancelId)}`);
    await ok("GET", `/v1/executions/${encodeURIComponent(failedId)}`);
    // The summary view (without input and result), the failed execution's error among them.
    await ok("GET", "/v1/executions?view=summary");
    await ok("POST", `/v1/executions/${encodeURIComponent(failedId)}/retry`);
    await ok("GET", `/v1/executions/${encodeURIComponent(failedId)}/events`);
    await ok("GET", "/v1/executions?status=CANCELLED&limit=5");
    await ok("POST", "/v1/executions", { workflow: "OrderProcessing", input: ORDER_INPUT });
    await ok("POST", "/v1/executions", { workflow: "OrderProcessing", execution_id: "mine", input: ORDER_INPUT });
    await ok("POST", "/v1/executions", { workflow: "OrderProcessing", execution_id: "mine", input: ORDER_INPUT });

    // The schedule routes that change things.
    await ok("POST", "/v1/schedules/orders-every-10s/trigger");
    await ok("POST", "/v1/schedules/orders-every-10s/trigger", {}, { "idempotency-key": "again" });
    await ok("POST", "/v1/schedules/orders-every-10s/trigger", {}, { "idempotency-key": "again" });
    await ok("POST", "/v1/schedules/full/backfill", {
      start_at: "2026-11-15T18:00:00Z",
      end_at: "2026-11-15T18:03:00Z",
    });
    await ok("PATCH", "/v1/schedules/full", { description: "changed", jitter: null });
    await ok("POST", "/v1/schedules/full/pause", { note: "a break" });
    await ok("POST", "/v1/schedules/full/resume", { catch_up: false });
    await ok("POST", "/v1/schedules/batch", {
      schedules: [
        { schedule_id: "b1", workflow: "OrderProcessing", interval: "1h" },
        { schedule_id: "b2", workflow: "OrderProcessing", cron: "0 2 * * *", timezone: "Europe/Berlin" },
      ],
    });
    await ok("POST", "/v1/schedules/validate", {
      schedules: [
        { schedule_id: "v1", workflow: "OrderProcessing", interval: "1h" },
        { schedule_id: "v2", workflow: "OrderProcessing", cron: "0 2 * * *", timezone: "Europe/Berlin" },
      ],
    });
    for (const dryRun of [true, false]) {
      await ok("POST", "/v1/schedules/apply", {
        scope: { "orbit.dev/owner": "shop" },
        prune: true,
        dry_run: dryRun,
        allow_unregistered: true,
        schedules: [
          { schedule_id: "a0", workflow: "NotYet", interval: "1h" },
          { schedule_id: "a1", workflow: "OrderProcessing", interval: "30m" },
          { schedule_id: "b1", workflow: "OrderProcessing", interval: "2h" },
        ],
      });
    }
    await ok("DELETE", "/v1/schedules/b2");

    // Workflows, workers and the system routes.
    await ok("GET", "/v1/workflows");
    await ok("GET", "/v1/workflows/OrderProcessing");
    await ok("GET", "/v1/workflows/OrderProcessing/settings");
    await ok("PATCH", "/v1/workflows/OrderProcessing/settings", { run_timeout: "10m" });
    await ok("POST", "/v1/workflows/OrderProcessing/versions/0.9.0/deprecate");
    await ok("POST", "/v1/workflows/OrderProcessing/versions/0.9.0/undeprecate");
    await ok("GET", "/v1/workers");
    await ok("GET", "/v1/me");
    await ok("GET", "/v1/preview?cron=0%202%20*%20*%20*&timezone=Europe/Berlin&count=3");
    await ok("GET", "/v1/preview?interval=10s&count=2");
    await ok("GET", "/healthz");
    await ok("GET", "/readyz");
    await ok("GET", "/v1/doctor");

    // The rest of the worker protocol: a worker leases four new executions and reports on each
    // in every way there is (docs/workflows.md § Protocol).
    const mine: string[] = [];
    for (let i = 0; i < 4; i++) {
      const started = await ok("POST", "/v1/executions", { workflow: "OrderProcessing", input: ORDER_INPUT });
      mine.push(String(started.execution_id));
    }
    const offer = [{ name: "OrderProcessing", version: "1.0.0", max_attempts: 1, backoff_ms: 0 }];
    const leased = (
      await ok("POST", "/v1/worker/poll", { worker_id: "w2", workflows: offer, max_tasks: 100, wait_ms: 0 })
    ).tasks as Json[];
    const taskOf = (executionId: string) => String(leased.find((x) => x.execution_id === executionId)?.task_id);
    const [done, continued, cancelled, batched] = mine.map(taskOf) as [string, string, string, string];
    const w2 = { worker_id: "w2" };
    await ok("POST", "/v1/worker/heartbeat", { ...w2, task_ids: [done, cancelled, "no-such-task"] });
    await ok("POST", `/v1/worker/tasks/${done}/steps`, { ...w2, step: "charge", seq: 1, result: 1, compensable: true });
    await ok("POST", `/v1/worker/tasks/${done}/complete`, { ...w2, result: { ok: true } });
    await ok("POST", `/v1/worker/tasks/${continued}/continue`, { ...w2, input: ORDER_INPUT });
    await ok("POST", `/v1/worker/tasks/${cancelled}/steps`, {
      ...w2,
      step: "charge",
      seq: 1,
      result: 1,
      compensable: true,
    });
    await ok("POST", `/v1/executions/${encodeURIComponent(mine[2] as string)}/cancel`, { reason: "changed my mind" });
    await ok("POST", `/v1/worker/tasks/${cancelled}/compensating`, w2);
    await ok("POST", `/v1/worker/tasks/${cancelled}/compensations`, { ...w2, step: "charge" });
    await ok("POST", `/v1/worker/tasks/${cancelled}/cancelled`, w2);
    const others = leased
      .map((x) => String(x.task_id))
      .filter((id) => ![done, continued, cancelled, batched].includes(id));
    await ok("POST", "/v1/worker/release", { ...w2, task_ids: others });
    await ok("POST", "/v1/worker/complete", {
      ...w2,
      tasks: [
        { task_id: batched, result: null },
        { task_id: done, result: 2 },
      ],
    });
    await ok("POST", "/v1/worker/leave", w2);

    const ledger = (await ok("GET", "/v1/schedules/orders-every-10s/occurrences")).occurrences as Json[];
    expect(new Set(ledger.map((o) => o.kind))).toEqual(new Set(["started", "skipped"]));

    const doc = (await t.call("GET", "/v1/openapi.json")).body;
    const ajv = new Ajv2020Module.default({ strict: false, allErrors: true, validateFormats: false });
    const problems: string[] = [];
    const covered = new Set<string>();
    for (const { method, path, answer } of seen) {
      const bare = path.split("?")[0] as string;
      const template = Object.keys(doc.paths).find((p) =>
        new RegExp(`^${p.replace(/\{\w+\}/g, "[^/]+")}$`).test(bare),
      ) as string;
      const response = doc.paths[template]?.[method.toLowerCase()]?.responses?.[answer.status];
      // The headers the docs tell clients to use are declared where they are sent (none were).
      const declared = Object.keys(response?.headers ?? {}).map((h) => h.toLowerCase());
      for (const header of ["etag", "idempotent-replayed"]) {
        if (answer.headers.get(header) !== null && !declared.includes(header))
          problems.push(`${method} ${template} ${answer.status}: sends ${header}, not declared`);
      }
      if (answer.status === 204) continue;
      const schema = response?.content?.["application/json"]?.schema;
      if (schema === undefined) {
        problems.push(`${method} ${template} ${answer.status}: no JSON schema documented`);
        continue;
      }
      covered.add(`${method} ${template}`);
      const validate = ajv.compile(closed(schema) as object);
      if (!validate(answer.body)) {
        const errors = (validate.errors ?? []).map(
          (e: ErrorObject) =>
            `${e.instancePath || "/"} ${e.message}${e.params && "additionalProperty" in e.params ? ` (${e.params.additionalProperty})` : ""}`,
        );
        problems.push(`${method} ${template} ${answer.status}: ${[...new Set(errors)].slice(0, 8).join("; ")}`);
      }
    }
    expect([...new Set(problems)]).toEqual([]);
    // Every documented route with a JSON schema was answered here.
    const documented = Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([p, ops]) =>
      Object.entries(ops)
        .filter(([, op]) =>
          Object.entries(op.responses as Record<string, Json>).some(
            ([status, r]) =>
              status !== "default" &&
              ((r.content as Json | undefined)?.["application/json"] as Json | undefined)?.schema !== undefined,
          ),
        )
        .map(([m]) => `${m.toUpperCase()} ${p}`),
    );
    expect(documented.filter((r) => !covered.has(r))).toEqual([]);
  }, 60_000);
});

it("offers Idempotency-Key on the API's writes, not on the worker protocol, which reads none", async () => {
  const t = await startTestServer();
  try {
    const doc = (await t.call("GET", "/v1/openapi.json")).body as {
      paths: Record<string, Record<string, { parameters?: { name: string }[] }>>;
    };
    const keyed = (path: string, method: string) =>
      (doc.paths[path]?.[method]?.parameters ?? []).some((p) => p.name === "Idempotency-Key");
    expect(keyed("/v1/schedules", "post")).toBe(true);
    expect(keyed("/v1/worker/poll", "post")).toBe(false);
    expect(keyed("/v1/worker/heartbeat", "post")).toBe(false);
  } finally {
    await t.stop();
  }
});

it("declares If-None-Match and 304 on exactly the reads that answer them", async () => {
  const t = await startTestServer();
  try {
    await t.registerOrders();
    await t.ok("POST", "/v1/schedules", SEED_SCHEDULE);
    const doc = (await t.call("GET", "/v1/openapi.json")).body as {
      paths: Record<string, Record<string, { parameters?: { name: string }[]; responses: Record<string, unknown> }>>;
    };
    const declares = (path: string) => ({
      header: (doc.paths[path]?.get?.parameters ?? []).some((p) => p.name === "If-None-Match"),
      status: doc.paths[path]?.get?.responses["304"] !== undefined,
    });
    // Each read the document says answers 304 does, with the ETag it gave.
    for (const [template, path] of [
      ["/v1/schedules", "/v1/schedules?limit=5"],
      ["/v1/executions", "/v1/executions"],
      ["/v1/workflows", "/v1/workflows"],
      ["/v1/schedules/{id}/occurrences", `/v1/schedules/${SEED_SCHEDULE.schedule_id}/occurrences`],
    ] as const) {
      expect({ template, ...declares(template) }).toEqual({ template, header: true, status: true });
      const first = await t.call("GET", path);
      const etag = first.headers.get("etag");
      expect(etag).toBeTruthy();
      expect((await t.call("GET", path, undefined, { "if-none-match": etag! })).status).toBe(304);
    }
    // A schedule's read carries its revision as a strong ETag for If-Match; it declares no 304.
    expect(declares("/v1/schedules/{id}")).toEqual({ header: false, status: false });
    const one = await t.call("GET", `/v1/schedules/${SEED_SCHEDULE.schedule_id}`, undefined, {
      "if-none-match": '"1"',
    });
    expect(one.status).toBe(200);
  } finally {
    await t.stop();
  }
});
