/**
 * Workflow code that does not return after its cancel (docs/workflows.md § Cancellation and
 * compensation): the handed-back task's next lease compensates without waiting for the replayed
 * code, and a worker whose every slot is held by such code is named where its executions wait.
 */
import { afterEach, expect, it } from "vitest";
import { workerTable } from "../../src/cli/outcomes.js";
import type { WorkerJson } from "../../src/client/types.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { defineWorkflow, Worker } from "../../src/index.js";
import { TaskContext } from "../../src/worker/context.js";
import { CancelledError } from "../../src/worker/errors.js";
import { startTestServer, type TestServer } from "../api/helpers.js";
import { closeWithHungCode, secondsUntil, taskJson, turn } from "./hung-code.js";

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

let server: TestServer | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

it("compensates a run handed back after its cancel even when its code hangs outside any step, and frees the replay's slot", async () => {
  server = await startTestServer();
  const marks: string[] = [];
  const HangAfter = defineWorkflow({
    name: "HangAfter",
    version: "1.0.0",
    run: async (ctx) => {
      await ctx.step("h1", async () => 1, { compensate: async () => void marks.push("compensate h1") });
      // An await that never ends and is no step: every replay of the handed-back task hung here
      // too, was handed back 60 s later keeping its slot, and the execution stayed RUNNING with its
      // cancel for good (a tester's worker lost 9 of its 10 slots this way).
      await new Promise<void>(() => {});
      return { ok: true };
    },
    onCancel: async (_ctx, reason) => void marks.push(`onCancel ${reason}`),
  });
  const Quick = defineWorkflow({ name: "Quick", version: "1.0.0", run: async () => ({ ok: true }) });
  const clock = new ManualClock(Date.parse("2026-11-15T18:51:00Z"));
  const worker = new Worker({
    server: server.server.url,
    workflows: [HangAfter, Quick],
    clock,
    logger: quiet,
    concurrency: 2,
  });
  const running = worker.run();
  await server.ok("POST", "/v1/executions", { execution_id: "hang-after", workflow: "HangAfter", input: {} });
  const steps = async () => (await server!.ok("GET", "/v1/executions/hang-after/events")).events as { type: string }[];
  await server.until(steps, (e) => e.some((x) => x.type === "StepCompleted"), "h1 is journaled");
  await server.ok("POST", "/v1/executions/hang-after/cancel", { reason: "stop it" });
  const status = await secondsUntil(
    clock,
    async () => (await server!.ok("GET", "/v1/executions/hang-after")).status,
    (st) => st === "CANCELLED",
  );
  expect(status).toBe("CANCELLED");
  expect(marks).toEqual(["compensate h1", "onCancel stop it"]);
  // The first run's code still holds one slot (concurrency bounds the code running); the replay's is free.
  await server.ok("POST", "/v1/executions", { execution_id: "quick-1", workflow: "Quick", input: {} });
  await server.until(
    async () => (await server!.ok("GET", "/v1/executions/quick-1")).status,
    (st) => st === "COMPLETED",
    "quick-1 runs in the free slot",
  );
  await closeWithHungCode(worker, clock, running);
});

it("names a worker whose every slot is held by code that did not return after its cancel, where its executions wait", async () => {
  server = await startTestServer();
  const Hang = defineWorkflow({
    name: "HangFull",
    version: "1.0.0",
    run: async (ctx) => {
      await ctx.step("h1", async () => 1, { compensate: async () => undefined });
      await new Promise<void>(() => {});
      return { ok: true };
    },
  });
  const clock = new ManualClock(Date.parse("2026-11-15T18:51:00Z"));
  const worker = new Worker({
    server: server.server.url,
    workflows: [Hang],
    clock,
    logger: quiet,
    concurrency: 1,
    workerId: "w-full",
  });
  const running = worker.run();
  await server.ok("POST", "/v1/executions", { execution_id: "held", workflow: "HangFull", input: {} });
  const events = async () => (await server!.ok("GET", "/v1/executions/held/events")).events as { type: string }[];
  await server.until(events, (e) => e.some((x) => x.type === "StepCompleted"), "h1 is journaled");
  await server.ok("POST", "/v1/executions/held/cancel", { reason: "stop it" });
  // Past the worker's 60 s grace its task is handed back; the code keeps the only slot, so the
  // compensation waits, and the worker, live and holding no task, has no free slot. The server's
  // clock moves too: a release is awaited 2 s for the poll it would bring (workers.ts reported()).
  const waiting = await secondsUntil(
    clock,
    async () => {
      server!.clock.advance(1000);
      return ((await server!.ok("GET", "/v1/executions/held")).waiting?.message ?? "") as string;
    },
    (w) => w.includes("no free slot"),
  );
  expect(waiting).toBe(
    "its cancel waits for a worker to run its compensations; waiting for a free worker: 1 live worker(s) run HangFull@1.0.0; worker w-full has no free slot yet holds no task: code of runs that has not returned (a cancel it ignored, a lease it lost) keeps the slots; its log names them, and a restart frees them",
  );
  // The worker list says so too: it read live, running 0, like an idle worker.
  const { workers } = (await server.ok("GET", "/v1/workers")) as { workers: WorkerJson[] };
  expect(workers.map((w) => [w.worker_id, w.status, w.running_tasks, w.free_slots, w.stuck])).toEqual([
    ["w-full", "live", 0, 0, true],
  ]);
  const shown = workerTable(workers, Date.parse(workers[0]?.last_seen_at ?? ""));
  expect(shown.split("\n")[1]).toMatch(/^w-full +stuck +0ms +0 +HangFull@1\.0\.0$/);
  expect(shown).toContain("stuck: no free slot, yet it holds no task");
  const { checks } = (await server.ok("GET", "/v1/doctor")) as { checks: { name: string; status: string }[] };
  expect(checks.find((c) => c.name === "workers")).toMatchObject({
    status: "warn",
    message:
      "1 live worker(s); every scheduled workflow (0) is polled; stuck (no free slot, yet no task held: code of runs that has not returned keeps the slots): w-full",
  });
  // Closing does not wait for that code, its task handed back already: it waited closeTimeoutMs
  // (30 s) and said it handed back a task it did not hold (a tester). The clock does not move here.
  let closed = false;
  const closing = worker.close().then(() => {
    closed = true;
  });
  for (let i = 0; i < 5000 && !closed; i++) await turn();
  expect(closed).toBe(true);
  await closing;
  await running;
});

