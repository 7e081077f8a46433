/**
 * defineWorkflow refuses a definition it could never run, at once and by name: a bad name or
 * version, a retry policy out of range, and a missing `run` (plain JavaScript that passes the
 * handler beside the definition got "def.run is not a function" on every task instead).
 */
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../src/domain/json.js";
import { Worker } from "../../src/worker/worker.js";
import { defineWorkflow } from "../../src/worker/workflow.js";

describe("defineWorkflow", () => {
  const run = async () => ({});

  it("accepts a whole definition", () => {
    expect(defineWorkflow({ name: "Flaky", version: "1.0.0", run }).name).toBe("Flaky");
  });

  it("takes an input type with readonly arrays and objects (it was refused, TS2344), and continues as new with one", () => {
    // Checked by the type-check: a readonly field did not satisfy JsonObject.
    type Order = { readonly items: readonly string[]; pair: readonly [number, string]; meta: Readonly<{ n: number }> };
    const Orders = defineWorkflow<Order>({
      name: "Orders",
      version: "1.0.0",
      async run(ctx, order) {
        if (order.items.length > 10) ctx.continueAsNew({ ...order, items: order.items.slice(10) });
        return { first: order.items[0] ?? null, n: order.meta.n };
      },
    });
    expect(Orders.name).toBe("Orders");
  });

  it("refuses a definition without its run function, naming the workflow", () => {
    const loose = { name: "Flaky", version: "1.0.0" } as unknown as Parameters<typeof defineWorkflow>[0];
    expect(() => defineWorkflow(loose)).toThrow(/^workflow Flaky: run must be the workflow's function/);
  });

  it("refuses a bad name, version or retry policy", () => {
    expect(() => defineWorkflow({ name: "", version: "1.0.0", run })).toThrow(/workflow name "" must be/);
    expect(() => defineWorkflow({ name: "W", version: "1.0", run })).toThrow(/version "1.0" is not semver/);
    // Build metadata is semver, but the server refuses it: said so, not "not semver".
    expect(() => defineWorkflow({ name: "W", version: "1.0.0+build.5", run })).toThrow(
      'workflow W: version "1.0.0+build.5" has build metadata (+build.5), which Orbit does not accept: register 1.0.0, or a higher version',
    );
    // Past the protocol's bounds the server would refuse every poll, and the worker run nothing.
    for (const retry of [
      { maxAttempts: 0, backoffMs: 0 },
      { maxAttempts: 1001, backoffMs: 0 },
      { maxAttempts: 2.5, backoffMs: 0 },
      { maxAttempts: 3, backoffMs: -1 },
      { maxAttempts: 3, backoffMs: 1.5 },
      { maxAttempts: 3, backoffMs: 86_400_001 },
    ]) {
      expect(() => defineWorkflow({ name: "W", version: "1.0.0", run, retry }), JSON.stringify(retry)).toThrow(
        /^workflow W: retry needs maxAttempts from 1 to 1000 and backoffMs a whole number of milliseconds from 0 to 86400000 \(a day\)$/,
      );
    }
    expect(() =>
      defineWorkflow({ name: "W", version: "1.0.0", run, retry: { maxAttempts: 1000, backoffMs: 86_400_000 } }),
    ).not.toThrow();
  });

  it("takes the default of a retry field left out", () => {
    const retry = (given: object) => defineWorkflow({ name: "W", version: "1.0.0", run, retry: given }).retry;
    expect(retry({ maxAttempts: 1 })).toEqual({ maxAttempts: 1, backoffMs: 1000 });
    expect(retry({ backoffMs: 0 })).toEqual({ maxAttempts: 3, backoffMs: 0 });
    expect(retry({})).toEqual({ maxAttempts: 3, backoffMs: 1000 });
    expect(defineWorkflow({ name: "W", version: "1.0.0", run }).retry).toEqual({ maxAttempts: 3, backoffMs: 1000 });
    // A mistake is said, not taken for the default (a typo ran three attempts of a run-once workflow).
    expect(() => retry({ maxAttemps: 1 })).toThrow(
      /^workflow W: retry has no setting "maxAttemps" \(did you mean "maxAttempts"\?\): it takes maxAttempts and backoffMs$/,
    );
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const inherited = Object.create({ maxAttemps: 1 });
    const wrongs = [5, "x", [], new Map([["maxAttemps", 1]]), new Date(), inherited, proxy];
    for (const [i, wrong] of wrongs.entries()) {
      expect(() => retry(wrong as never), `wrongs[${i}]`).toThrow(/^workflow W: retry must be a plain object/);
    }
    expect(() => retry({ maxAttempts: null })).toThrow(/^workflow W: retry needs maxAttempts from 1 to 1000/);
    const hidden = Object.defineProperty({}, "maxAttemps", { value: 1, enumerable: false });
    expect(() => retry(hidden)).toThrow(/retry has no setting "maxAttemps"/);
    expect(() => retry({ [Symbol("maxAttempts")]: 1 })).toThrow(/retry has no setting "Symbol\(maxAttempts\)"/);
  });
});

describe("a key that is no setting", () => {
  const run = async () => ({});
  const definition = (extra: object) => () =>
    defineWorkflow({ name: "W", version: "1.0.0", run, ...extra } as Parameters<typeof defineWorkflow>[0]);

  it("is refused by defineWorkflow, with the setting it is near (a misspelt onCancel never ran)", () => {
    expect(definition({ onCancell() {} })).toThrow(
      'workflow W has no setting "onCancell" (did you mean "onCancel"?): it takes name, version, input, description, run, onCancel and retry',
    );
    expect(definition({ oncancel() {} })).toThrow(
      /^workflow W has no setting "oncancel" \(did you mean "onCancel"\?\)/,
    );
    expect(definition({ retyr: { maxAttempts: 1 } })).toThrow(
      /^workflow W has no setting "retyr" \(did you mean "retry"\?\)/,
    );
    // Nothing near: no guess, every key said.
    expect(definition({ owner: "team-a", Symbol: 1 })).toThrow(
      /^workflow W has no setting "owner", "Symbol": it takes/,
    );
    // Every setting, undefined too (exactOptionalPropertyTypes' way of leaving one out), is taken.
    const all = { input: undefined, description: undefined, onCancel: undefined, retry: undefined };
    expect(definition(all)).not.toThrow();
    // From plain JavaScript, said as such (not "Cannot read properties of null").
    expect(() => defineWorkflow(null as never)).toThrow("defineWorkflow takes the definition, {name, version, run, …}");
    // A definition made by defineWorkflow may be defined again.
    const made = defineWorkflow({ name: "W", version: "1.0.0", run, description: "d", onCancel() {} });
    expect(() => defineWorkflow(made)).not.toThrow();
  });

  it("is refused by new Worker (a misspelt closeTimeoutMs kept the 30 s default)", () => {
    const workflows = [defineWorkflow({ name: "W", version: "1.0.0", run })];
    const worker = (extra: object) => () =>
      new Worker({ server: "http://127.0.0.1:1", workflows, ...extra } as ConstructorParameters<typeof Worker>[0]);
    expect(worker({ closeTimeout: 5 })).toThrow(
      `new Worker has no setting "closeTimeout" (did you mean "closeTimeoutMs"?): it takes server, token, workflows, concurrency, workerId, logger, clock, closeTimeoutMs and shutdownSignals`,
    );
    expect(() => new Worker(null as never)).toThrow("new Worker takes its options, {server, workflows, …}");
    expect(worker({ sever: "http://127.0.0.1:2" })).toThrow(/no setting "sever" \(did you mean "server"\?\)/);
    const all = {
      token: undefined,
      concurrency: undefined,
      workerId: undefined,
      logger: undefined,
      clock: undefined,
      closeTimeoutMs: undefined,
      shutdownSignals: undefined,
    };
    expect(worker(all)).not.toThrow();
  });
});

describe("input schemas", () => {
  it("refuses a schema whose root type leaves objects out, which no input could ever meet", () => {
    const run = async () => ({});
    expect(() => defineWorkflow({ name: "Listy", version: "1.0.0", input: { type: "array" }, run })).toThrow(
      'workflow Listy: input schema: its root type is "array", and an input is always a JSON object: give the root type "object" (or none)',
    );
    const fine: JsonObject[] = [{ type: "object" }, { type: ["object", "null"] }, { properties: {} }];
    for (const input of fine) {
      expect(() => defineWorkflow({ name: "Fine", version: "1.0.0", input, run })).not.toThrow();
    }
  });
});

describe("Worker", () => {
  it("refuses what is not a definition among its workflows, and a logger without its functions", () => {
    const w = defineWorkflow({ name: "W", version: "1.0.0", run: async () => ({}) });
    const make = (workflows: unknown[], logger?: unknown) => () =>
      new Worker({
        server: "http://127.0.0.1:1",
        workflows: workflows as never,
        ...(logger ? { logger: logger as never } : {}),
      });
    // From plain JavaScript these failed later: a server refusal, a bare TypeError, or every task
    // failing "def.run is not a function"; an empty logger at run() and again at close().
    for (const [workflows, at] of [
      [[w, 5], 1],
      [[null], 0],
      [[{ name: "W", version: "1.0.0" }], 0],
    ] as const) {
      expect(make([...workflows])).toThrow(
        `workflows[${at}] is not a workflow definition: make each with defineWorkflow({name, version, run})`,
      );
    }
    expect(make([w], {})).toThrow("logger must have info, warn and error functions (message, fields?) => void");
  });

  it("has run() and no start() a JavaScript caller could take for it", () => {
    // `worker.start()` reached a private method that starts one leased task, and threw
    // "Cannot read properties of undefined (reading 'heartbeat_ms')" from inside the SDK.
    const worker = new Worker({
      server: "http://127.0.0.1:1",
      workflows: [defineWorkflow({ name: "W", version: "1.0.0", run: async () => ({}) })],
    });
    expect(typeof worker.run).toBe("function");
    expect((worker as unknown as Record<string, unknown>).start).toBeUndefined();
  });
});
