/**
 * A worker started before its server (both started together, or the server restarting) waits for
 * it instead of crashing: registration retries every second, as polls do (docs/workflows.md §
 * Worker). And a `server` option that is not an http(s) URL is refused at construction, naming the
 * option.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { defineWorkflow, OrbitClient, Worker } from "../../src/index.js";
import { startTestServer, type TestServer } from "../api/helpers.js";
import { closedPort } from "../helpers/ports.js";

const Noop = defineWorkflow({ name: "StartOrder", version: "1.0.0", run: async () => ({ ok: true }) });

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Runs the worker until it sleeps on its clock (waiting to retry); fails if run() ends first. */
async function runUntilItWaits(worker: Worker, clock: ManualClock): Promise<{ running: Promise<void> }> {
  let settled = false;
  const running = worker.run().finally(() => {
    settled = true;
  });
  while (clock.pendingSleeps === 0 && !settled) await turn();
  expect(settled).toBe(false);
  return { running }; // wrapped: an async function returning the promise would wait for it
}

describe("a worker started before its server", () => {
  let server: TestServer | null = null;
  let worker: Worker | null = null;
  afterEach(async () => {
    await worker?.close();
    await server?.stop();
    worker = null;
    server = null;
  });

  it("retries registering every second until the server answers, then runs executions", async () => {
    const port = await closedPort();
    const clock = new ManualClock(Date.parse("2026-11-15T18:51:00Z"));
    const warnings: string[] = [];
    const logger = { info: () => {}, warn: (m: string) => warnings.push(m), error: () => {} };
    worker = new Worker({ server: `http://127.0.0.1:${port}`, workflows: [Noop], clock, logger });
    // Refused (nothing listens): a warning and a 1 s sleep on the worker's clock, not a rejection.
    const { running } = await runUntilItWaits(worker, clock);
    expect(warnings).toEqual(["registering the workflows failed; retrying every 1 s"]);
    // Said once, then every 30 s while it lasts (it was a line a second).
    for (let i = 0; i < 29; i++) {
      clock.advance(1000);
      while (clock.pendingSleeps === 0) await turn();
    }
    expect(warnings).toEqual(["registering the workflows failed; retrying every 1 s"]);
    clock.advance(1000);
    while (clock.pendingSleeps === 0) await turn();
    expect(warnings).toEqual([
      "registering the workflows failed; retrying every 1 s",
      "registering the workflows still fails; retrying every 1 s",
    ]);

    server = await startTestServer({ port });
    clock.advance(1000);
    const s = server;
    await s.until(
      () => s.call("GET", "/v1/workflows/StartOrder"),
      (r) => r.status === 200,
      "the worker's registration",
    );
    const started = await s.call("POST", "/v1/executions", { workflow: "StartOrder", input: {} });
    expect(started.status).toBe(201);
    const done = await s.until(
      () => s.call("GET", `/v1/executions/${started.body.execution_id}`),
      (r) => r.body?.status === "COMPLETED",
      "the execution to complete",
    );
    expect(done.body.result).toEqual({ ok: true });
    await worker.close();
    await running;
  });

  it("close() during the wait ends run() without registering", async () => {
    const port = await closedPort();
    const clock = new ManualClock(Date.parse("2026-11-15T18:51:00Z"));
    const logger = { info: () => {}, warn: () => {}, error: () => {} };
    worker = new Worker({ server: `http://127.0.0.1:${port}`, workflows: [Noop], clock, logger });
    const { running } = await runUntilItWaits(worker, clock);
    await worker.close();
    await expect(running).resolves.toBeUndefined();
  });
});