it("compensates a replay that does not reach its journaled steps within the grace, naming the steps it did not reach", async () => {
  server = await startTestServer();
  const marks: string[] = [];
  const warnings: string[] = [];
  let runs = 0;
  const Slow = defineWorkflow({
    name: "SlowReplay",
    version: "1.0.0",
    run: async (ctx) => {
      runs++;
      await ctx.step("a", async () => 1, { compensate: async () => void marks.push("compensate a") });
      // The replay waits here, outside any step, and never reaches b: every replay was handed
      // back 60 s later and replayed as slowly, and the cancel was never honoured (a tester).
      if (runs > 1) await new Promise<void>(() => {});
      await ctx.step("b", async () => 2, { compensate: async () => void marks.push("compensate b") });
      await new Promise<void>(() => {});
      return { ok: true };
    },
    onCancel: async (_ctx, reason) => void marks.push(`onCancel ${reason}`),
  });
  const clock = new ManualClock(Date.parse("2026-11-15T18:51:00Z"));
  const logger = { ...quiet, warn: (message: string) => void warnings.push(message) };
  const worker = new Worker({ server: server.server.url, workflows: [Slow], clock, logger, concurrency: 2 });
  const running = worker.run();
  await server.ok("POST", "/v1/executions", { execution_id: "slow", workflow: "SlowReplay", input: {} });
  const events = async () => (await server!.ok("GET", "/v1/executions/slow/events")).events as { type: string }[];
  await server.until(events, (e) => e.filter((x) => x.type === "StepCompleted").length === 2, "a and b journaled");
  await server.ok("POST", "/v1/executions/slow/cancel", { reason: "stop it" });
  const e = await secondsUntil(
    clock,
    () => server!.ok("GET", "/v1/executions/slow"),
    (x) => x.status === "CANCELLED",
    300,
  );
  expect(e.status).toBe("CANCELLED");
  expect(marks).toEqual(["compensate a", "onCancel stop it"]);
  expect(e.error).toMatchObject({
    type: "CompensationFailed",
    message: expect.stringContaining("no compensation for step b: the workflow did not reach it again when replayed"),
  });
  expect(warnings).toContain(
    "a replay after a cancel has not reached its journaled steps 60 s on (code outside steps is slow): it compensates now, and the steps it did not reach are reported as not compensated",
  );
  // A replay that compensated without waiting is no step failure the run went on without.
  expect(warnings.filter((w) => w.startsWith("a step failed and the run went on"))).toEqual([]);
  await closeWithHungCode(worker, clock, running);
});

it("says nothing of a step refused for the cancel the run ended for", async () => {
  // A replay that compensated without waiting for its code ended with its own CancelledError; the
  // code's next step, refused for the same cancel, was warned of as a step failure the run went
  // on without (a tester saw it on every replay).
  const warnings: string[] = [];
  const task = taskJson({ cancel_requested: "stop it" });
  const log = { ...quiet, warn: (message: string) => void warnings.push(message) };
  const ctx = new TaskContext(task, { signal: new AbortController().signal }, log, false, {
    journal: async () => undefined,
    cancelReason: () => "stop it",
    draining: () => false,
  });
  await expect(ctx.step("c", async () => 1)).rejects.toBeInstanceOf(CancelledError);
  ctx.runEnded(new CancelledError("stop it"));
  expect(warnings).toEqual([]);
});
