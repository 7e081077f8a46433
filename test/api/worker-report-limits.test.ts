/**
 * A worker speaking the protocol over plain HTTP (the SDK checks first) with reports Orbit cannot
 * store as given. The batched complete checks each result as the single-task route does: one too
 * large, too deep, not finite or holding a NUL fails its own execution, and the others of the batch
 * complete (it stored a 1.5 MB result, a 66-level one, turned 1e400 into null, and a NUL refused the
 * whole batch, every execution left RUNNING). A failure's error is kept in a bounded, storable form
 * (domain/worker-error.ts): a 1.9 MB message was stored whole and copied into every read of its
 * schedule.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  await t.ok("POST", "/v1/workflows", { name: "Raw", version: "1.0.0" });
});
afterAll(() => t.stop());

const WORKER = "raw-worker";

/** Starts execution `id` and leases its task; returns the task id. */
async function leased(id: string): Promise<string> {
  await t.ok("POST", "/v1/executions", { execution_id: id, workflow: "Raw", input: {} });
  const { tasks } = await t.ok("POST", "/v1/worker/poll", {
    worker_id: WORKER,
    workflows: [{ name: "Raw", version: "1.0.0", max_attempts: 3, backoff_ms: 0 }],
    max_tasks: 1,
    wait_ms: 0,
  });
  return tasks[0].task_id;
}

const deep = (n: number): string => `${'{"a":'.repeat(n)}1${"}".repeat(n)}`;

describe("POST /v1/worker/complete checks each result", () => {
  for (const [what, text, message] of [
    ["over 1 MB", JSON.stringify("A".repeat(1_500_000)), /^result is [\d,]+ bytes serialized/],
    ["66 levels deep", deep(66), /^result nests deeper than 64 levels/],
    ["not a finite number", '{"n":1e400}', /^result\/n is not a finite number/],
    ["a NUL", '"a\\u0000b"', /^a string of the result contains a NUL character/],
    ["a lone surrogate in a key", '{"\\udc00":1}', /^a string of the result contains a lone UTF-16 surrogate/],
  ] as const) {
    it(`fails the execution whose result is ${what}; the other of the batch completes`, async () => {
      const bad = `batch-${what.replaceAll(" ", "-")}`;
      const good = `${bad}-ok`;
      const badTask = await leased(bad);
      const goodTask = await leased(good);
      const r = await t.call(
        "POST",
        "/v1/worker/complete",
        `{"worker_id":"${WORKER}","tasks":[{"task_id":"${badTask}","result":${text}},{"task_id":"${goodTask}","result":{"ok":true}}]}`,
      );
      expect(r.status).toBe(200);
      expect(r.body.tasks[goodTask]).toEqual({ status: "COMPLETED" });
      expect(r.body.tasks[badTask].code).toBe("INVALID_ARGUMENT");
      expect(r.body.tasks[badTask].message).toMatch(message);
      expect(r.body.tasks[badTask].message).toMatch(/; the execution failed with this error$/);
      const e = await t.ok("GET", `/v1/executions/${bad}`);
      expect({ status: e.status, type: e.error?.type, result: e.result }).toEqual({
        status: "FAILED",
        type: "ResultRefused",
        result: null,
      });
      expect(e.error.message).toMatch(message);
      expect((await t.ok("GET", `/v1/executions/${good}`)).result).toEqual({ ok: true });
    });
  }

  it("answers a task whose refusal it cannot record (not held) with that error", async () => {
    const id = "batch-not-held";
    const task = await leased(id);
    await t.ok("POST", `/v1/worker/tasks/${task}/complete`, { worker_id: WORKER, result: 1 });
    const r = await t.call(
      "POST",
      "/v1/worker/complete",
      `{"worker_id":"${WORKER}","tasks":[{"task_id":"${task}","result":{"n":1e400}}]}`,
    );
    expect(r.status).toBe(200);
    expect(r.body.tasks[task].code).toBe("CONFLICT");
    expect((await t.ok("GET", `/v1/executions/${id}`)).status).toBe("COMPLETED");
  });
});

