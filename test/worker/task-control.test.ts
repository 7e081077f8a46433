/**
 * What a task costs when nothing asks for it (docs/benchmarks.md § Memory at S = 10,000
 * (issue 15)): the cancel signal is made on first use, yet a run that asks after the cancel or the
 * lost lease finds it aborted with the same reason; spans are skipped only while no OpenTelemetry
 * SDK and no context manager is registered (docs/operations.md § Tracing). A run whose lease
 * is gone reports no step (docs/workflows.md § Leases).
 */
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import type { TaskJson } from "../../src/domain/worker-protocol.js";
import { CancelledError, LeaseLostError } from "../../src/worker/errors.js";
import type { ProtocolClient } from "../../src/worker/protocol-client.js";
import { runTask, TaskControl } from "../../src/worker/run-task.js";
import { tracingActive } from "../../src/worker/tracing-probe.js";
import { defineWorkflow } from "../../src/worker/workflow.js";

const task = (cancel: string | null) => ({ task_id: "t1", cancel_requested: cancel }) as TaskJson;
const control = (cancel: string | null = null) => new TaskControl(task(cancel), () => false);
const QUIET = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** A protocol client that records each call, its method and arguments, and answers `answer`. */
function recordingApi(answer: object = { cancel_requested: null, steps: [], status: "COMPLETED" }) {
  const calls: { what: string; args: unknown[] }[] = [];
  const api = new Proxy({} as ProtocolClient, {
    get:
      (_t, what: string) =>
      async (...args: unknown[]) => {
        calls.push({ what, args });
        return answer;
      },
  });
  return { api, calls, names: () => calls.map((c) => c.what) };
}

/** The control of a leased task of W@1.0.0, run 1, attempt 1, draining while `draining()` says so. */
function leased(
  o: { id?: string; cancel?: string | null; status?: "RUNNING" | "COMPENSATING"; draining?: () => boolean } = {},
): TaskControl {
  const t = {
    ...task(o.cancel ?? null),
    execution_id: o.id ?? "e1",
    workflow: "W",
    version: "1.0.0",
    run: 1,
    attempt: 1,
  };
  const json = { ...t, input: {}, steps: [], status: o.status ?? "RUNNING" } as unknown as TaskJson;
  return new TaskControl(json, o.draining ?? (() => false));
}

describe("TaskControl's signal, made on first use", () => {
  it("is aborted by a cancel that comes after the run asked for it", () => {
    const c = control();
    const signal = c.signal;
    expect(signal.aborted).toBe(false);
    c.cancel("stop");
    expect(signal.reason).toBeInstanceOf(CancelledError);
    expect((signal.reason as Error).message).toContain("stop");
    expect(c.signal).toBe(signal);
  });

  it("is already aborted when the run asks after a cancel, a cancel leased with the task, or a lost lease", () => {
    const cancelled = control();
    cancelled.cancel("later");
    expect(cancelled.signal.reason).toBeInstanceOf(CancelledError);
    expect(control("at lease").signal.reason).toBeInstanceOf(CancelledError);
    const lost = control();
    lost.loseLease();
    lost.cancel("too late");
    expect(lost.cancelReason).toBeNull();
    expect(lost.signal.reason).toBeInstanceOf(LeaseLostError);
  });

  it("keeps the first reason: a lease lost after the cancel does not change it", () => {
    const c = control();
    c.cancel("first");
    c.loseLease();
    expect(c.signal.reason).toBeInstanceOf(CancelledError);
    expect(c.leaseLost).toBe(true);
  });
});

describe("a run whose lease is gone", () => {
  it("reports no step once handed back (its cancel ignored), lost, or both", async () => {
    for (const end of ["handBack", "loseLease"] as const) {
      // Every report the run makes is recorded; none should come after the lease is gone.
      const { api, names } = recordingApi();
      let finishWork: () => void = () => undefined;
      const working = new Promise<void>((resolve) => {
        finishWork = resolve;
      });
      let started: () => void = () => undefined;
      const atWork = new Promise<void>((resolve) => {
        started = resolve;
      });
      const def = defineWorkflow({
        name: "W",
        version: "1.0.0",
        async run(ctx) {
          await ctx.step("first", () => 1);
          return ctx.step("work", async () => {
            started();
            await working;
            return 2;
          });
        },
      });
      const c = leased();
      const ran = runTask(def, c, api, QUIET);
      await atWork;
      c.cancel("stop");
      c[end]();
      finishWork();
      await ran;
      // The first step, reported while the lease was held; nothing after it (the second step
      // was taken for the next lease's when this worker leased the task again, same attempt).
      expect({ end, calls: names() }).toEqual({ end, calls: ["step"] });
    }
  });
});

