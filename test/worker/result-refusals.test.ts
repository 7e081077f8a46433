/**
 * What a run returns must be stored as JSON (docs/outcomes.md § Results that cannot be stored): a
 * result that cannot be (a BigInt, a cycle, over 1 MB, deeper than 64) fails the attempt at once
 * with the reason, not retryable, instead of the report failing in the worker and the lease running
 * out into the same run again, up to the lease-expiry limit (20 runs). And results that can be stored are never refused because
 * of their neighbours: batched completes stay under the server's body limit. Whatever a run
 * throws is reported too (cut, made storable), for the same reason.
 */
import { expect, it, onTestFinished } from "vitest";
import { defineWorkflow, Worker, type WorkflowDefinition } from "../../src/index.js";
import { startTestServer } from "../api/helpers.js";

// biome-ignore lint/suspicious/noExplicitAny: API answers are read field by field
type Json = any;

/**
 * A server and an in-process worker of `workflows`; starts one execution of each (`<name>`), and
 * gives each one's end and the worker's error lines.
 */
async function runEach(
  workflows: WorkflowDefinition[],
): Promise<{ ended(name: string): Promise<Json>; errors: string[] }> {
  const s = await startTestServer();
  const errors: string[] = [];
  const logger = { info: () => {}, warn: () => {}, error: (m: string) => errors.push(m) };
  const worker = new Worker({ server: s.server.url, workflows, logger });
  onTestFinished(async () => {
    await worker.close();
    await s.stop();
  });
  void worker.run();
  const last = workflows.at(-1)!.name;
  await s.until(
    () => s.call("GET", `/v1/workflows/${last}`),
    (r) => r.status === 200,
    "the worker's registration",
  );
  for (const w of workflows) {
    const r = await s.call("POST", "/v1/executions", { execution_id: w.name, workflow: w.name, input: {} });
    expect(r.status).toBe(201);
  }
  const ended = async (name: string): Promise<Json> =>
    (
      await s.until(
        () => s.call("GET", `/v1/executions/${name}`),
        (r) => r.body?.status === "COMPLETED" || r.body?.status === "FAILED",
        `${name} to end`,
      )
    ).body;
  return { ended, errors };
}

const retry = { maxAttempts: 3, backoffMs: 1000 };
const returning = (name: string, result: () => unknown) =>
  defineWorkflow({ name, version: "1.0.0", retry, run: async () => result() });

function circular(): unknown {
  const a: Record<string, unknown> = { name: "a" };
  a.self = a;
  return a;
}

function deep(levels: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = [v];
  return v;
}

/** Four large results that return in the same turn, so that the worker reports them together. */
let arrived = 0;
let release: () => void = () => {};
const together = new Promise<void>((resolve) => {
  release = resolve;
});
const large = (name: string, result: unknown) =>
  defineWorkflow({
    name,
    version: "1.0.0",
    retry,
    run: async () => {
      if (++arrived === 4) release();
      await together;
      return result;
    },
  });

const WORKFLOWS = [
  returning("ResultBigInt", () => ({ n: 10n })),
  returning("ResultCycle", circular),
  returning("ResultHuge", () => ({ s: "x".repeat(1_500_000) })),
  returning("ResultDeep", () => deep(70)),
  returning("ResultNul", () => ({ s: "a\u0000b" })),
  returning("ResultSurrogate", () => ({ s: "\ud800" })),
  defineWorkflow({
    name: "ContinueOffSchema",
    version: "1.0.0",
    retry,
    input: { type: "object", properties: { n: { type: "number" } } },
    run: async (ctx) => ctx.continueAsNew({ n: "not a number" }),
  }),
  defineWorkflow({
    name: "ContinueBigInt",
    version: "1.0.0",
    retry,
    run: async (ctx) => ctx.continueAsNew({ n: 1n } as never),
  }),
  large("Large1", { s: "a".repeat(900_000) }),
  large("Large2", { s: "b".repeat(900_000) }),
  large("Large3", { s: "c".repeat(900_000) }),
  large("Special", { nan: Number.NaN, inf: Number.POSITIVE_INFINITY, date: new Date(0), gone: undefined }),
];

