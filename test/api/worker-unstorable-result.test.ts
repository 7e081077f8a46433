/**
 * A worker speaking the protocol over plain HTTP (docs/workflows.md § Protocol) that completes a task
 * with a result Orbit cannot store — a NUL or a lone surrogate in a string — fails the execution
 * with the reason, as a result too large or too deep does (docs/outcomes.md § Results that cannot
 * be stored). The body check refused it as any body before: the execution stayed RUNNING, and each
 * lease ran out into the same run again.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  await t.ok("POST", "/v1/workflows", { name: "Raw", version: "1.0.0" });
});
afterAll(() => t.stop());

const worker = { worker_id: "raw-worker" };

for (const [what, text, message] of [
  ["a NUL", '"a\\u0000b"', "a string of the result contains a NUL character (\\u0000), which Orbit does not store"],
  [
    "a lone surrogate",
    '{"k":"\\ud800"}',
    "a string of the result contains a lone UTF-16 surrogate (e.g. \\ud800 without its pair), which is not valid Unicode",
  ],
] as const) {
  it(`fails the execution whose result holds ${what}, and stores none of it`, async () => {
    const id = `raw-${what.replaceAll(" ", "-")}`;
    await t.ok("POST", "/v1/executions", { execution_id: id, workflow: "Raw", input: {} });
    const { tasks } = await t.ok("POST", "/v1/worker/poll", {
      ...worker,
      workflows: [{ name: "Raw", version: "1.0.0", max_attempts: 3, backoff_ms: 0 }],
      max_tasks: 1,
      wait_ms: 0,
    });
    const r = await t.call(
      "POST",
      `/v1/worker/tasks/${tasks[0].task_id}/complete`,
      `{"worker_id":"raw-worker","result":${text}}`,
    );
    expect({ status: r.status, body: r.body }).toEqual({
      status: 400,
      body: { code: "INVALID_ARGUMENT", message: `${message}; the execution failed with this error` },
    });
    const e = await t.ok("GET", `/v1/executions/${id}`);
    expect({ status: e.status, error: e.error, result: e.result }).toEqual({
      status: "FAILED",
      error: { message, type: "ResultRefused" },
      result: null,
    });
  });
}

it("still refuses a NUL anywhere else in a request, and changes nothing", async () => {
  const r = await t.call("POST", "/v1/executions", '{"execution_id":"x\\u0000","workflow":"Raw","input":{}}');
  expect(r.status).toBe(400);
  expect(
    (await t.call("GET", "/v1/executions?workflow=Raw")).body.executions.map(
      (e: { execution_id: string }) => e.execution_id,
    ),
  ).not.toContain("x\u0000");
});
