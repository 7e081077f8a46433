/**
 * A worker registers its workflows once, at its start. A server whose database is replaced under
 * the running worker (a new data dir, a restore of an older backup) no longer holds them: the
 * worker was listed live and polled for versions nobody could start, and `orbit start` said the
 * workflow was not registered (a tester). The poll's answer names the versions the database lacks
 * (`unregistered`), and the worker registers them again (docs/workflows.md § Protocol).
 */
import { afterEach, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { defineWorkflow, Worker } from "../../src/index.js";
import { startTestServer, type TestServer } from "../api/helpers.js";
import { secondsUntil } from "./hung-code.js";

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

it("registers its workflows again on a server whose database lost them, and runs their executions", async () => {
  const first = await startTestServer();
  servers.push(first);
  const port = Number(new URL(first.server.url).port);
  const Hello = defineWorkflow({ name: "Hello", version: "1.0.0", run: async () => ({ hi: true }) });
  const clock = new ManualClock(Date.parse("2026-12-06T16:00:00Z"));
  const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
  const worker = new Worker({ server: first.server.url, workflows: [Hello], clock, logger: quiet, workerId: "w-1" });
  const running = worker.run();
  await worker.registered();
  // The answer names nothing while the database holds every offered version.
  const poll = (s: TestServer) =>
    s.ok("POST", "/v1/worker/poll", {
      worker_id: "probe",
      workflows: [
        { name: "Hello", version: "1.0.0", max_attempts: 1, backoff_ms: 0 },
        { name: "Nobody", version: "2.0.0", max_attempts: 1, backoff_ms: 0 },
      ],
      max_tasks: 1,
      wait_ms: 0,
    });
  expect(await poll(first)).toEqual({ tasks: [], unregistered: [{ name: "Nobody", version: "2.0.0" }] });

  // The same address, a new empty database: the worker's polls reach a server that lacks Hello.
  await first.stop();
  servers.length = 0;
  const second = await startTestServer({ port });
  servers.push(second);
  const versions = await secondsUntil(
    clock,
    // The first request may take a kept-alive socket of the stopped server on this port ("other
    // side closed"): it is asked again, on a new one.
    async () =>
      (
        (await second.call("GET", "/v1/workflows").catch(() => ({ body: { workflows: [] } }))).body as {
          workflows: { name: string }[];
        }
      ).workflows,
    (w) => w.some((x) => x.name === "Hello"),
    60,
  );
  expect(versions.map((w) => w.name)).toEqual(["Hello"]);
  await second.ok("POST", "/v1/executions", { execution_id: "after", workflow: "Hello", input: {} });
  const done = await secondsUntil(
    clock,
    async () => (await second.ok("GET", "/v1/executions/after")).status as string,
    (s) => s === "COMPLETED",
    60,
  );
  expect(done).toBe("COMPLETED");
  await worker.close();
  await running;
});
