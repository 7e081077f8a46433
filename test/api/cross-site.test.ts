/**
 * Cross-site requests and DNS rebinding against an open server (docs/security.md § Browsers):
 * writes must say JSON, Host must be loopback and Origin the same host; the UI's pages carry
 * security headers. Raw node:http requests, so Host and Origin are exactly what a browser sends.
 */
import { request } from "node:http";
import { connect } from "node:net";
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

/** Sends `text` as the whole request on a fresh connection; the answer as received. */
function rawText(text: string): Promise<{ status: number; body: string; headers: string }> {
  const url = new URL(t.server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let answer = "";
    socket.on("data", (c: Buffer) => {
      answer += c.toString();
    });
    socket.on("error", reject);
    socket.on("close", () => {
      const [head = "", body = ""] = answer.split("\r\n\r\n");
      resolve({ status: Number(head.split(" ")[1]), headers: head.toLowerCase(), body });
    });
    socket.end(text);
  });
}

it("one Host per request, a target for that host, and every HTTP-layer refusal with {code, message}", async () => {
  const port = new URL(t.server.url).port;
  const cases: [string, number, RegExp][] = [
    // Two Host headers (RFC 9112 § 3.2): answered 200 with the first one's checks.
    [
      `GET /v1/me HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nHost: evil.example\r\nConnection: close\r\n\r\n`,
      400,
      /2 Host headers/,
    ],
    // No Host on HTTP/1.1: Node's own 400 had no body.
    ["GET /v1/me HTTP/1.1\r\nConnection: close\r\n\r\n", 400, /no Host header/],
    // An absolute target for another host, with a loopback Host: it passed the loopback check.
    [
      `GET http://evil.example/v1/me HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`,
      400,
      /names host "evil\.example"/,
    ],
    // A fragment in the request line (clients strip it): `#limit=1` was read as the query string.
    [
      `GET /v1/schedules#limit=1 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`,
      400,
      /holds a #: a fragment is not sent to a server/,
    ],
    [
      `GET /v1/schedules?limit=1#limit=2 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`,
      400,
      /holds a #/,
    ],
    // Query bytes that are not UTF-8 (a path's were refused; a query's read as U+FFFD).
    [
      `GET /v1/schedules?q=%FF HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`,
      400,
      /"q=%FF" is not percent-encoded UTF-8/,
    ],
    [
      `GET /v1/executions?workflow=%ED%A0%80 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`,
      400,
      /not percent-encoded UTF-8/,
    ],
    // The asterisk form is OPTIONS's alone: `GET *` was answered the UI's page, 200.
    [
      `GET * HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`,
      400,
      /the request target \* is for OPTIONS only; GET needs a path/,
    ],
    // An Expect that is not 100-continue: Node's own 417 had no body.
    [
      `GET /v1/me HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nExpect: junk\r\nConnection: close\r\n\r\n`,
      417,
      /Expect: "junk" is not supported/,
    ],
  ];
  for (const [request, status, message] of cases) {
    const r = await rawText(request);
    expect({ request, status: r.status }).toEqual({ request, status });
    expect(r.headers).toContain("content-type: application/json");
    expect(r.headers).toContain("orbit-version: ");
    expect(JSON.parse(r.body)).toEqual({ code: "INVALID_ARGUMENT", message: expect.stringMatching(message) });
  }
  // An absolute target for the server's own host passes; HTTP/1.0 may leave Host out, and then
  // meets this open server's loopback check (a {code, message} 403, not the bare 400).
  expect(
    (
      await rawText(
        `GET http://127.0.0.1:${port}/v1/me HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`,
      )
    ).status,
  ).toBe(200);
  const old = await rawText("GET /healthz HTTP/1.0\r\n\r\n");
  expect({ status: old.status, code: JSON.parse(old.body).code }).toEqual({ status: 403, code: "PERMISSION_DENIED" });
});
