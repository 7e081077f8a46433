/**
 * The access bypasses of issue 11 (docs/security.md), each as a test: a worker identity limited to
 * its workflows on every worker route, a start that hits an existing id answering only what the
 * caller may read, schedule occurrence ids reserved for their schedule, a schedule or execution
 * the caller may not see answered exactly as a missing one, and concurrency keys limited to an
 * identity's `concurrency_keys`.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { Executions } from "../../src/engine/executions.js";
import { Workflows } from "../../src/engine/workflows.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { parseInstant } from "../../src/time/format.js";
import { ORDER_INPUT, SEED_NOW, startTestServer, type TestServer } from "./helpers.js";

const sha = (token: string) => createHash("sha256").update(token).digest("hex");
const as = (token: string) => ({ authorization: `Bearer ${token}` });
const CARD = { card_number: "4111111111111111" };
const poll = (workflow: string) => ({
  worker_id: "w-1",
  workflows: [{ name: workflow, version: "1.0.0", max_attempts: 1, backoff_ms: 0 }],
  wait_ms: 0,
});

let t: TestServer;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "orbit-bypass-"));
  const config = join(dir, "identities.yaml");
  writeFileSync(
    config,
    `identities:
  - name: admin
    token_sha256: ${sha("admin")}
    kind: client
    allow:
      - workflows: "*"
        actions: [schedule, start, read, cancel]
  - name: starter
    token_sha256: ${sha("starter")}
    kind: client
    allow:
      - workflows: "Order*"
        actions: [start]
  - name: order-team
    token_sha256: ${sha("order-team")}
    kind: client
    allow:
      - workflows: "Order*"
        actions: [schedule, start, read, cancel]
  - name: order-keys
    token_sha256: ${sha("order-keys")}
    kind: client
    allow:
      - workflows: "Order*"
        actions: [schedule]
    concurrency_keys: ["orders-*", "shared"]
  - name: billing-reader
    token_sha256: ${sha("billing-reader")}
    kind: client
    allow:
      - workflows: "Billing"
        actions: [read]
  - name: order-worker
    token_sha256: ${sha("order-worker")}
    kind: worker
    allow:
      - workflows: "Order*"
  - name: billing-worker
    token_sha256: ${sha("billing-worker")}
    kind: worker
    allow:
      - workflows: "Billing"
`,
  );
  t = await startTestServer({ config });
  for (const name of ["OrderProcessing", "Billing"]) {
    expect((await t.call("POST", "/v1/workflows", { name, version: "1.0.0" }, as("admin"))).status).toBe(201);
  }
});
afterAll(async () => {
  await t.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("a worker identity works only on its workflows", () => {
  it("may not poll for another workflow's tasks, nor heartbeat, step, complete or fail them", async () => {
    const billing = await t.call(
      "POST",
      "/v1/executions",
      { execution_id: "bill-1", workflow: "Billing", input: CARD },
      as("admin"),
    );
    expect(billing.status).toBe(201);

    const stolen = await t.call("POST", "/v1/worker/poll", poll("Billing"), as("order-worker"));
    expect(stolen.status).toBe(403);
    expect(stolen.body).toEqual({
      code: "PERMISSION_DENIED",
      message:
        'worker identity order-worker may not lease tasks of workflow "Billing": no rule of its allow list names it',
    });
    expect(stolen.text).not.toContain("4111");

    const leased = await t.call("POST", "/v1/worker/poll", poll("Billing"), as("billing-worker"));
    expect(leased.status).toBe(200);
    const taskId: string = leased.body.tasks[0].task_id;
    const reports: [string, object][] = [
      ["/v1/worker/heartbeat", { worker_id: "w-1", task_ids: [taskId] }],
      ["/v1/worker/release", { worker_id: "w-1", task_ids: [taskId] }],
      [`/v1/worker/tasks/${taskId}/steps`, { worker_id: "w-1", step: "s", seq: 1, result: 1, compensable: false }],
      [`/v1/worker/tasks/${taskId}/complete`, { worker_id: "w-1", result: { forged: true } }],
      [`/v1/worker/tasks/${taskId}/fail`, { worker_id: "w-1", error: { message: "x" }, retryable: false }],
      [`/v1/worker/tasks/${taskId}/cancelled`, { worker_id: "w-1" }],
    ];
    for (const [path, body] of reports) {
      const r = await t.call("POST", path, body, as("order-worker"));
      expect({ path, status: r.status, code: r.body.code }).toEqual({ path, status: 403, code: "PERMISSION_DENIED" });
    }
    const after = await t.call("GET", "/v1/executions/bill-1", undefined, as("admin"));
    expect(after.body.status).toBe("RUNNING");
    expect(after.body.result).toBeNull();

    // Its own workflow's tasks are fine (under its own worker_id: w-1 is billing-worker's), and
    // the rightful worker can still complete.
    const ownPoll = { ...poll("OrderProcessing"), worker_id: "order-w" };
    expect((await t.call("POST", "/v1/worker/poll", ownPoll, as("order-worker"))).status).toBe(200);
    const done = await t.call(
      "POST",
      `/v1/worker/tasks/${taskId}/complete`,
      { worker_id: "w-1", result: { ok: true } },
      as("billing-worker"),
    );
    expect(done.status).toBe(200);
    expect(done.body.status).toBe("COMPLETED");
  });
});

describe("a worker identity speaks only for its own workers", () => {
  it("may not mark another identity's worker gone, keep it live, nor poll under its worker_id", async () => {
    const own = { ...poll("Billing"), worker_id: "billing-w" };
    expect((await t.call("POST", "/v1/worker/poll", own, as("billing-worker"))).status).toBe(200);
    const status = async () =>
      (await t.call("GET", "/v1/workers", undefined, as("admin"))).body.workers.find(
        (w: { worker_id: string }) => w.worker_id === "billing-w",
      )?.status;
    expect(await status()).toBe("live");
    const workflows = async () =>
      (await t.call("GET", "/v1/workers", undefined, as("admin"))).body.workers
        .find((w: { worker_id: string }) => w.worker_id === "billing-w")
        ?.workflows.map((w: { name: string }) => w.name);
    for (const [path, body] of [
      ["/v1/worker/leave", { worker_id: "billing-w" }],
      ["/v1/worker/heartbeat", { worker_id: "billing-w", task_ids: [] }],
      // A poll under its worker_id rewrote what that worker polls (and kept it live).
      ["/v1/worker/poll", { ...poll("OrderProcessing"), worker_id: "billing-w" }],
    ] as const) {
      const r = await t.call("POST", path, body, as("order-worker"));
      expect({ path, status: r.status, body: r.body }).toEqual({
        path,
        status: 403,
        body: {
          code: "PERMISSION_DENIED",
          message:
            'worker identity order-worker may not speak for worker billing-w, which runs workflow "Billing": no rule of its allow list names it',
        },
      });
    }
    expect(await status()).toBe("live");
    expect(await workflows()).toEqual(["Billing"]);
    // Its own identity may.
    expect((await t.call("POST", "/v1/worker/leave", { worker_id: "billing-w" }, as("billing-worker"))).status).toBe(
      204,
    );
    expect(await status()).toBe("gone");
    // A poll may take over the id of a worker gone (left, or silent past a minute): else an identity
    // that polled first under another team's worker_id (a pod's name) locked it out for good (a tester).
    expect(
      (await t.call("POST", "/v1/worker/heartbeat", { worker_id: "billing-w", task_ids: [] }, as("order-worker")))
        .status,
    ).toBe(403);
    const taken = await t.call(
      "POST",
      "/v1/worker/poll",
      { ...poll("OrderProcessing"), worker_id: "billing-w" },
      as("order-worker"),
    );
    expect(taken.status).toBe(200);
    expect(await workflows()).toEqual(["OrderProcessing"]);
    // Live again, it is its new identity's: the first may not poll under it until it is gone.
    expect((await t.call("POST", "/v1/worker/poll", own, as("billing-worker"))).status).toBe(403);
  });
});

describe("a start that hits an existing id", () => {
  it("answers 409 without the execution when the caller may not read it", async () => {
    await t.call("POST", "/v1/executions", { execution_id: "bill-2", workflow: "Billing", input: CARD }, as("admin"));
    expect((await t.call("GET", "/v1/executions/bill-2", undefined, as("starter"))).status).toBe(404);
    const r = await t.call(
      "POST",
      "/v1/executions",
      { execution_id: "bill-2", workflow: "OrderProcessing", input: ORDER_INPUT },
      as("starter"),
    );
    expect(r.status).toBe(409);
    expect(r.body).toEqual({ code: "ALREADY_EXISTS", message: "execution bill-2 already exists" });
    expect(r.text).not.toContain("4111");
    // One that may read it gets it back, as before.
    const admin = await t.call("POST", "/v1/executions", { execution_id: "bill-2", workflow: "Billing" }, as("admin"));
    expect(admin.status).toBe(200);
    expect(admin.body.input).toEqual(CARD);
  });
});

describe("occurrence ids belong to their schedule", () => {
  it("refuses <schedule>:<time> and <schedule>:manual:… ids from a start", async () => {
    for (const id of ["victim:2026-11-15T18:51:10Z", "victim:2026-11-15T18:51:10.123Z", "victim:manual:x"]) {
      const r = await t.call(
        "POST",
        "/v1/executions",
        { execution_id: id, workflow: "OrderProcessing", input: ORDER_INPUT },
        as("starter"),
      );
      expect({ id, status: r.status }).toEqual({ id, status: 400 });
      expect(r.body.message).toMatch(/reserved for schedules/);
    }
    expect((await t.call("GET", "/v1/executions?limit=1000", undefined, as("admin"))).text).not.toContain("victim:");
  });

  it("a schedule whose occurrence id is taken by another execution records a dead letter, not a start", async () => {
    // An id taken some other way (here: straight through the engine, as data from before this
    // check would be): the schedule must not count that execution as its own.
    const store = new SqliteStore({ filename: join(t.dir, "orbit.db"), busyTimeoutMs: 5000 });
    await store.open();
    try {
      const clock = new ManualClock(parseInstant(SEED_NOW));
      const executions = new Executions({ store, clock, workflows: new Workflows({ store, clock }) });
      await executions.start({ executionId: "victim:2026-11-15T18:51:10Z", workflow: "Billing", input: CARD });
    } finally {
      await store.close();
    }
    const created = await t.call(
      "POST",
      "/v1/schedules",
      { schedule_id: "victim", workflow: "OrderProcessing", interval: "10s", input: ORDER_INPUT },
      as("admin"),
    );
    expect(created.body.next_fire_at).toBe("2026-11-15T18:51:10Z");
    t.clock.set(Date.parse("2026-11-15T18:51:10Z"));
    const s = await t.until(
      async () => (await t.call("GET", "/v1/schedules/victim", undefined, as("admin"))).body,
      (b) => b.next_fire_at === "2026-11-15T18:51:20Z",
      "the fire",
    );
    expect(s.fired).toBe(0);
    expect(s.last_execution_id).toBeNull();
    const occurrences = await t.call("GET", "/v1/schedules/victim/occurrences", undefined, as("admin"));
    expect(JSON.stringify(occurrences.body)).toMatch(/dead_letter/);
    expect(JSON.stringify(occurrences.body)).toMatch(/taken by an execution of workflow Billing/);
  });
});

describe("the caller is known before the body is read", () => {
  it("answers 401 to a body that would be refused anyway, without parsing it", async () => {
    for (const body of ["{not json", `${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}`]) {
      const r = await t.call("POST", "/v1/executions", body);
      expect(r.status).toBe(401);
      expect(r.body.code).toBe("UNAUTHENTICATED");
    }
    const worker = await t.call("POST", "/v1/worker/poll", "{not json");
    expect(worker.status).toBe(401);
    // With a token the same body is a 400: it was parsed only then.
    expect((await t.call("POST", "/v1/executions", "{not json", as("admin"))).status).toBe(400);
    expect((await t.call("GET", "/healthz")).status).toBe(200);
  });
});

describe("objects the caller may not see", () => {
  /** The answer to `path` on the hidden object, and on a missing id in its place (the id swapped back). */
  const both = async (token: string, method: string, path: string, id: string, body?: unknown) => {
    const hidden = await t.call(method, path, body, as(token));
    const missing = await t.call(method, path.replace(id, "no-such-id"), body, as(token));
    return {
      hidden: { status: hidden.status, body: hidden.body },
      missing: { status: missing.status, body: JSON.parse(missing.text.replaceAll("no-such-id", id)) },
    };
  };

  it("a schedule of a workflow the caller may not schedule answers 404 exactly as a missing one, on every route", async () => {
    const created = await t.call(
      "POST",
      "/v1/schedules",
      { schedule_id: "bill-sched", workflow: "Billing", interval: "1h", input: CARD },
      as("admin"),
    );
    expect(created.status).toBe(201);
    const routes: [string, string, unknown?][] = [
      ["GET", "/v1/schedules/bill-sched"],
      ["PATCH", "/v1/schedules/bill-sched", { description: "mine now" }],
      ["DELETE", "/v1/schedules/bill-sched"],
      ["POST", "/v1/schedules/bill-sched/pause", {}],
      ["POST", "/v1/schedules/bill-sched/resume", {}],
      ["POST", "/v1/schedules/bill-sched/trigger", {}],
      [
        "POST",
        "/v1/schedules/bill-sched/backfill",
        { start_at: "2026-11-15T10:00:00Z", end_at: "2026-11-15T11:00:00Z" },
      ],
      ["GET", "/v1/schedules/bill-sched/occurrences"],
      ["GET", "/v1/schedules/bill-sched/notifications"],
    ];
    for (const token of ["order-team", "billing-reader", "starter"]) {
      for (const [method, path, body] of routes) {
        const r = await both(token, method, path, "bill-sched", body);
        expect({ token, method, path, ...r.hidden }).toEqual({
          token,
          method,
          path,
          status: 404,
          body: { code: "NOT_FOUND", message: "schedule bill-sched does not exist" },
        });
        expect(r.hidden).toEqual(r.missing);
      }
    }
    // A worker identity is refused for what it is, before any lookup: the same 403 either way.
    const w = await both("order-worker", "GET", "/v1/schedules/bill-sched", "bill-sched");
    expect(w.hidden.status).toBe(403);
    expect(w.hidden).toEqual(w.missing);
    // Nothing changed.
    const after = await t.call("GET", "/v1/schedules/bill-sched", undefined, as("admin"));
    expect(after.body.revision).toBe(created.body.revision);
    expect(after.body.paused).toBe(false);
    expect(after.body.fired).toBe(0);
  });

  it("an execution the caller may not read answers 404 exactly as a missing one; one it may read but not change, 403", async () => {
    await t.call("POST", "/v1/executions", { execution_id: "bill-4", workflow: "Billing", input: CARD }, as("admin"));
    const routes: [string, string, unknown?][] = [
      ["GET", "/v1/executions/bill-4"],
      ["GET", "/v1/executions/bill-4/events"],
      ["POST", "/v1/executions/bill-4/cancel", { reason: "mine" }],
      ["POST", "/v1/executions/bill-4/retry", {}],
    ];
    for (const token of ["order-team", "starter"]) {
      for (const [method, path, body] of routes) {
        const r = await both(token, method, path, "bill-4", body);
        expect({ token, path, ...r.hidden }).toEqual({
          token,
          path,
          status: 404,
          body: { code: "NOT_FOUND", message: "execution bill-4 does not exist" },
        });
        expect(r.hidden).toEqual(r.missing);
        expect(r.hidden.body.message).not.toContain("Billing");
      }
    }
    // A worker that runs other workflows may not read it either.
    const w = await both("order-worker", "GET", "/v1/executions/bill-4", "bill-4");
    expect(w.hidden).toEqual(w.missing);
    // Seen but not changeable: 403 naming what it lacks (it can read the workflow already).
    expect((await t.call("GET", "/v1/executions/bill-4", undefined, as("billing-reader"))).status).toBe(200);
    const cancel = await t.call("POST", "/v1/executions/bill-4/cancel", { reason: "x" }, as("billing-reader"));
    expect(cancel.status).toBe(403);
    expect(cancel.body.message).toMatch(/may not cancel workflow "Billing"/);
    const after = await t.call("GET", "/v1/executions/bill-4", undefined, as("admin"));
    expect(after.body.status).toBe("RUNNING");
    expect(after.body.cancel_reason).toBeUndefined();
  });

  it("a schedules file naming a hidden schedule's id is told only that the id is taken; prune leaves it alone", async () => {
    const labels = { set: "shared" };
    await t.call(
      "POST",
      "/v1/schedules",
      { schedule_id: "bill-labelled", workflow: "Billing", interval: "1h", input: CARD, labels },
      as("admin"),
    );
    const entry = { schedule_id: "bill-labelled", workflow: "OrderProcessing", interval: "2h", input: ORDER_INPUT };
    const taken = "schedules[0] (bill-labelled): schedule bill-labelled already exists";
    for (const path of ["/v1/schedules/validate", "/v1/schedules/apply"]) {
      const body = path.endsWith("apply") ? { schedules: [entry], scope: labels } : { schedules: [entry] };
      const r = await t.call("POST", path, body, as("order-team"));
      expect({ path, status: r.status, body: r.body }).toEqual({
        path,
        status: 409,
        body: { code: "ALREADY_EXISTS", message: taken },
      });
    }
    // Pruning its apply set does not reach a schedule it may not see (nor say that it exists).
    const pruned = await t.call(
      "POST",
      "/v1/schedules/apply",
      { schedules: [], scope: labels, prune: true },
      as("order-team"),
    );
    expect(pruned.status).toBe(200);
    expect(pruned.body.deleted).toBe(0);
    expect(pruned.text).not.toContain("bill-labelled");
    const after = await t.call("GET", "/v1/schedules/bill-labelled", undefined, as("admin"));
    expect(after.body).toMatchObject({ workflow: "Billing", interval: "1h", revision: 1 });
  });
});