describe("tracingActive", () => {
  afterEach(() => {
    trace.disable();
    context.disable();
  });

  it("is false with nothing registered, true with a tracer provider or a context manager", () => {
    expect(tracingActive()).toBe(false);
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    expect(tracingActive()).toBe(true);
    context.disable();
    expect(tracingActive()).toBe(false);
    trace.setGlobalTracerProvider(new BasicTracerProvider());
    expect(tracingActive()).toBe(true);
  });
});

describe("a run that goes on after a step is refused at close", () => {
  it("hands the task back whether it catches the refusal and returns, or wraps it and throws", async () => {
    const runs = {
      // A best-effort step in a try: the run COMPLETED without the step on every deploy.
      caught: async (ctx: TaskContextLike) => {
        await ctx.step("charge", () => 1);
        let notified = "yes";
        try {
          await ctx.step("notify", () => 2);
        } catch (e) {
          notified = `no: ${(e as Error).name}`;
        }
        return { notified };
      },
      // The error wrapped with its cause: the run FAILED with "the worker is closing".
      wrapped: async (ctx: TaskContextLike) => {
        await ctx.step("charge", () => 1);
        try {
          await ctx.step("notify", () => 2);
        } catch (e) {
          throw new Error(`notify failed: ${(e as Error).message}`, { cause: e });
        }
        return {};
      },
    };
    for (const [name, run] of Object.entries(runs)) {
      const { api, names } = recordingApi();
      let draining = false;
      const def = defineWorkflow({
        name: "W",
        version: "1.0.0",
        async run(ctx) {
          const out = await run({
            step: async (step, fn) => {
              const value = await ctx.step(step, fn);
              draining = true; // the worker starts closing once the first step is journaled
              return value;
            },
          });
          return out;
        },
      });
      await runTask(def, leased({ draining: () => draining }), api, QUIET);
      expect({ name, calls: names() }).toEqual({ name, calls: ["step", "release"] });
    }
  });
});

interface TaskContextLike {
  step(name: string, fn: () => number): Promise<number>;
}

describe("a run that throws a value no instanceof can ask", () => {
  it("is reported, by its kind, instead of failing its report until the lease runs out", async () => {
    const { api, calls } = recordingApi({ cancel_requested: null, steps: [], status: "FAILED" });
    const def = defineWorkflow({
      name: "W",
      version: "1.0.0",
      async run() {
        const { proxy, revoke } = Proxy.revocable({}, {});
        revoke();
        throw proxy; // an immer draft after its produce(), say
      },
    });
    await runTask(def, leased(), api, QUIET);
    expect(calls.map((r) => [r.what, r.args[1], r.args[2]])).toEqual([
      [
        "fail",
        { message: "[object that cannot be read: a revoked Proxy, or one whose traps throw]", type: "object" },
        true,
      ],
    ]);
  });
});