describe("the Worker's server option", () => {
  it.each([
    [undefined, /needs the Orbit server's URL as its `server` option, e\.g\. http:\/\/127\.0\.0\.1:7233/],
    ["", /needs the Orbit server's URL/],
    ["localhost:7233", /`server` option must be an http:\/\/ or https:\/\/ URL, .*\(got "localhost:7233"\)/],
    ["127.0.0.1:7233", /must be an http:\/\/ or https:\/\/ URL/],
    ["ftp://127.0.0.1:7233", /must be an http:\/\/ or https:\/\/ URL/],
  ])("refuses %j naming the option", (server, message) => {
    expect(() => new Worker({ server: server as string, workflows: [Noop] })).toThrow(message);
  });
});

describe("the OrbitClient's requests", () => {
  it("refuses a body that cannot be written as JSON with a TypeError, before any connection", async () => {
    const port = await closedPort();
    const client = new OrbitClient({ server: `http://127.0.0.1:${port}` });
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    await expect(client.startExecution({ workflow: "W", input: cycle as never })).rejects.toThrow(
      new TypeError(
        "POST /v1/executions: the request body cannot be written as JSON: it holds a cycle or nests too deep",
      ),
    );
  });
});

describe("the OrbitClient's server option", () => {
  it("takes `server`, as a Worker does, and `baseUrl`, its first name; a trailing slash is dropped", () => {
    expect(new OrbitClient({ server: "http://127.0.0.1:7233/" }).baseUrl).toBe("http://127.0.0.1:7233");
    expect(new OrbitClient({ baseUrl: "https://orbit.example//" }).baseUrl).toBe("https://orbit.example");
  });

  it.each([
    [{}, /an OrbitClient needs the Orbit server's URL as its `server` option, e\.g\. http:\/\/127\.0\.0\.1:7233/],
    [{ server: "" }, /needs the Orbit server's URL/],
    [
      { server: "localhost:7233" },
      /OrbitClient's `server` option must be an http:\/\/ or https:\/\/ URL, .*\(got "localhost:7233"\)/,
    ],
    [{ baseUrl: "ftp://127.0.0.1:7233" }, /must be an http:\/\/ or https:\/\/ URL/],
  ])("refuses %j naming the option, before any request", (options, message) => {
    expect(() => new OrbitClient(options as { server: string })).toThrow(message);
  });
});

describe("the Worker's workflows", () => {
  it("refuses none, or not an array, and one version given as two different definitions", () => {
    expect(() => new Worker({ server: "http://127.0.0.1:7233", workflows: [] })).toThrow(/needs at least one workflow/);
    expect(() => new Worker({ server: "http://127.0.0.1:7233" } as never)).toThrow(/needs at least one workflow/);
    const again = defineWorkflow({ name: "StartOrder", version: "1.0.0", run: async () => ({ other: true }) });
    expect(() => new Worker({ server: "http://127.0.0.1:7233", workflows: [Noop, again] })).toThrow(
      "workflow StartOrder@1.0.0 is given twice, as two different definitions; give each version once",
    );
    expect(() => new Worker({ server: "http://127.0.0.1:7233", workflows: [Noop, Noop] })).not.toThrow();
  });

  it("refuses a closeTimeoutMs that is not 0 or more milliseconds", () => {
    for (const closeTimeoutMs of [-5, Number.NaN, Number.POSITIVE_INFINITY, "5s" as unknown as number]) {
      expect(() => new Worker({ server: "http://127.0.0.1:7233", workflows: [Noop], closeTimeoutMs })).toThrow(
        "closeTimeoutMs must be a number of milliseconds, 0 or more",
      );
    }
    expect(() => new Worker({ server: "http://127.0.0.1:7233", workflows: [Noop], closeTimeoutMs: 0 })).not.toThrow();
  });

  it("refuses a token no HTTP header can carry, in the Worker and the OrbitClient, before any request", () => {
    for (const token of ["abc\ndef", "tab\there", "caf\u00e9 ok? no: \u20ac", 7]) {
      expect(() => new Worker({ server: "http://127.0.0.1:7233", workflows: [Noop], token: token as string })).toThrow(
        /the Worker's `token` option must be text an HTTP header can carry/,
      );
      expect(() => new OrbitClient({ server: "http://127.0.0.1:7233", token: token as string })).toThrow(
        /the OrbitClient's `token` option must be text an HTTP header can carry/,
      );
    }
    expect(() => new OrbitClient({ server: "http://127.0.0.1:7233", token: "orbit_abc-123.XYZ~+/=" })).not.toThrow();
    expect(() => new OrbitClient({ server: "http://127.0.0.1:7233", token: null })).not.toThrow();
  });

  it("refuses a workerId the server would refuse on every request", () => {
    for (const workerId of ["", "w".repeat(201), "a\u0000b", "lone \ud800", 42]) {
      expect(
        () => new Worker({ server: "http://127.0.0.1:7233", workflows: [Noop], workerId: workerId as string }),
      ).toThrow("workerId must be 1 to 200 characters of text (no NUL, no lone surrogate)");
    }
    expect(
      () => new Worker({ server: "http://127.0.0.1:7233", workflows: [Noop], workerId: "w".repeat(200) }),
    ).not.toThrow();
  });

  it("close() after run() was refused resolves: the refusal was run()'s to report", async () => {
    const server = await startTestServer();
    try {
      const bad = defineWorkflow({
        name: "BadSchema",
        version: "1.0.0",
        input: { type: "objekt" },
        run: async () => 1,
      });
      const logger = { info: () => {}, warn: () => {}, error: () => {} };
      const w = new Worker({ server: server.server.url, workflows: [bad], logger });
      await expect(w.run()).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      await expect(w.close()).resolves.toBeUndefined();
    } finally {
      await server.stop();
    }
  });
});
