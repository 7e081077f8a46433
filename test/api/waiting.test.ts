/**
 * What a RUNNING execution nobody works on says it waits for (`waiting`, docs/outcomes.md), where
 * the advice was wrong: a schedule pinned to a version no worker runs was told to deprecate it
 * (which a pinned schedule ignores) or, once deprecated, that cancelling lets "its schedule go on
 * with the latest version" (its next start takes the pinned one again); and right after the last
 * worker closed, "none seen in the last 60 s".
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers.js";

let t: TestServer;
beforeEach(async () => {
  t = await startTestServer();
  await t.ok("POST", "/v1/workflows", { name: "Versioned", version: "1.0.0" });
  await t.ok("POST", "/v1/workflows", { name: "Versioned", version: "2.0.0" });
});
afterEach(() => t.stop());

const poll = (version: string) => ({
  worker_id: "w-2",
  workflows: [{ name: "Versioned", version, max_attempts: 1, backoff_ms: 0 }],
  wait_ms: 0,
});

it("tells a schedule pinned to a version no worker runs to run that version or change the pin, deprecated or not", async () => {
  // A live worker runs 2.0.0 only.
  await t.ok("POST", "/v1/worker/poll", poll("2.0.0"));
  await t.ok("POST", "/v1/schedules", {
    schedule_id: "pinned",
    workflow: "Versioned",
    version: "1.0.0",
    interval: "1h",
  });
  const { execution_id } = await t.ok("POST", "/v1/schedules/pinned/trigger", {});
  const pinned =
    "no worker polls Versioned@1.0.0, and schedule pinned is pinned to it (its next starts take it too, deprecated or not): run a worker with Versioned@1.0.0, or set the schedule's version to one a worker runs";
  const waiting = async () => (await t.ok("GET", `/v1/executions/${encodeURIComponent(execution_id)}`)).waiting;
  expect(await waiting()).toEqual({ reason: "no_worker_for_version", message: pinned });
  await t.ok("POST", "/v1/workflows/Versioned/versions/1.0.0/deprecate", {});
  expect(await waiting()).toEqual({ reason: "no_worker_for_version", message: pinned });
});

it("says when the last worker left instead of 'none seen' right after it closed", async () => {
  await t.ok("POST", "/v1/worker/poll", poll("1.0.0"));
  expect((await t.call("POST", "/v1/worker/leave", { worker_id: "w-2" })).status).toBe(204);
  const { execution_id } = await t.ok("POST", "/v1/executions", { workflow: "Versioned", version: "1.0.0", input: {} });
  const e = await t.ok("GET", `/v1/executions/${encodeURIComponent(execution_id)}`);
  expect(e.waiting).toEqual({
    reason: "no_worker",
    message: `no worker polls workflow Versioned (the last one left at ${new Date(t.clock.now()).toISOString().replace(".000Z", "Z")}): start a worker that runs Versioned@1.0.0`,
  });
});

it("says a worker counted live was not heard from for a while (killed, frozen) instead of 'a free worker'", async () => {
  await t.ok("POST", "/v1/worker/poll", poll("1.0.0"));
  const { execution_id } = await t.ok("POST", "/v1/executions", { workflow: "Versioned", version: "1.0.0", input: {} });
  const waiting = async () => (await t.ok("GET", `/v1/executions/${encodeURIComponent(execution_id)}`)).waiting;
  expect(await waiting()).toEqual({
    reason: "queued",
    message: "waiting for a free worker: 1 live worker(s) run Versioned@1.0.0",
  });
  // Still counted live for its minute, but a running worker is heard every 20 s at least.
  t.clock.advance(40_000);
  expect(await waiting()).toEqual({
    reason: "queued",
    message:
      "waiting for a worker: 1 worker(s) seen in the last 60 s run Versioned@1.0.0, but none was heard from for 40 s (stopped, or its event loop blocked)",
  });
});

it("says a cancel left to a worker waits for one to compensate, and what to start", async () => {
  const { execution_id } = await t.ok("POST", "/v1/executions", { workflow: "Versioned", version: "1.0.0", input: {} });
  // A worker runs a step, fails the attempt (a retry waits out its back-off) and leaves.
  const { tasks } = await t.ok("POST", "/v1/worker/poll", {
    ...poll("1.0.0"),
    workflows: [{ name: "Versioned", version: "1.0.0", max_attempts: 3, backoff_ms: 60_000 }],
  });
  const task = tasks[0].task_id as string;
  await t.ok("POST", `/v1/worker/tasks/${task}/steps`, {
    ...{ worker_id: "w-2", step: "charge", seq: 1, result: {} },
    compensable: true,
  });
  await t.ok("POST", `/v1/worker/tasks/${task}/fail`, {
    worker_id: "w-2",
    error: { message: "boom" },
    retryable: true,
  });
  expect((await t.call("POST", "/v1/worker/leave", { worker_id: "w-2" })).status).toBe(204);
  await t.ok("POST", `/v1/executions/${encodeURIComponent(execution_id)}/cancel`, { reason: "stop" });
  const e = await t.ok("GET", `/v1/executions/${encodeURIComponent(execution_id)}`);
  // It said nothing: RUNNING, cancel requested, and no hint that a worker must come.
  expect({ status: e.status, cancel_reason: e.cancel_reason, waiting: e.waiting }).toEqual({
    status: "RUNNING",
    cancel_reason: "stop",
    waiting: {
      reason: "no_worker",
      message:
        "its cancel waits for a worker of Versioned@1.0.0 to run the compensations of its journaled steps, and no worker polls workflow Versioned: start a worker that runs Versioned@1.0.0",
    },
  });
});