describe("a failure's error is kept in a bounded, storable form", () => {
  it("cuts a 1.9 MB message, says so, and keeps the schedule's last outcome short", async () => {
    await t.ok("POST", "/v1/schedules", { schedule_id: "big-error", workflow: "Raw", interval: "1h", input: {} });
    await t.ok("POST", "/v1/schedules/big-error/trigger", {});
    const { tasks } = await t.ok("POST", "/v1/worker/poll", {
      worker_id: WORKER,
      workflows: [{ name: "Raw", version: "1.0.0", max_attempts: 1, backoff_ms: 0 }],
      max_tasks: 1,
      wait_ms: 0,
    });
    const task = tasks[0];
    const message = "x".repeat(1_900_000);
    const r = await t.call("POST", `/v1/worker/tasks/${task.task_id}/fail`, {
      worker_id: WORKER,
      error: { message, type: "Boom", detail: { n: 1 } },
      retryable: false,
    });
    expect(r.status).toBe(200);
    const e = await t.ok("GET", `/v1/executions/${task.execution_id}`);
    expect(e.status).toBe("FAILED");
    const stored = `${"x".repeat(8192)}… (${1_900_000 - 8192} more characters)`;
    expect(e.error).toEqual({ message: stored, type: "Boom", truncated: true });
    // The schedule's last outcome keeps the first 1,000 characters of what the execution holds.
    const s = await t.ok("GET", "/v1/schedules/big-error");
    expect(s.last_outcome.error).toBe(`${"x".repeat(1000)}… (${stored.length - 1000} more characters)`);
  });

  for (const [what, error, kept] of [
    ["a NUL", '{"message":"a\\u0000b"}', { message: "a\ufffdb", truncated: true }],
    ["a number past double's range", '{"message":"m","n":1e400}', { message: "m", truncated: true }],
    ["a plain error", '{"message":"m","type":"T","at":[1,2]}', { message: "m", type: "T", at: [1, 2] }],
  ] as const) {
    it(`keeps an error with ${what} as ${JSON.stringify(kept)}`, async () => {
      const id = `fail-${what.replaceAll(" ", "-").replaceAll("'", "")}`;
      const task = await leased(id);
      const r = await t.call(
        "POST",
        `/v1/worker/tasks/${task}/fail`,
        `{"worker_id":"${WORKER}","error":${error},"retryable":false}`,
      );
      expect(r.status).toBe(200);
      expect((await t.ok("GET", `/v1/executions/${id}`)).error).toEqual(kept);
    });
  }
});

describe("a step's seq", () => {
  it("belongs to one step of a run: another step at a taken seq is refused 409, a repeat of the same step is a no-op", async () => {
    // Compensations run in reverse seq order: two steps at one seq left that order undecided.
    const id = "steps-seq";
    const task = await leased(id);
    const step = (name: string, seq: number) =>
      t.call("POST", `/v1/worker/tasks/${task}/steps`, {
        worker_id: WORKER,
        step: name,
        seq,
        result: name,
        compensable: true,
      });
    expect((await step("a", 1)).status).toBe(200);
    expect((await step("a", 1)).status).toBe(200);
    const taken = await step("b", 1);
    expect({ status: taken.status, body: taken.body }).toEqual({
      status: 409,
      body: {
        code: "CONFLICT",
        message: `step "b": seq 1 is step "a"'s in run 1; each step of a run takes its own seq`,
      },
    });
    expect((await step("b", 2)).status).toBe(200);
    const events = await t.ok("GET", `/v1/executions/${id}/events`);
    const steps = events.events.filter((e: { type: string }) => e.type === "StepCompleted");
    expect(steps.map((e: { data: { step: string; seq: number } }) => [e.data.step, e.data.seq])).toEqual([
      ["a", 1],
      ["b", 2],
    ]);
  });
});
