/**
 * `worker.registered()` (docs/workflows.md § Worker): code that runs a worker and then creates a
 * schedule of its workflow in the same process waits for it, instead of racing the registration
 * ("workflow … is not registered", a newcomer's first try). It rejects when the worker closes
 * before it registered, so nothing waits forever.
 */
import { afterEach, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { defineWorkflow, OrbitClient, Worker } from "../../src/index.js";
import { startTestServer, type TestServer } from "../api/helpers.js";
import { closedPort } from "../helpers/ports.js";

const Report = defineWorkflow({ name: "RegisteredFirst", version: "1.2.0", run: async () => ({ ok: true }) });
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

let server: TestServer | null = null;
let worker: Worker | null = null;
afterEach(async () => {
  await worker?.close();
  await server?.stop();
  worker = null;
  server = null;
});

it("resolves once the workflows are registered, so a schedule of them can be created at once", async () => {
  server = await startTestServer();
  const client = new OrbitClient({ server: server.server.url });
  worker = new Worker({ server: server.server.url, workflows: [Report], logger: quiet });
  const running = worker.run();
  await worker.registered();
  expect((await client.getWorkflow("RegisteredFirst")).versions.map((v) => v.version)).toEqual(["1.2.0"]);
  const created = await client.createSchedule({ schedule_id: "r", workflow: "RegisteredFirst", interval: "1h" });
  expect(created.workflow).toBe("RegisteredFirst");
  await worker.close();
  await running;
  await expect(worker.registered()).resolves.toBeUndefined();
});

it("takes the API's base (…/v1) as the server, as the CLI does, and runs there (it sent /v1/v1/…)", async () => {
  server = await startTestServer();
  worker = new Worker({ server: `${server.server.url}/v1/`, workflows: [Report], logger: quiet });
  const running = worker.run();
  await worker.registered();
  const client = new OrbitClient({ server: `${server.server.url}/v1` });
  const started = await client.startExecution({ workflow: "RegisteredFirst", execution_id: "via-v1", input: {} });
  expect(started.value.execution_id).toBe("via-v1");
  const ended = await server.until(
    () => client.getExecution("via-v1"),
    (e) => e.status !== "RUNNING",
    "the execution to end",
  );
  expect(ended.status).toBe("COMPLETED");
  await worker.close();
  await running;
});

it("rejects when the worker closes before it registered: before run(), or while the server is away", async () => {
  const port = await closedPort();
  const never = new Worker({ server: `http://127.0.0.1:${port}`, workflows: [Report], logger: quiet });
  await never.close();
  await expect(never.registered()).rejects.toThrow("the worker closed before it registered its workflows");

  const clock = new ManualClock(Date.parse("2026-12-06T12:00:00Z"));
  worker = new Worker({ server: `http://127.0.0.1:${port}`, workflows: [Report], logger: quiet, clock });
  const running = worker.run();
  const registered = worker.registered();
  while (clock.pendingSleeps === 0) await new Promise((resolve) => setImmediate(resolve)); // retrying
  await worker.close();
  await running;
  await expect(registered).rejects.toThrow("the worker closed before it registered its workflows");
});
