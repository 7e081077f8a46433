/**
 * The web UI behind a reverse proxy that serves it under a path prefix (`/orbit/` → the server's
 * `/`), as docs/operations.md § Behind a reverse proxy describes: the page's files loaded (they
 * are relative) but every API request went to `/v1/…`, outside the prefix, so the table was empty
 * and the page said "could not refresh: HTTP_404". And what the server's cross-origin check makes
 * of a proxy that rewrites `Host` (nginx's default), which that section warns about.
 */
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium, SHOTS, startRig, type UiRig } from "./browser.js";

const PREFIX = "/orbit";

interface PrefixProxy {
  url: string;
  /** The paths asked for outside the prefix (each answered 404). */
  outside: string[];
  /** `true`: Host is set to the upstream's, as nginx's `proxy_set_header Host $proxy_host`. */
  rewriteHost: boolean;
  close(): Promise<void>;
}

/** A proxy serving the server at `url` under {@link PREFIX}, the prefix taken off on the way. */
async function startPrefixProxy(url: string): Promise<PrefixProxy> {
  const upstream = new URL(url);
  const outside: string[] = [];
  const proxy: PrefixProxy = { url: "", outside, rewriteHost: false, close: async () => {} };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const target = req.url ?? "/";
    if (!target.startsWith(`${PREFIX}/`)) {
      outside.push(target);
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not under the prefix");
      return;
    }
    const headers = { ...req.headers, ...(proxy.rewriteHost ? { host: upstream.host } : {}) };
    const ask = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: target.slice(PREFIX.length), headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    ask.on("error", (err) => {
      res.writeHead(502, { "content-type": "text/plain" });
      res.end(`proxy: ${err.message}`);
    });
    req.pipe(ask);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return proxy;
}

describe.skipIf(!haveChromium)("web UI behind a reverse proxy with a path prefix", () => {
  let r: UiRig;
  let proxy: PrefixProxy;
  const pageErrors: string[] = [];
  beforeAll(async () => {
    r = await startRig();
    r.page.on("pageerror", (err) => pageErrors.push(err.message));
    proxy = await startPrefixProxy(r.server.url);
    await r.ok("POST", "/v1/workflows", { name: "Reports", version: "1.0.0" });
    await r.ok("POST", "/v1/schedules", { schedule_id: "behind-proxy", workflow: "Reports", interval: "1h" });
  });
  afterAll(async () => {
    await proxy?.close();
    await r?.close();
  });

  const openPrefixed = async (hash: string) => {
    await r.page.goto("about:blank");
    await r.page.goto(`${proxy.url}${PREFIX}/${hash}`);
    await r.page.waitForSelector("body[data-loaded=true]");
  };

  it("lists, opens and pauses a schedule with every request under the prefix", async () => {
    await openPrefixed("#/");
    const row = r.page.locator("tr[data-schedule-id=behind-proxy]");
    await row.waitFor();
    expect(await r.page.locator("#status").innerText()).not.toContain("could not refresh");
    await r.page.screenshot({ path: `${SHOTS}/reverse-proxy-list.png` });
    // A write: sent under the prefix too, and taken (the proxy passes Host through).
    await r.page.click('button[aria-label="Pause behind-proxy"]');
    await r.page.click("dialog button[value=ok]");
    await r.page.locator("#status", { hasText: "paused behind-proxy" }).waitFor();
    expect((await r.ok("GET", "/v1/schedules/behind-proxy")).state).toBe("paused");
    await openPrefixed("#/schedules/behind-proxy");
    await r.page.locator(".glance").waitFor();
    for (const hash of ["#/executions", "#/workflows", "#/workers"]) await openPrefixed(hash);
    expect(await r.page.locator("#status").innerText()).not.toContain("could not refresh");
    expect(proxy.outside).toEqual([]);
    expect(pageErrors).toEqual([]);
  });

  it("is refused as cross-origin by an open server when the proxy rewrites Host to the upstream's", async () => {
    // What docs/operations.md warns of: the browser's Origin names the proxy, Host the server.
    proxy.rewriteHost = true;
    try {
      const res = await fetch(`${proxy.url}${PREFIX}/v1/schedules/behind-proxy/resume`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: proxy.url },
        body: "{}",
      });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { message: string }).message).toMatch(
        /^cross-origin request from http:\/\/127\.0\.0\.1:\d+ refused/,
      );
    } finally {
      proxy.rewriteHost = false;
    }
    const passed = await fetch(`${proxy.url}${PREFIX}/v1/schedules/behind-proxy/resume`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: proxy.url },
      body: "{}",
    });
    expect(passed.status).toBe(200);
  });
});
