/**
 * `orbit schedule list` without `--wide` says `(NO WORKER)` after the last execution while it waits
 * for a worker that never comes (src/cli/schedule-crud.ts reads the workers for the default list
 * too): a real server and the CLI. Only `--wide` said it, and the default list read healthy (a tester).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { SEED_SCHEDULE, startTestServer, type TestServer } from "../api/helpers.js";
import { orbit } from "../e2e/harness.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  await t.registerOrders();
  await t.ok("POST", "/v1/schedules", { ...SEED_SCHEDULE, schedule_id: "lonely", paused: true });
});
afterAll(async () => {
  await t.stop();
});

const lastExecution = async (): Promise<string | undefined> => {
  const r = await orbit(["schedule", "list"], { ORBIT_SERVER: t.server.url });
  expect(r.code).toBe(0);
  return /^lonely +\S+ +every 10s +paused +- +(.*)$/m.exec(r.stdout)?.[1];
};

it("says NO WORKER in the default list while the last run waits for a worker, and not once one polls", async () => {
  expect(await lastExecution()).toBe("-");
  const run = (await t.ok("POST", "/v1/schedules/lonely/trigger", {})).execution_id as string;
  expect(await lastExecution()).toBe(`${run} (NO WORKER)`);
  await t.ok("POST", "/v1/worker/poll", {
    worker_id: "w-1",
    workflows: [{ name: "OrderProcessing", version: "1.0.0", max_attempts: 1, backoff_ms: 0 }],
    wait_ms: 0,
  });
  expect(await lastExecution()).toBe(run);
});
