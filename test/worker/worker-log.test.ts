/**
 * What a worker says about itself (docs/workflows.md § Worker): one line when it starts polling
 * (the server, its id, its workflows), one when polls start failing and then every 30 s while they
 * do (a line a second filled the log through an outage: 82 in 75 s), one when they succeed again,
 * and one when it closes. Before, it said nothing on start or close and nothing when it recovered.
 * The server sits behind a proxy that answers 503 while "down"; time is the worker's manual clock.
 */
import { createServer, request, type Server } from "node:http";
import { afterEach, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { defineWorkflow, Worker } from "../../src/index.js";
import { startTestServer, type TestServer } from "../api/helpers.js";
import { capturing, turn } from "./hung-code.js";

const Noop = defineWorkflow({ name: "Logged", version: "1.0.0", run: async () => ({ ok: true }) });

/** An HTTP proxy to `target` that answers 503 while `down` (or only to the paths it names). */
async function proxyTo(
  target: string,
): Promise<{ url: string; down: boolean | ((path: string) => boolean); server: Server }> {
  const to = new URL(target);
  const state = {
    url: "",
    down: false as boolean | ((path: string) => boolean),
    server: null as unknown as Server,
  };
  state.server = createServer((req, res) => {
    if (state.down === true || (typeof state.down === "function" && state.down(req.url ?? ""))) {
      res.writeHead(503, { "content-type": "application/json" });
      res.end('{"code":"UNAVAILABLE","message":"down for the test"}');
      return;
    }
    const out = request(
      { host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on("error", () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => state.server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(state.server.address() as { port: number }).port}`;
  return state;
}

let server: TestServer | null = null;
let proxy: Awaited<ReturnType<typeof proxyTo>> | null = null;
afterEach(async () => {
  await server?.stop();
  await new Promise((resolve) => (proxy ? proxy.server.close(resolve) : resolve(undefined)));
  server = null;
  proxy = null;
});

it("says when it starts polling, when polls fail (once, then every 30 s), when they work again, and when it closes", async () => {
  server = await startTestServer();
  proxy = await proxyTo(server.server.url);
  const { lines, logger } = capturing();
  const clock = new ManualClock(Date.parse("2026-11-15T18:51:00Z"));
  const worker = new Worker({ server: proxy.url, workflows: [Noop], clock, logger, workerId: "w-logged" });
  const running = worker.run();
  while (!lines.some(([, m]) => m === "worker polling")) await turn();
  expect(lines.find(([, m]) => m === "worker polling")).toEqual([
    "info",
    "worker polling",
    { server: proxy.url, worker_id: "w-logged", workflows: ["Logged@1.0.0"], concurrency: 100 },
  ]);

  // Down: the worker's long poll comes back refused, then it retries each second.
  proxy.down = true;
  const warned = () => lines.filter(([level]) => level === "warn");
  const downAt = clock.now();
  while (warned().length < 3 && clock.now() - downAt < 300_000) {
    while (clock.pendingSleeps === 0) await turn();
    clock.advance(1000);
  }
  const [first, second, third] = warned();
  expect(first?.[1]).toBe("polling failed; retrying every 1 s");
  expect([second?.[1], third?.[1]]).toEqual([
    "polling still fails; retrying every 1 s",
    "polling still fails; retrying every 1 s",
  ]);
  // Not a line a second: 30 s of the worker's clock apart.
  const [at2, at3] = [Number(second?.[2]?.failing_for_s), Number(third?.[2]?.failing_for_s)];
  expect(at2).toBeGreaterThanOrEqual(30);
  expect(at3 - at2).toBeGreaterThanOrEqual(30);

  proxy.down = false;
  // No task to bring back: the poll after a failure answers at once (wait_ms 0), so "polling again"
  // is said as the server is back, not when a long poll on the server's clock ends 20 s later.
  while (!lines.some(([, m]) => m === "polling again")) {
    if (clock.pendingSleeps > 0) clock.advance(1000);
    await turn();
  }
  const again = lines.find(([, m]) => m === "polling again")?.[2];
  expect(Number(again?.failed_for_s)).toBeGreaterThanOrEqual(at3);
  expect(Number(again?.failed_polls)).toBeGreaterThanOrEqual(3);

  await worker.close();
  await running;
  expect(lines.at(-1)).toEqual(["info", "worker closed", { worker_id: "w-logged" }]);
});

it("says heartbeats failed once, then every 30 s, and when they work again", async () => {
  server = await startTestServer();
  proxy = await proxyTo(server.server.url);
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const Held = defineWorkflow({
    name: "Held",
    version: "1.0.0",
    run: async () => {
      await held;
      return { ok: true };
    },
  });
  const { lines, logger } = capturing();
  const clock = new ManualClock(Date.parse("2026-11-15T18:51:00Z"));
  const worker = new Worker({ server: proxy.url, workflows: [Held], clock, logger });
  const running = worker.run();
  while (!lines.some(([, m]) => m === "worker polling")) await turn();
  const { execution_id } = await server.ok("POST", "/v1/executions", { workflow: "Held", input: {} });
  await server.until(
    () => server!.ok("GET", `/v1/executions/${execution_id}`),
    (e) => e.status === "RUNNING" && e.waiting === undefined,
    "the run to be leased",
  );

  proxy.down = true;
  const beats = () => lines.filter(([, m]) => m.startsWith("heartbeat"));
  const downAt = clock.now();
  while (beats().length < 3 && clock.now() - downAt < 300_000) {
    while (clock.pendingSleeps === 0) await turn();
    clock.advance(1000);
    await turn();
  }
  // A heartbeat every 5 s failed; said once, then 30 s of the worker's clock apart (not every 5 s).
  expect(beats().map(([level, m]) => [level, m])).toEqual([
    ["warn", "heartbeat failed"],
    ["warn", "heartbeats still fail; leases end if the server does not hear one in time"],
    ["warn", "heartbeats still fail; leases end if the server does not hear one in time"],
  ]);
  const [, second, third] = beats().map(([, , f]) => Number(f?.failing_for_s));
  expect(second).toBeGreaterThanOrEqual(30);
  expect((third as number) - (second as number)).toBeGreaterThanOrEqual(30);
  proxy.down = false;
  while (!lines.some(([, m]) => m === "heartbeats again")) {
    if (clock.pendingSleeps > 0) clock.advance(1000);
    await turn();
  }
  release();
  await worker.close();
  await running;
});

it("starts a new heartbeat spell after one that ended with its last task, not 'still fail' with the old one's length", async () => {
  server = await startTestServer();
  proxy = await proxyTo(server.server.url);
  const releases: (() => void)[] = [];
  const Held = defineWorkflow({
    name: "HeldTwice",
    version: "1.0.0",
    run: () => new Promise<{ ok: boolean }>((resolve) => releases.push(() => resolve({ ok: true }))),
  });
  const { lines, logger } = capturing();
  const clock = new ManualClock(Date.parse("2026-11-15T18:51:00Z"));
  const worker = new Worker({ server: proxy.url, workflows: [Held], clock, logger });
  const running = worker.run();
  while (!lines.some(([, m]) => m === "worker polling")) await turn();
  const beats = () => lines.filter(([, m]) => m.startsWith("heartbeat")).map(([, m]) => m);
  const leased = async () => {
    const { execution_id } = await server!.ok("POST", "/v1/executions", { workflow: "HeldTwice", input: {} });
    await server!.until(
      () => server!.ok("GET", `/v1/executions/${execution_id}`),
      (e) => e.status === "RUNNING" && e.waiting === undefined,
      "the run to be leased",
    );
    return execution_id as string;
  };
  /** Heartbeats refused until `n` lines about them were said. */
  const failBeats = async (n: number) => {
    proxy!.down = (path) => path.startsWith("/v1/worker/heartbeat");
    while (beats().length < n) {
      while (clock.pendingSleeps === 0) await turn();
      clock.advance(1000);
      await turn();
    }
  };

  const first = await leased();
  await failBeats(1);
  // The run ends while heartbeats fail; its complete goes through. Nothing is left to heartbeat.
  releases.shift()?.();
  await server.until(
    () => server!.ok("GET", `/v1/executions/${first}`),
    (e) => e.status === "COMPLETED",
    "the first run to complete",
  );
  // A minute later, another run and another outage of the heartbeats only.
  proxy.down = false;
  clock.advance(60_000);
  await leased();
  await failBeats(2);
  expect(beats()).toEqual(["heartbeat failed", "heartbeat failed"]);
  proxy.down = false;
  releases.shift()?.();
  await worker.close();
  await running;
});

it("resends many step reports through an outage without Node's listener-leak warning", async () => {
  server = await startTestServer();
  proxy = await proxyTo(server.server.url);
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
  process.on("warning", onWarning);
  try {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const Many = defineWorkflow({
      name: "Many",
      version: "1.0.0",
      // Each run journals a step when released: fifteen step reports wait to be resent at once.
      run: async (ctx) => {
        await ctx.step("after-release", async () => {
          await held;
          return 1;
        });
        return { ok: true };
      },
    });
    const { lines, logger } = capturing();
    const clock = new ManualClock(Date.parse("2026-11-15T18:51:00Z"));
    const worker = new Worker({ server: proxy.url, workflows: [Many], clock, logger });
    const running = worker.run();
    while (!lines.some(([, m]) => m === "worker polling")) await turn();
    const ids: string[] = [];
    for (let i = 0; i < 15; i++)
      ids.push((await server.ok("POST", "/v1/executions", { workflow: "Many", input: {} })).execution_id);
    await server.until(
      () => server!.ok("GET", "/v1/executions?workflow=Many&limit=20"),
      (b) => b.executions.every((e: { waiting?: unknown }) => e.waiting === undefined) && b.executions.length === 15,
      "fifteen runs leased",
    );
    for (const id of ids) {
      await server.until(
        () => server!.ok("GET", `/v1/executions/${encodeURIComponent(id)}`),
        (e) => e.waiting === undefined,
        `${id} leased`,
      );
    }
    // The server goes away; every run ends and its report waits to be resent.
    proxy.down = true;
    release();
    for (let i = 0; i < 20; i++) {
      while (clock.pendingSleeps === 0) await turn();
      clock.advance(1000);
      await turn();
    }
    proxy.down = false;
    for (const id of ids) {
      await server.until(
        async () => {
          if (clock.pendingSleeps > 0) clock.advance(1000);
          return server!.ok("GET", `/v1/executions/${encodeURIComponent(id)}`);
        },
        (e) => e.status === "COMPLETED",
        `${id} completed`,
      );
    }
    await worker.close();
    await running;
    expect(warnings.filter((w) => w.includes("MaxListeners"))).toEqual([]);
  } finally {
    process.off("warning", onWarning);
  }
});
