/**
 * Cross-site requests and DNS rebinding against an open server (docs/security.md § Browsers):
 * writes must say JSON, Host must be loopback and Origin the same host; the UI's pages carry
 * security headers. Raw node:http requests, so Host and Origin are exactly what a browser sends.
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
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const url = new URL(t.server.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      let text = "";
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const paused = async () => (await t.call("GET", "/v1/schedules/s")).body.paused;

it("refuses a write without content-type: application/json (a form post, a body-less cross-site fetch)", async () => {
  for (const [path, headers, body] of [
    ["/v1/schedules/s/pause", { "sec-fetch-site": "cross-site" }, undefined],
    ["/v1/schedules/s/pause", { "content-type": "text/plain" }, "{}"],
    ["/v1/schedules/s/pause", { "content-type": "application/x-www-form-urlencoded" }, "note=x"],
    ["/v1/schedules/s/trigger", { "sec-fetch-site": "cross-site" }, undefined],
  ] as const) {
    const r = await raw("POST", path, { ...headers }, body);
    expect({ path, status: r.status }).toEqual({ path, status: 400 });
    expect(JSON.parse(r.body).code).toBe("INVALID_ARGUMENT");
  }
  expect(await paused()).toBe(false);
  expect((await t.call("GET", "/v1/executions?schedule_id=s")).body.executions).toEqual([]);
  // What Orbit's own clients send passes: JSON without a body, or the X-Orbit-Client header.
  expect((await raw("POST", "/v1/schedules/s/pause", { "content-type": "application/json" })).status).toBe(200);
  expect((await raw("POST", "/v1/schedules/s/resume", { "x-orbit-client": "1" })).status).toBe(200);
  expect(await paused()).toBe(false);
});

it("refuses a Host that is not loopback (DNS rebinding) and an Origin of another site", async () => {
  const port = new URL(t.server.url).port;
  for (const headers of <Record<string, string>[]>[
    { host: `attacker.example:${port}` },
    { host: `127.0.0.1:${port}`, origin: "http://attacker.example" },
    { host: `127.0.0.1:${port}`, origin: "null" },
  ]) {
    for (const path of ["/v1/schedules", "/"]) {
      const r = await raw("GET", path, headers);
      expect({ headers, path, status: r.status }).toEqual({ headers, path, status: 403 });
    }
    const write = await raw("POST", "/v1/schedules/s/pause", { ...headers, "content-type": "application/json" });
    expect(write.status).toBe(403);
  }
  expect(await paused()).toBe(false);
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
    expect((await raw("GET", "/v1/schedules", { host })).status).toBe(200);
  }
  expect(
    (await raw("GET", "/v1/schedules", { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}` })).status,
  ).toBe(200);
});

it("sends security headers with the UI", async () => {
  const r = await raw("GET", "/", {});
  expect(r.status).toBe(200);
  expect(r.headers).toMatchObject({
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
  });
  expect(r.headers["content-security-policy"]).toMatch(/frame-ancestors 'none'/);
});
