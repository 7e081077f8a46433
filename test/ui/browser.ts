/**
 * Test plumbing for the web UI suites: a real server with a manual clock, the UI proxy in front of
 * it, and Debian's Chromium through playwright-core. Skipped, with a warning, without /usr/bin/chromium.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { type RunningServer, type ServerOptions, startServer } from "../../src/server/server.js";
import { startUiProxy, type UiProxy } from "./static-proxy.js";

export const CHROMIUM = "/usr/bin/chromium";
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
/**
 * Where the suites' screenshots go: docs/ui (the pictures docs/ui.md shows) with ORBIT_UI_SHOTS=1,
 * otherwise one folder under the system's temporary directory, overwritten by each run, so that
 * `npm test` leaves a clone's tree as it found it.
 */
export const SHOTS = process.env.ORBIT_UI_SHOTS === "1" ? join(ROOT, "docs/ui") : join(tmpdir(), "orbit-ui-shots");
mkdirSync(SHOTS, { recursive: true });
export const SEED_NOW = "2026-11-15T18:51:00.347Z";
export const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) {
  console.warn(
    `test/ui: ${CHROMIUM} is missing, so the web UI tests are skipped (install it: apt-get install chromium)`,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: API answers are read field by field
export type Json = any;

export interface UiRig {
  clock: ManualClock;
  server: RunningServer;
  proxy: UiProxy;
  context: BrowserContext;
  page: Page;
  call(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: Json }>;
  ok(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Json>;
  /** Opens a view from a blank page and waits for its first load from the API. */
  open(hash: string): Promise<void>;
  /** Moves the server's clock, and the browser's with it. */
  setClock(iso: string): Promise<void>;
  until<T>(read: () => Promise<T>, check: (v: T) => boolean, what: string): Promise<T>;
  close(): Promise<void>;
}

/** Leases every pending task of Reports@1.0.0 as `workerId` (one attempt, no back-off), as a worker would. */
export async function leaseReports(r: UiRig, workerId: string): Promise<Json[]> {
  const body = {
    worker_id: workerId,
    workflows: [{ name: "Reports", version: "1.0.0", max_attempts: 1, backoff_ms: 0 }],
    max_tasks: 100,
    wait_ms: 0,
  };
  return (await r.ok("POST", "/v1/worker/poll", body)).tasks;
}

export async function startRig(options: Partial<ServerOptions> = {}): Promise<UiRig> {
  const dir = mkdtempSync(join(tmpdir(), "orbit-ui-"));
  const profile = mkdtempSync(join(tmpdir(), "orbit-ui-chromium-"));
  const clock = new ManualClock(Date.parse(SEED_NOW));
  const server = await startServer({ port: 0, dataDir: dir, clock, logger: "silent", ...options });
  const proxy = await startUiProxy(join(ROOT, "ui"), server.url);
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width: 1280, height: 900 },
    locale: "en-GB",
    timezoneId: "Europe/Berlin",
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(15_000);
  page.on("pageerror", (err) => {
    throw err;
  });
  await page.clock.setFixedTime(new Date(clock.now()));
  mkdirSync(SHOTS, { recursive: true });
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(server.url + path, {
      method,
      // Every write says JSON, as the server requires (docs/security.md).
      headers: { ...(method === "GET" ? {} : { "content-type": "application/json" }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text === "" ? null : JSON.parse(text) };
  };
  return {
    clock,
    server,
    proxy,
    context,
    page,
    call,
    async ok(method, path, body, headers) {
      const r = await call(method, path, body, headers);
      if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    },
    async open(hash) {
      await page.goto("about:blank");
      await page.goto(`${proxy.url}/${hash}`);
      await page.waitForSelector("body[data-loaded=true]");
    },
    async setClock(iso) {
      clock.set(Date.parse(iso));
      await page.clock.setFixedTime(new Date(clock.now()));
    },
    async until(read, check, what) {
      for (let i = 0; i < 500; i++) {
        const v = await read();
        if (check(v)) return v;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`timed out waiting for ${what}`);
    },
    async close() {
      await context.close();
      await proxy.close();
      await server.close();
      for (const d of [dir, profile]) rmSync(d, { recursive: true, force: true });
    },
  };
}

/**
 * A describe block's rig: started before its tests with the workflow `Reports@1.0.0` registered and
 * handed to `take`, closed after them. Returns the page's errors, collected as they come.
 */
export function useReportsRig(take: (rig: UiRig) => void): string[] {
  const pageErrors: string[] = [];
  let rig: UiRig | undefined;
  beforeAll(async () => {
    rig = await startRig();
    take(rig);
    rig.page.on("pageerror", (err) => pageErrors.push(err.message));
    await rig.ok("POST", "/v1/workflows", { name: "Reports", version: "1.0.0" });
  });
  afterAll(async () => {
    await rig?.close();
  });
  return pageErrors;
}