describe("the step a failure names", () => {
  it("is the step whose error the run threw, or wrapped; none for the run's own error after a caught one", async () => {
    const failWith = async (name: string, body: (ctx: { step: StepFn }) => Promise<unknown>) => {
      const { api, calls } = recordingApi({ cancel_requested: null, steps: [], status: "FAILED" });
      const def = defineWorkflow({
        name: "W",
        version: "1.0.0",
        run: async (ctx) => body(ctx as unknown as { step: StepFn }),
      });
      await runTask(def, leased({ id: name }), api, QUIET);
      const error = calls.find((c) => c.what === "fail")?.args[1] as { step?: string } | undefined;
      if (error === undefined) throw new Error(`${name}: the run reported no failure`);
      return error.step ?? null;
    };
    const lookupFails = () => {
      throw new Error("no such customer");
    };
    expect(await failWith("thrown", async (ctx) => ctx.step("lookup", lookupFails))).toBe("lookup");
    expect(
      await failWith("wrapped", async (ctx) => {
        try {
          await ctx.step("lookup", lookupFails);
        } catch (e) {
          throw new Error("could not bill", { cause: e });
        }
      }),
    ).toBe("lookup");
    // A tester's run: an optional lookup that failed and was caught, a step that worked, then a
    // validation error of its own. It named "optional-lookup".
    // Whatever a step throws, undefined and null too; the newest step to throw a value names it.
    const thrower = (value: unknown) => () => {
      throw value;
    };
    expect(await failWith("undefined", async (ctx) => ctx.step("s1", thrower(undefined)))).toBe("s1");
    expect(await failWith("null", async (ctx) => ctx.step("s1", thrower(null)))).toBe("s1");
    const same = new Error("same");
    expect(
      await failWith("same object", async (ctx) => {
        await ctx.step("first", thrower(same)).catch(() => null);
        await ctx.step("second", thrower(same));
      }),
    ).toBe("second");
    expect(
      await failWith("same string", async (ctx) => {
        await ctx.step("first", thrower("boom")).catch(() => null);
        await ctx.step("second", thrower("boom"));
      }),
    ).toBe("second");
    expect(
      await failWith("own", async (ctx) => {
        await ctx.step("optional-lookup", lookupFails).catch(() => null);
        await ctx.step("ok-step", () => 1);
        throw new Error("validation failed outside any step");
      }),
    ).toBeNull();
  });
});

type StepFn = (name: string, fn: () => unknown) => Promise<unknown>;

describe("a step called in onCancel", () => {
  it("is refused as called there, not as called after the run returned", async () => {
    const { api, calls } = recordingApi({ cancel_requested: "stop", steps: [], status: "COMPENSATING" });
    const def = defineWorkflow({
      name: "W",
      version: "1.0.0",
      run: async () => ({}),
      async onCancel(ctx) {
        await ctx.step("notify", () => 1);
      },
    });
    await runTask(def, leased({ cancel: "stop", status: "COMPENSATING" }), api, QUIET);
    const cancelled = calls.find((r) => r.what === "cancelled");
    expect(cancelled?.args[1]).toEqual({
      message:
        'step "notify" was called in onCancel: it belongs to no run, so its function did not run (do onCancel\'s work in it directly)',
      type: "RunEndedError",
    });
  });
});

describe("a step the run's code calls after its execution was cancelled", () => {
  it("is said as called after the cancel, not in onCancel, for a workflow that has none", async () => {
    // A replay after a cancel compensates without waiting for the run's code; the code woke from a
    // sleep between steps and its next step was said to be "called in onCancel" (a tester).
    const { api } = recordingApi({ cancel_requested: "stop", steps: [], status: "COMPENSATING" });
    const warnings: string[] = [];
    const log = { ...QUIET, warn: (message: string) => void warnings.push(message) };
    let wake = (): void => undefined;
    const asleep = new Promise<void>((resolve) => {
      wake = resolve;
    });
    let stepped: Promise<unknown> = Promise.resolve();
    const def = defineWorkflow({
      name: "W",
      version: "1.0.0",
      async run(ctx) {
        await asleep;
        stepped = ctx.step("s1", () => 1).catch((e: Error) => e.message);
        return {};
      },
    });
    await runTask(def, leased({ cancel: "stop", status: "COMPENSATING" }), api, log);
    wake();
    await asleep;
    expect(await stepped).toBe(
      'step "s1" was called after its execution was cancelled: it belongs to no run, so its function did not run',
    );
    expect(warnings).toContain("a step was called after its execution was cancelled; its function did not run");
  });
});

describe("a step whose function catches a nested step's refusal at close", () => {
  it("is not journaled: the task is handed back and the step runs again on the next worker", async () => {
    const { api, names } = recordingApi();
    let draining = false;
    const def = defineWorkflow({
      name: "W",
      version: "1.0.0",
      async run(ctx) {
        const outer = await ctx.step("outer", async () => {
          draining = true; // the worker starts closing while "outer" runs
          try {
            return await ctx.step("inner", () => "ran");
          } catch (e) {
            return `inner-skipped:${(e as Error).name}`; // the next worker's replay returned this
          }
        });
        return { outer };
      },
    });
    await runTask(def, leased({ draining: () => draining }), api, QUIET);
    expect(names()).toEqual(["release"]);
  });
});