it("fails a result that cannot be stored at once, and completes large results reported together", async () => {
  const { ended, errors } = await runEach(WORKFLOWS);
  const refused = {
    ResultBigInt: "the result is not JSON: Do not know how to serialize a BigInt",
    ResultCycle: "the result is not JSON: Converting circular structure to JSON",
    ResultHuge:
      "the result cannot be stored: result is 1,500,008 bytes serialized; the limit is 1,048,576 bytes (1 MB)",
    ResultDeep: "the result cannot be stored: result nests deeper than 64 levels",
    ResultNul: "the result cannot be stored: a string of the result contains a NUL character",
    ResultSurrogate: "the result cannot be stored: a string of the result contains a lone UTF-16 surrogate",
  };
  for (const [name, message] of Object.entries(refused)) {
    const x = await ended(name);
    expect(x.status, name).toBe("FAILED");
    expect(x.error.type, name).toBe("ResultRefused");
    expect(x.error.message, name).toContain(message);
    expect(x.attempt, name).toBe(1); // not retried: the same run would return the same again
  }
  const continued = await ended("ContinueBigInt");
  expect(continued).toMatchObject({ status: "FAILED", attempt: 1, error: { type: "InputRefused" } });
  expect(continued.error.message).toBe("continueAsNew: the input is not JSON: Do not know how to serialize a BigInt");
  // The server refuses an input its schema does not take: the same, not a report that never lands.
  expect(await ended("ContinueOffSchema")).toMatchObject({
    status: "FAILED",
    run: 1,
    attempt: 1,
    error: {
      type: "InputRefused",
      message: "continueAsNew: the input was refused: input does not match ContinueOffSchema@1.0.0: /n must be number",
    },
  });

  for (const [name, letter] of [
    ["Large1", "a"],
    ["Large2", "b"],
    ["Large3", "c"],
  ] as const) {
    const x = await ended(name);
    expect(x.status, name).toBe("COMPLETED");
    expect(x.result.s, name).toBe(letter.repeat(900_000));
  }
  // As JSON.stringify writes them.
  expect((await ended("Special")).result).toEqual({ nan: null, inf: null, date: "1970-01-01T00:00:00.000Z" });
  expect(errors.filter((m) => m.startsWith("could not report"))).toEqual([]);
});

const once = { maxAttempts: 1, backoffMs: 1000 };
const throwing = (name: string, thrown: () => unknown) =>
  defineWorkflow({
    name,
    version: "1.0.0",
    retry: once,
    run: async () => {
      throw thrown();
    },
  });

it("reports whatever a run throws: long, NUL, lone surrogates, a value that cannot become text", async () => {
  const { ended, errors } = await runEach([
    throwing("ThrowsLong", () => new Error("x".repeat(3_000_000))),
    throwing("ThrowsNul", () => new Error("bad \u0000 byte and a lone \udc00 half")),
    throwing("ThrowsBare", () => Object.create(null)),
    throwing("ThrowsOddName", () => Object.assign(new Error("odd"), { name: "N\u0000".repeat(1000) })),
  ]);
  const failed = async (name: string) => {
    const x = await ended(name);
    expect(x.status, name).toBe("FAILED");
    return x.error;
  };
  const long = await failed("ThrowsLong");
  expect(long.type).toBe("Error");
  expect(long.message).toBe(`${"x".repeat(32 * 1024)}… (${3_000_000 - 32 * 1024} more characters)`);
  expect(await failed("ThrowsNul")).toEqual({ type: "Error", message: "bad \ufffd byte and a lone \ufffd half" });
  expect(await failed("ThrowsBare")).toEqual({ type: "object", message: "{}" });
  const odd = await failed("ThrowsOddName");
  expect(odd.message).toBe("odd");
  expect(odd.type).toMatch(/^(N\ufffd)+… \(1800 more characters\)$/);
  expect(errors.filter((m) => m.startsWith("could not report"))).toEqual([]);
});

it("fails a run for good when a step's result cannot be journaled: the step ran once, a retry would run it again", async () => {
  const ran: Record<string, number> = {};
  const stepping = (name: string, stepName: string, result: () => unknown) =>
    defineWorkflow({
      name,
      version: "1.0.0",
      retry,
      run: async (ctx) => {
        await ctx.step(stepName, () => {
          ran[name] = (ran[name] ?? 0) + 1;
          return result();
        });
        return { done: true };
      },
    });
  const workflows = [
    stepping("StepBigInt", "charge", () => ({ n: 1n })),
    stepping("StepHuge", "charge", () => "x".repeat(1_200_000)),
    stepping("StepNulName", "charge\u0000", () => ({ ok: true })),
    // A key the server's parser refuses: said of the result, not of "the request body".
    stepping("StepProto", "charge", () => JSON.parse('{"card": {"__proto__": {"admin": true}}}')),
  ];
  const { ended: failed } = await runEach(workflows);
  const bigint = await failed("StepBigInt");
  expect(bigint).toMatchObject({ status: "FAILED", attempt: 1 });
  expect(bigint.error).toEqual({
    type: "NonRetryableError",
    step: "charge",
    message: 'step "charge": the result is not JSON: Do not know how to serialize a BigInt',
  });
  const huge = await failed("StepHuge");
  expect(huge).toMatchObject({ status: "FAILED", attempt: 1, error: { type: "NonRetryableError", step: "charge" } });
  expect(huge.error.message).toMatch(/^step "charge": the result cannot be stored: result is 1,200,002 bytes/);
  // A name the server would refuse is refused before the step runs (it ran once, then was refused).
  const nul = await failed("StepNulName");
  expect(nul).toMatchObject({ status: "FAILED", attempt: 1, error: { type: "NonRetryableError" } });
  expect(nul.error.message).toBe("a step name must not contain a NUL character");
  expect((await failed("StepProto")).error).toEqual({
    type: "NonRetryableError",
    step: "charge",
    message:
      'step "charge": the result has a "__proto__" key (or "constructor" holding "prototype"), which Orbit refuses: rename it',
  });
  expect(ran).toEqual({ StepBigInt: 1, StepHuge: 1, StepProto: 1 });
});