describe("concurrency keys of an identity with concurrency_keys", () => {
  const body = (id: string, key: string | null) => ({
    schedule_id: id,
    workflow: "OrderProcessing",
    interval: "1h",
    input: ORDER_INPUT,
    concurrency_key: key,
  });
  const denied = (key: string) => ({
    code: "PERMISSION_DENIED",
    message: `identity order-keys may not use concurrency key ${JSON.stringify(key)} (it may use: orders-*, shared)`,
  });

  it("may use only the keys it names, on every route that writes a schedule; a refusal changes nothing", async () => {
    // Another team's key: refused on create, batch, validate, apply and update.
    const create = await t.call("POST", "/v1/schedules", body("ok-bill-key", "billing-nightly"), as("order-keys"));
    expect({ status: create.status, body: create.body }).toEqual({ status: 403, body: denied("billing-nightly") });
    for (const path of ["/v1/schedules/batch", "/v1/schedules/validate", "/v1/schedules/apply"]) {
      const many = { schedules: [body("ok-fine", "orders-a"), body("ok-bill-key", "billing-nightly")] };
      const r = await t.call("POST", path, many, as("order-keys"));
      expect({ path, status: r.status, body: r.body }).toEqual({ path, status: 403, body: denied("billing-nightly") });
    }
    for (const id of ["ok-bill-key", "ok-fine"]) {
      expect((await t.call("GET", `/v1/schedules/${id}`, undefined, as("admin"))).status).toBe(404);
    }
    // Its own keys, and none at all, are allowed.
    expect((await t.call("POST", "/v1/schedules", body("ok-own-key", "orders-a"), as("order-keys"))).status).toBe(201);
    expect((await t.call("POST", "/v1/schedules", body("ok-shared", "shared"), as("order-keys"))).status).toBe(201);
    expect((await t.call("POST", "/v1/schedules", body("ok-no-key", null), as("order-keys"))).status).toBe(201);
    const patch = await t.call("PATCH", "/v1/schedules/ok-own-key", { concurrency_key: "billing-x" }, as("order-keys"));
    expect({ status: patch.status, body: patch.body }).toEqual({ status: 403, body: denied("billing-x") });
    const after = await t.call("GET", "/v1/schedules/ok-own-key", undefined, as("admin"));
    expect(after.body).toMatchObject({ concurrency_key: "orders-a", revision: 1 });
    expect(
      (await t.call("PATCH", "/v1/schedules/ok-own-key", { concurrency_key: null }, as("order-keys"))).status,
    ).toBe(200);
  });

  it("an identity without concurrency_keys uses the shared namespace: any key", async () => {
    const r = await t.call("POST", "/v1/schedules", body("ok-team-any", "billing-nightly"), as("order-team"));
    expect(r.status).toBe(201);
  });
});
