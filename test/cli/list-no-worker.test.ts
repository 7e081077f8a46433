/**
 * `orbit schedule list --wide` says NO WORKER only while the schedule's last execution still waits
 * (src/cli/schedule-crud.ts runningLast): a real server and the CLI. The last execution can have
 * ended though the last outcome names another run that ended after it (`allow`, `cancel_previous`,
 * a backfill); the list said NO WORKER then and hid the schedule's failures (a tester).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { SEED_SCHEDULE, startTestServer, type TestServer } from "../api/helpers.js";
import { orbit } from "../e2e/harness.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  await t.registerOrders();
  await t.ok("POST", "/v1/schedules", { ...SEED_SCHEDULE, schedule_id: "allow", overlap: "allow", paused: true });
});
afterAll(async () => {
  await t.stop();
});

const outcome = async (): Promise<string | undefined> => {
  const r = await orbit(["schedule", "list", "--wide"], { ORBIT_SERVER: t.server.url });
  expect(r.code).toBe(0);
  return /^allow +\S+ +every 10s +paused +(NO WORKER|\S+(?: x\d+)?) /m.exec(r.stdout)?.[1];
};

it("says NO WORKER while the last run waits, and the last outcome once every run ended", async () => {
  const first = (await t.ok("POST", "/v1/schedules/allow/trigger", {})).execution_id as string;
  t.clock.advance(1000);
  const second = (await t.ok("POST", "/v1/schedules/allow/trigger", {})).execution_id as string;
  expect((await t.ok("GET", "/v1/schedules/allow")).last_execution_id).toBe(second);
  // No worker polls OrderProcessing and both runs wait.
  expect(await outcome()).toBe("NO WORKER");
  // The last run ends first, the earlier one after it: the last outcome names the earlier one.
  await t.ok("POST", `/v1/executions/${encodeURIComponent(second)}/cancel`, { reason: "not needed" });
  t.clock.advance(1000);
  await t.ok("POST", `/v1/executions/${encodeURIComponent(first)}/cancel`, { reason: "not needed" });
  const s = await t.ok("GET", "/v1/schedules/allow");
  expect([s.last_execution_id, s.last_outcome.execution_id]).toEqual([second, first]);
  expect(await outcome()).toBe("CANCELLED");
});

it("says NO WORKER for a run left on a version the live workers no longer poll", async () => {
  // A run started on 1.0.0; the workers moved to 2.0.0, which the schedule's starts now take. The
  // run waits for a 1.0.0 worker that will not come, and the list called the schedule healthy.
  await t.ok("POST", "/v1/schedules", { ...SEED_SCHEDULE, schedule_id: "moved", overlap: "skip", paused: true });
  const left = (await t.ok("POST", "/v1/schedules/moved/trigger", {})).execution_id as string;
  await t.ok("POST", "/v1/workflows", { name: "OrderProcessing", version: "2.0.0" });
  const poll = (version: string) => ({
    worker_id: "w-2",
    workflows: [{ name: "OrderProcessing", version, max_attempts: 1, backoff_ms: 0 }],
    wait_ms: 0,
  });
  expect((await t.ok("POST", "/v1/worker/poll", poll("2.0.0"))).tasks).toEqual([]);
  const moved = async () => {
    const r = await orbit(["schedule", "list", "--wide"], { ORBIT_SERVER: t.server.url });
    expect(r.code).toBe(0);
    return /^moved +\S+ +every 10s +paused +(NO WORKER|-) /m.exec(r.stdout)?.[1];
  };
  expect((await t.ok("GET", `/v1/executions/${encodeURIComponent(left)}`)).version).toBe("1.0.0");
  expect(await moved()).toBe("NO WORKER");
  // A worker of 1.0.0 comes back and polls: the run is simply running.
  await t.ok("POST", "/v1/worker/poll", { ...poll("1.0.0"), worker_id: "w-1" });
  expect(await moved()).toBe("-");
});