it("a step the run does not await cannot crash the worker, even when it fails after the run returned", async () => {
  const late = (name: string, fail: boolean) =>
    defineWorkflow({
      name,
      version: "1.0.0",
      retry: { maxAttempts: 1, backoffMs: 0 },
      run: async (ctx) => {
        // Not awaited: a mistake in the workflow, which must cost no other task its worker.
        void ctx.step("late", async () => {
          await new Promise((resolve) => setTimeout(resolve, 50));
          if (fail) throw new Error("late failure");
          return 1;
        });
        return "done";
      },
    });
  const { ended } = await runEach([late("LateThrows", true), late("LateJournal", false)]);
  expect(await ended("LateThrows")).toMatchObject({ status: "COMPLETED", result: "done" });
  expect(await ended("LateJournal")).toMatchObject({ status: "COMPLETED", result: "done" });
  // Both late steps settle after the runs reported; vitest fails the file on an unhandled rejection.
  await new Promise((resolve) => setTimeout(resolve, 200));
});

it("refuses a step name the server would refuse before the step runs (it ran the work, then was refused)", async () => {
  let ran = 0;
  const named = (name: string, step: unknown) =>
    defineWorkflow({
      name,
      version: "1.0.0",
      retry,
      run: async (ctx) => ctx.step(step as string, async () => ++ran),
    });
  const { ended } = await runEach([
    named("LongStep", "s".repeat(501)),
    named("EmptyStep", ""),
    named("NumberStep", 7),
    named("NulStep", "a\u0000b"),
    named("SurrogateStep", "x\ud800y"),
    named("EmojiStep", "\u{1F600}".repeat(500)),
  ]);
  const long = await ended("LongStep");
  expect(long).toMatchObject({ status: "FAILED", attempt: 1 });
  expect(long.error.message).toMatch(/^a step name is at most 500 characters; this one has 501 \("s{40}"…\)$/);
  expect((await ended("EmptyStep")).error.message).toBe("a step name must not be empty");
  expect((await ended("NumberStep")).error.message).toBe("a step name is a string, not number");
  expect((await ended("NulStep")).error.message).toBe("a step name must not contain a NUL character");
  expect((await ended("SurrogateStep")).error.message).toBe("a step name must not contain a lone UTF-16 surrogate");
  // 500 characters of two UTF-16 units each: within the limit, and the step runs.
  expect((await ended("EmojiStep")).status).toBe("COMPLETED");
  expect(ran).toBe(1);
});

it("refuses continueAsNew(null) as a start refuses a null input (it ran on as {})", async () => {
  const Nulled = defineWorkflow({
    name: "ContinueNull",
    version: "1.0.0",
    retry,
    run: async (ctx, input: { again?: boolean }) => {
      if (input.again === false) return { ran: "on" };
      return ctx.continueAsNew(null as never);
    },
  });
  // Nothing given: said as undefined (it was sent as null, and refused as "not null").
  const Nothing = defineWorkflow({
    name: "ContinueNothing",
    version: "1.0.0",
    retry,
    run: async (ctx) => ctx.continueAsNew(undefined as never),
  });
  const { ended } = await runEach([Nulled, Nothing]);
  expect(await ended("ContinueNull")).toMatchObject({
    status: "FAILED",
    run: 1,
    attempt: 1,
    error: {
      type: "InputRefused",
      message: "continueAsNew: the input was refused: input must be a JSON object, not null",
    },
  });
  expect(await ended("ContinueNothing")).toMatchObject({
    status: "FAILED",
    run: 1,
    attempt: 1,
    error: { type: "InputRefused", message: "continueAsNew: the input must be a JSON object, not undefined" },
  });
});
