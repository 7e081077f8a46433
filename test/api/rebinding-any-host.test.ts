/**
 * An open server listening beyond loopback (`--host 0.0.0.0`, no `--config`) still refuses a Host a
 * web page could rebind (docs/security.md § Browsers): it also answers on 127.0.0.1, where a page
 * whose name rebinds there read and wrote everything (a tester; the usual Docker set-up publishes
 * 0.0.0.0 on the host's loopback only). IP addresses, localhost and the machine's names pass.
 */
import { request } from "node:http";
import { hostname } from "node:os";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ host: "0.0.0.0" });
});
afterAll(() => t.stop());

function post(host: string, origin?: string): Promise<{ status: number; body: string }> {
  const port = new URL(t.server.url).port;
  const headers: Record<string, string> = { host, "content-type": "application/json" };
  if (origin !== undefined) headers.origin = origin;
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method: "POST", path: "/v1/workflows", headers }, (res) => {
      let text = "";
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end('{"name":"Pwn","version":"1.0.0"}');
  });
}

it("refuses a name that is not the machine's, and another site's Origin, writing nothing", async () => {
  const port = new URL(t.server.url).port;
  const rebound = await post(`attacker.example:${port}`, `http://attacker.example:${port}`);
  expect(rebound.status).toBe(403);
  expect(JSON.parse(rebound.body)).toEqual({
    code: "PERMISSION_DENIED",
    message: `Host "attacker.example:${port}" is not an address of this server: without identities (--config) it answers only requests to an IP address, localhost or its host name, so that no web page can reach it through a name it controls (docs/security.md)`,
  });
  const crossSite = await post(`127.0.0.1:${port}`, "http://attacker.example");
  expect(crossSite.status).toBe(403);
  expect((await t.call("GET", "/v1/workflows")).body.workflows).toEqual([]);
});

it("answers an IP address, localhost and the machine's host name", async () => {
  const port = new URL(t.server.url).port;
  for (const host of [`10.1.2.3:${port}`, `[fd00::1]:${port}`, `localhost:${port}`, `${hostname()}:${port}`]) {
    const r = await post(host);
    expect({ host, ok: [200, 201].includes(r.status) }).toEqual({ host, ok: true });
  }
});
