/**
 * The OpenAPI document's `requestBody.required` says what the server does (docs/api.md § OpenAPI):
 * every route is sent no body, and one whose body the document requires must refuse it (400),
 * one whose body is optional must not refuse it for that. Every body was `required: false`, the
 * create, backfill, batch and worker routes' too, which refuse a missing body.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  await t.ok("POST", "/v1/workflows", { name: "W", version: "1.0.0" });
  await t.ok("POST", "/v1/schedules", { schedule_id: "s", workflow: "W", cron: "0 3 * * *" });
});
afterAll(() => t?.stop());

/** Path parameters that name things that exist (the optional bodies' routes then answer 2xx). */
const PARAMS: Record<string, string> = { id: "s", name: "W", version: "1.0.0", task_id: "no-such-task" };

type Operation = { requestBody?: { required: boolean } };

it("requires a body exactly where a route refuses a request without one", async () => {
  const doc = await t.ok("GET", "/v1/openapi.json");
  const required: string[] = [];
  const seen: { route: string; required: boolean; status: number; message: string | undefined }[] = [];
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, Operation>>)) {
    for (const [method, op] of Object.entries(methods)) {
      if (op.requestBody === undefined) continue;
      const route = `${method.toUpperCase()} ${path}`;
      if (op.requestBody.required) required.push(route);
      const url = path.replace(/\{(\w+)\}/g, (_m, p: string) => PARAMS[p] ?? "x");
      const r = await t.call(method.toUpperCase(), url);
      seen.push({ route, required: op.requestBody.required, status: r.status, message: r.body?.message });
    }
  }
  for (const s of seen) {
    if (s.required) expect(s).toEqual({ ...s, status: 400 });
    else expect([s.route, s.status === 400, s.message]).toEqual([s.route, false, s.message]);
  }
  expect(required).toEqual(
    expect.arrayContaining([
      "POST /v1/schedules",
      "POST /v1/schedules/batch",
      "POST /v1/schedules/{id}/backfill",
      "POST /v1/executions",
      "POST /v1/workflows",
      "POST /v1/worker/poll",
      "POST /v1/worker/tasks/{task_id}/complete",
    ]),
  );
  for (const optional of ["pause", "resume", "trigger"]) {
    expect(required).not.toContain(`POST /v1/schedules/{id}/${optional}`);
  }
  expect(required).not.toContain("POST /v1/executions/{id}/cancel");
  expect(required).not.toContain("PATCH /v1/schedules/{id}");
});
