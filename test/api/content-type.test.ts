/**
 * The JSON content-type rule of docs/api.md § JSON in, JSON out, case by case: what a write must
 * say, which media types are refused, what an empty or non-object body means, and the types of the
 * answers. Raw node:http requests, so the headers are exactly the ones listed (fetch would add a
 * text/plain type to a string body).
 */
import { request } from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ORDER_INPUT, startTestServer, type TestServer } from "./helpers.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  await t.registerOrders();
  await t.call("POST", "/v1/schedules", {
    schedule_id: "s",
    workflow: "OrderProcessing",
    interval: "1h",
    input: ORDER_INPUT,
  });
});
afterAll(() => t.stop());

function raw(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; type: string | undefined; body: string }> {
  const url = new URL(t.server.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      let text = "";
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, type: res.headers["content-type"], body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const JSON_ANSWER = "application/json; charset=utf-8";
const NOT_JSON = "the request body must be JSON (content-type: application/json)";
const PAUSE = "/v1/schedules/s/pause";
const note = async () => (await t.call("GET", "/v1/schedules/s")).body.pause_note ?? null;

it("refuses a write without a content type from a browser or with a body, and changes nothing", async () => {
  const browser = `requests from a browser must send content-type: application/json (or an X-Orbit-Client header), even with no body; this refuses cross-site requests`;
  for (const [method, path] of [
    ["POST", PAUSE],
    ["DELETE", "/v1/schedules/s"],
    ["PATCH", "/v1/schedules/s"],
    ["POST", "/v1/worker/poll"],
  ] as const) {
    for (const [headers, body, message] of [
      // What a browser sends with a body-less fetch: Sec-Fetch-Site (and an Origin, refused on
      // its own by an open loopback server: test/api/cross-site.test.ts).
      [{ "sec-fetch-site": "cross-site" }, undefined, `${method} ${browser}`],
      [{ "sec-fetch-site": "same-site" }, undefined, `${method} ${browser}`],
      [{ "content-length": "12" }, '{"note":"x"}', NOT_JSON],
      [{ "transfer-encoding": "chunked" }, '{"note":"x"}', NOT_JSON],
    ] as const) {
      const r = await raw(method, path, { ...headers }, body);
      expect({ method, path, headers, status: r.status, type: r.type }).toEqual({
        method,
        path,
        headers,
        status: 400,
        type: JSON_ANSWER,
      });
      expect(JSON.parse(r.body)).toEqual({ code: "INVALID_ARGUMENT", message });
    }
  }
  expect((await t.call("GET", "/v1/schedules/s")).body.paused).toBe(false);
});

it("takes a write with no body and no content type from a client that is not a browser (curl -X POST)", async () => {
  expect((await raw("POST", PAUSE, {})).status).toBe(200);
  expect((await t.call("GET", "/v1/schedules/s")).body.paused).toBe(true);
  expect(
    (await raw("POST", "/v1/schedules/s/resume", { "content-length": "0", "sec-fetch-site": "none" })).status,
  ).toBe(200);
  expect((await t.call("GET", "/v1/schedules/s")).body.paused).toBe(false);
});

it("refuses every media type but application/json, vendor +json types included", async () => {
  for (const type of [
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/vnd.api+json",
    "application/jsonx",
  ]) {
    for (const extra of [{}, { "x-orbit-client": "1" }] as Record<string, string>[]) {
      const r = await raw("POST", PAUSE, { "content-type": type, ...extra }, '{"note":"x"}');
      expect({ type, status: r.status }).toEqual({ type, status: 400 });
      expect(JSON.parse(r.body)).toEqual({ code: "INVALID_ARGUMENT", message: NOT_JSON });
    }
  }
  expect(await note()).toBe(null);
});

it("accepts application/json in any case and with parameters, read as UTF-8; another charset is refused", async () => {
  const latin1 = await raw("POST", PAUSE, { "content-type": "application/json; charset=latin1" }, '{"note":"x"}');
  expect([latin1.status, JSON.parse(latin1.body).message]).toEqual([
    400,
    'the request body must be UTF-8 (content-type: application/json; charset=utf-8), not charset "latin1"',
  ]);
  expect(await note()).toBe(null);
  for (const type of [
    "application/json",
    "Application/JSON",
    "application/json; charset=utf-8",
    'application/json; Charset="UTF-8"',
  ]) {
    const r = await raw("POST", PAUSE, { "content-type": type }, JSON.stringify({ note: `é ${type}` }));
    expect({ type, status: r.status, answer: r.type }).toEqual({ type, status: 200, answer: JSON_ANSWER });
    expect(await note()).toBe(`é ${type}`);
    await raw("POST", "/v1/schedules/s/resume", { "content-type": "application/json" });
  }
});

it("an empty or blank body is {}; X-Orbit-Client stands in for the type only without a body", async () => {
  expect((await raw("POST", PAUSE, { "content-type": "application/json" }, "")).status).toBe(200);
  expect((await raw("POST", "/v1/schedules/s/resume", { "content-type": "application/json" }, " \n ")).status).toBe(
    200,
  );
  expect((await raw("POST", PAUSE, { "x-orbit-client": "cli" })).status).toBe(200);
  const withBody = await raw(
    "POST",
    "/v1/schedules/s/resume",
    { "x-orbit-client": "cli", "content-length": "2" },
    "{}",
  );
  expect(withBody.status).toBe(400);
  expect(JSON.parse(withBody.body)).toEqual({ code: "INVALID_ARGUMENT", message: NOT_JSON });
  expect((await t.call("GET", "/v1/schedules/s")).body.paused).toBe(true);
});

it("a body that is JSON but not an object is refused", async () => {
  for (const body of ["null", "[]", "1", '"x"']) {
    const r = await raw("POST", "/v1/schedules/s/resume", { "content-type": "application/json" }, body);
    expect({ body, status: r.status }).toEqual({ body, status: 400 });
    expect(JSON.parse(r.body)).toEqual({ code: "INVALID_ARGUMENT", message: "the request body must be a JSON object" });
  }
  expect((await t.call("GET", "/v1/schedules/s")).body.paused).toBe(true);
});

it("reads need no content type; answers are JSON except 204, /metrics and the UI", async () => {
  const read = await raw("GET", "/v1/schedules/s", { "content-type": "text/plain", accept: "text/html" });
  expect([read.status, read.type]).toEqual([200, JSON_ANSWER]);
  const missing = await raw("POST", "/v1/nowhere", { "content-type": "application/json" }, "{}");
  expect([missing.status, missing.type]).toEqual([404, JSON_ANSWER]);
  expect(Object.keys(JSON.parse(missing.body))).toEqual(["code", "message"]);
  const metrics = await raw("GET", "/metrics", {});
  expect([metrics.status, metrics.type]).toEqual([200, "text/plain; version=0.0.4; charset=utf-8"]);
  const ui = await raw("GET", "/", {});
  expect(ui.type).toMatch(/^text\/html/);
  const deleted = await raw("DELETE", "/v1/schedules/s", { "content-type": "application/json" });
  expect([deleted.status, deleted.type, deleted.body]).toEqual([204, undefined, ""]);
});
