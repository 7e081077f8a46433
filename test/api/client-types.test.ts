/**
 * The client's schedule bodies are typed (src/client/types.ts): a misspelt setting, policy or
 * webhook event is a compile error (before, `createSchedule` took any `Record<string, JsonValue>`,
 * so `overlap: "skipp"` compiled and failed only at run time). Checked by `npm run typecheck`: each
 * `@ts-expect-error` line fails it when the types accept that body again. At run time, the forms
 * the types allow are the ones the server takes.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { OrbitClient, type ScheduleCreateBody, type ScheduleUpdateBody } from "../../src/index.js";
import { startTestServer, type TestServer } from "./helpers.js";

let t: TestServer;
let client: OrbitClient;
beforeAll(async () => {
  t = await startTestServer();
  client = new OrbitClient({ server: t.server.url });
  await client.registerWorkflow({ name: "W", version: "1.0.0" });
});
afterAll(() => t.stop());

/** Never called: the compiler checks these bodies. */
function refusedByTheCompiler(c: OrbitClient): void {
  // @ts-expect-error a misspelt policy
  void c.createSchedule({ workflow: "W", interval: "1m", overlap: "skipp" });
  // @ts-expect-error a misspelt setting
  void c.createSchedule({ workflow: "W", interval: "1m", misfire_polcy: "x" });
  // @ts-expect-error the workflow is required
  void c.createSchedule({ schedule_id: "s", interval: "1m" });
  // @ts-expect-error the id is required (the server refuses a create without one)
  void c.createSchedule({ workflow: "W", interval: "1m" });
  // @ts-expect-error the id cannot change
  void c.updateSchedule("s", { schedule_id: "t" });
  // @ts-expect-error a misspelt webhook event
  void c.updateSchedule("s", { notify: { url: "http://127.0.0.1:1/hook", events: ["failed"] } });
  // @ts-expect-error max_runs is a number
  void c.createSchedules([{ schedule_id: "s", workflow: "W", interval: "1m", max_runs: "3" }]);
}
void refusedByTheCompiler;

it("takes every form the types allow: one webhook or a list, URLs or objects, null to unset", async () => {
  const body: ScheduleCreateBody = {
    schedule_id: "typed",
    workflow: "W",
    cron: "0 * * * *",
    timezone: "Europe/Berlin",
    overlap: "buffer_one",
    catchup: "catch_up",
    max_catch_up: 3,
    notify: ["http://127.0.0.1:1/a", { url: "http://127.0.0.1:1/b", events: ["failure", "recovery"] }],
    labels: { team: "ops" },
    input: { n: 1 },
    max_runs: 10,
  };
  const created = await client.createSchedule(body);
  expect(created).toMatchObject({ schedule_id: "typed", overlap: "buffer_one", max_catch_up: 3, max_runs: 10 });
  const patch: ScheduleUpdateBody = { notify: "http://127.0.0.1:1/c", max_runs: null, jitter: "5s", paused: true };
  const updated = await client.updateSchedule("typed", patch);
  expect(updated).toMatchObject({ notify: [{ url: "http://127.0.0.1:1/c" }], jitter: "5s", paused: true });
  expect(updated.max_runs ?? null).toBeNull();
});
