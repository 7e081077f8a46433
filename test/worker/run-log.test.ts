/**
 * What a worker says about its runs (docs/workflows.md § Worker, § Cancellation): a step that failed
 * while the run went on without its error, a step or continueAsNew called after the run returned,
 * a cancelled run handed back when its code ignores the cancel, and a run whose task is gone while
 * its code still holds a slot. Time is the worker's manual clock where it matters.
 */
import { afterEach, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { defineWorkflow, Worker } from "../../src/index.js";
import { startTestServer, type TestServer } from "../api/helpers.js";
import { capturing, closeWithHungCode, secondsUntil, turn } from "./hung-code.js";

let server: TestServer | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

it("says a step that failed while the run went on without its error, and not one whose error the run threw", async () => {
  server = await startTestServer();
  const { lines, logger } = capturing();
  const Unawaited = defineWorkflow({
    name: "Unawaited",
    version: "1.0.0",
    run: async (ctx) => {
      // Not awaited, and failing before the run returns: its failure vanished without a line.
      void ctx.step("forgotten", async () => {
        throw new Error("disk full");
      });
      await ctx.step("kept", async () => 1);
      return { ok: true };
    },
  });
  const Thrown = defineWorkflow({
    name: "Thrown",
    version: "1.0.0",
    retry: { maxAttempts: 1, backoffMs: 0 },
    run: async (ctx) => {
      await ctx.step("awaited", async () => {
        throw new Error("said by the failure itself");
      });
    },
  });
  // A value String() cannot convert (no prototype): saying it made the run's report throw, so the
  // run was never reported and ran again after its lease, 20 times.
  const Odd = defineWorkflow({
    name: "OddThrow",
    version: "1.0.0",
    run: async (ctx) => {
      await ctx
        .step("odd", async () => {
          throw Object.create(null);
        })
        .catch(() => undefined);
      return { ok: true };
    },
  });
  // continue-as-new asked for inside a step is control flow: no warning of a step failure.
  const Again = defineWorkflow({
    name: "AgainInStep",
    version: "1.0.0",
    run: async (ctx, input: { n?: number }) => {
      if (input.n === 1) return { ok: true };
      await ctx.step("next", async () => ctx.continueAsNew({ n: 1 }));
      return { ok: false };
    },
  });
  const worker = new Worker({
    server: server.server.url,
    workflows: [Unawaited, Thrown, Odd, Again],
    logger,
    workerId: "w-steps",
  });
  const running = worker.run();
  await server.ok("POST", "/v1/executions", { execution_id: "u-1", workflow: "Unawaited", input: {} });
  await server.ok("POST", "/v1/executions", { execution_id: "t-1", workflow: "Thrown", input: {} });
  await server.ok("POST", "/v1/executions", { execution_id: "o-1", workflow: "OddThrow", input: {} });
  await server.ok("POST", "/v1/executions", { execution_id: "a-1", workflow: "AgainInStep", input: {} });
  for (const id of ["u-1", "t-1", "o-1", "a-1"]) {
    await server.until(
      async () => (await server!.ok("GET", `/v1/executions/${id}`)).status,
      (s) => s === "COMPLETED" || s === "FAILED",
      `${id} ends`,
    );
  }
  await worker.close();
  await running;
  const said = lines.filter(([, m]) => m.startsWith("a step failed and the run went on"));
  // The two runs end in either order.
  const byStep = [...said].sort((a, b) => String(a[2]?.step).localeCompare(String(b[2]?.step)));
  expect(byStep).toEqual([
    [
      "warn",
      "a step failed and the run went on without its error (it was not awaited, or caught)",
      expect.objectContaining({ step: "forgotten", error: "disk full" }),
    ],
    [
      "warn",
      "a step failed and the run went on without its error (it was not awaited, or caught)",
      expect.objectContaining({ step: "odd", error: "{}" }),
    ],
  ]);
  expect((await server.ok("GET", "/v1/executions/o-1")).status).toBe("COMPLETED");
});

it("refuses a step or continueAsNew called after the run returned: the step's function does not run", async () => {
  server = await startTestServer();
  const { lines, logger } = capturing();
  const ran: string[] = [];
  let late: Promise<unknown> | null = null;
  let again: unknown = null;
  const Late = defineWorkflow({
    name: "Late",
    version: "1.0.0",
    run: async (ctx) => {
      // Called once the run has returned (a timer the run did not wait for): the step ran, a
      // charge for an execution already COMPLETED, and only its journal write was refused.
      setTimeout(() => {
        late = ctx.step("late", async () => {
          ran.push("late");
          return 1;
        });
        late.catch(() => undefined);
        try {
          ctx.continueAsNew({});
        } catch (err) {
          again = err;
        }
      }, 0);
      return { ok: true };
    },
  });
  const worker = new Worker({ server: server.server.url, workflows: [Late], logger, workerId: "w-late" });
  const running = worker.run();
  await server.ok("POST", "/v1/executions", { execution_id: "late-1", workflow: "Late", input: {} });
  await server.until(
    async () => (await server!.ok("GET", "/v1/executions/late-1")).status,
    (s) => s === "COMPLETED",
    "late-1 completes",
  );
  await server.until(
    async () => lines.some(([, m]) => m.startsWith("a step was called after the run returned")),
    (said) => said,
    "the late step is said",
  );
  await expect(late).rejects.toThrow(
    'step "late" was called after the run returned: it belongs to no run, so its function did not run',
  );
  expect(ran).toEqual([]);
  expect((again as Error).name).toBe("RunEndedError");
  expect(lines.filter(([, m]) => m.startsWith("a step was called after"))).toEqual([
    [
      "warn",
      "a step was called after the run returned; its function did not run",
      expect.objectContaining({ step: "late" }),
    ],
  ]);
  await worker.close();
  await running;
});

it("hands back a cancelled run whose code ignores the cancel past 60 s, so that its compensations run", async () => {
  server = await startTestServer();
  const { lines, logger } = capturing();
  const marks: string[] = [];
  const Hang = defineWorkflow({
    name: "Hang",
    version: "1.0.0",
    run: async (ctx) => {
      await ctx.step("h1", async () => 1, { compensate: async () => void marks.push("compensate h1") });
      // A step that never settles and ignores ctx.signal: the run stayed RUNNING for as long as
      // the worker lived, its cancel unanswered (4 min 32 s until a tester's SIGTERM).
      await ctx.step("h2", () => new Promise<number>(() => {}));
      return { ok: true };
    },
    onCancel: async (_ctx, reason) => void marks.push(`onCancel ${reason}`),
  });
  const clock = new ManualClock(Date.parse("2026-11-15T18:51:00Z"));
  const worker = new Worker({ server: server.server.url, workflows: [Hang], clock, logger, workerId: "w-hang" });
  const running = worker.run();
  await server.ok("POST", "/v1/executions", { execution_id: "hang-1", workflow: "Hang", input: {} });
  const steps = async () => (await server!.ok("GET", "/v1/executions/hang-1/events")).events as { type: string }[];
  await server.until(steps, (e) => e.some((x) => x.type === "StepCompleted"), "h1 is journaled");
  await server.ok("POST", "/v1/executions/hang-1/cancel", { reason: "stop it" });
  const status = await secondsUntil(
    clock,
    async () => (await server!.ok("GET", "/v1/executions/hang-1")).status,
    (st) => st === "CANCELLED",
  );
  expect(status).toBe("CANCELLED");
  expect(marks).toEqual(["compensate h1", "onCancel stop it"]);
  expect(lines.filter(([, m]) => m.startsWith("a cancelled run has not returned"))).toEqual([
    [
      "warn",
      "a cancelled run has not returned 60 s after its cancel (its code ignores ctx.signal): its task is handed back so that its compensations run; the code keeps its slot until it returns",
      expect.objectContaining({ execution_id: "hang-1" }),
    ],
  ]);
  await closeWithHungCode(worker, clock, running);
});

it("says when a run's task is gone but its code goes on holding a slot (its execution timed out)", async () => {
  server = await startTestServer();
  const { lines, logger } = capturing();
  const Stuck = defineWorkflow({
    name: "Stuck",
    version: "1.0.0",
    run: async (ctx) => {
      await ctx.step("forever", () => new Promise<number>(() => {}));
      return { ok: true };
    },
  });
  const clock = new ManualClock(Date.parse("2026-11-15T18:51:00Z"));
  const worker = new Worker({ server: server.server.url, workflows: [Stuck], clock, logger, concurrency: 1 });
  const running = worker.run();
  await server.ok("POST", "/v1/executions", {
    execution_id: "stuck-1",
    workflow: "Stuck",
    input: {},
    run_timeout: "2s",
  });
  await server.until(
    async () =>
      ((await server!.ok("GET", "/v1/executions/stuck-1/events")).events as { type: string }[]).map((e) => e.type),
    (types) => types.includes("WorkflowTaskStarted"),
    "the run to be leased",
  );
  // The run's deadline, then the 90 s grace for its worker to compensate: the server ends it FAILED.
  server.clock.advance(3000);
  await server.until(
    async () => (await server!.ok("GET", "/v1/executions/stuck-1")).cancel_reason,
    (r) => r != null,
    "the timeout's cancel",
  );
  server.clock.advance(91_000);
  await server.until(
    async () => (await server!.ok("GET", "/v1/executions/stuck-1")).status,
    (st) => st === "FAILED",
    "FAILED",
  );
  const said = () => lines.filter(([, m]) => m.startsWith("a run's task is no longer this worker's"));
  for (let s = 0; s < 30 && said().length === 0; s++) {
    while (clock.pendingSleeps === 0) await turn();
    clock.advance(1000);
    await turn();
  }
  expect(said()).toEqual([
    [
      "warn",
      "a run's task is no longer this worker's (its lease ended, or its execution ended) but its code has not returned; it holds one of this worker's slots until it does",
      expect.objectContaining({ execution_id: "stuck-1", concurrency: 1 }),
    ],
  ]);
  await closeWithHungCode(worker, clock, running);
});
