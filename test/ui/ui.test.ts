/**
 * The web UI in a real browser (Debian's Chromium through playwright-core) against a real server
 * with a manual clock: the list, the create form, the actions, and the detail view's pictures.
 * Skipped, with a warning, where /usr/bin/chromium is not installed.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { type RunningServer, startServer } from "../../src/server/server.js";
import { startUiProxy, type UiProxy } from "./static-proxy.js";

const CHROMIUM = "/usr/bin/chromium";
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const UI_DIR = join(ROOT, "ui");
const SHOTS = join(ROOT, "docs/ui");
const SEED_NOW = "2026-11-15T18:51:00.347Z";
const ORDER_INPUT = { order_id: "R-1", customer_id: "cust-1", amount: 120, items: [{ sku: "BOOK-1", quantity: 1 }] };

const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) {
  console.warn(
    `test/ui: ${CHROMIUM} is missing, so the web UI tests are skipped (install it: apt-get install chromium)`,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: API answers are read field by field
type Json = any;

describe.skipIf(!haveChromium)("web UI", () => {
  let dir: string;
  let profile: string;
  let clock: ManualClock;
  let server: RunningServer;
  let proxy: UiProxy;
  let context: BrowserContext;
  let page: Page;

  async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
    // Writes say JSON even without a body, as the server requires (docs/security.md).
    const res = await fetch(server.url + path, {
      method,
      ...(method === "GET" ? {} : { headers: { "content-type": "application/json" } }),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text === "" ? null : JSON.parse(text) };
  }

  async function ok(method: string, path: string, body?: unknown): Promise<Json> {
    const r = await call(method, path, body);
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  }

  /** Polls the API until `check` holds (the scheduler fires on its own loop). */
  async function until<T>(read: () => Promise<T>, check: (v: T) => boolean, what: string): Promise<T> {
    for (let i = 0; i < 500; i++) {
      const v = await read();
      if (check(v)) return v;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  const schedule = (id: string) => ok("GET", `/v1/schedules/${id}`);

  /** Moves the server's clock, and the browser's with it. */
  async function setClock(iso: string): Promise<void> {
    clock.set(Date.parse(iso));
    await page.clock.setFixedTime(new Date(clock.now()));
  }

  /** Opens a view and waits for its first load from the API. */
  async function open(hash: string): Promise<void> {
    // From a blank page, so that the same URL loads afresh rather than only changing the hash.
    await page.goto("about:blank");
    await page.goto(`${proxy.url}/${hash}`);
    await page.waitForSelector("body[data-loaded=true]");
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "orbit-ui-"));
    profile = mkdtempSync(join(tmpdir(), "orbit-ui-chromium-"));
    clock = new ManualClock(Date.parse(SEED_NOW));
    server = await startServer({ port: 0, dataDir: dir, clock, logger: "silent" });
    proxy = await startUiProxy(UI_DIR, server.url);
    context = await chromium.launchPersistentContext(profile, {
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
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(10_000);
    page.on("pageerror", (err) => {
      throw err;
    });
    await page.clock.setFixedTime(new Date(clock.now()));
    await ok("POST", "/v1/workflows", { name: "OrderProcessing", version: "1.0.0" });
    mkdirSync(SHOTS, { recursive: true });
  });

  afterAll(async () => {
    await context?.close();
    await proxy?.close();
    await server?.close();
    for (const d of [dir, profile]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it("serves the page with its content types, and no request leaves the machine", async () => {
    const types = async (path: string) => (await fetch(proxy.url + path)).headers.get("content-type");
    expect(await types("/")).toBe("text/html; charset=utf-8");
    expect(await types("/app.js")).toBe("text/javascript; charset=utf-8");
    expect(await types("/style.css")).toBe("text/css; charset=utf-8");
    const outside: string[] = [];
    page.on("request", (r) => {
      if (!r.url().startsWith(proxy.url)) outside.push(r.url());
    });
    await open("#/");
    expect(await page.title()).toBe("Schedules · Orbit");
    expect(outside).toEqual([]);
  });

  it("lists the schedules created through the API", async () => {
    await ok("POST", "/v1/schedules", {
      schedule_id: "nightly-orders",
      workflow: "OrderProcessing",
      cron: "0 2 * * *",
      timezone: "Europe/Berlin",
      input: { ...ORDER_INPUT, order_id: "N-1" },
      description: "Nightly reconciliation order",
    });
    await ok("POST", "/v1/schedules", {
      schedule_id: "orders-every-10s",
      workflow: "OrderProcessing",
      interval: "10s",
      input: ORDER_INPUT,
    });
    await open("#/");
    const nightly = page.locator('tr[data-schedule-id="nightly-orders"]');
    const cells = await nightly.locator("th, td").allInnerTexts();
    expect(cells.slice(0, 3)).toEqual(["nightly-orders", "OrderProcessing", 'cron "0 2 * * *" Europe/Berlin']);
    expect(cells[3]).toBe("active");
    expect(cells[4]).toContain("2026-11-16T01:00:00Z");
    expect(cells[5]).toBe("-");
    expect(cells[6]).toBe("0 / 0");
    const next = nightly.locator("time");
    expect(await next.getAttribute("datetime")).toBe("2026-11-16T01:00:00Z");
    // Hover shows the browser's local time: Berlin, where the fire is at 02:00.
    expect(await next.getAttribute("title")).toMatch(/^local: .*02:00:00/);
    const interval = await page.locator('tr[data-schedule-id="orders-every-10s"] td').nth(1).innerText();
    expect(interval).toBe("every 10s");
    expect(await page.locator("#list-summary").innerText()).toMatch(/^2 schedules: 2 active, 0 paused, 0 ended\./);
  });

  it("creates a schedule through the form and shows the server's error inline", async () => {
    await open("#/");
    await page.fill("#f-id", "form-made");
    await page.fill("#f-workflow", "OrderProcessing");
    await page.fill("#f-timing", "0 25 * * *");
    await page.click("#create-form button[type=submit]");
    const error = page.locator("#form-error");
    await error.filter({ hasText: "INVALID_SCHEDULE" }).waitFor();
    expect(await error.innerText()).toBe(
      "INVALID_SCHEDULE: cron `0 25 * * *`: `25` is out of range for the hour field (0-23)",
    );
    expect((await call("GET", "/v1/schedules/form-made")).status).toBe(404);

    await page.fill("#f-input", "{not json");
    await page.click("#create-form button[type=submit]");
    await error.filter({ hasText: "not valid JSON" }).waitFor();

    await page.fill("#f-timing", "30 9 * * MON-FRI");
    await page.fill("#f-timezone", "America/New_York");
    await page.selectOption("#f-overlap", "allow");
    await page.selectOption("#f-catchup", "catch_up");
    await page.fill("#f-max-catch-up", "3");
    await page.fill("#f-input", JSON.stringify({ ...ORDER_INPUT, order_id: "F-1" }));
    await page.fill("#f-description", "Made in the web UI");
    await page.click("#create-form button[type=submit]");
    await page.locator('tr[data-schedule-id="form-made"]').waitFor();
    expect(await error.innerText()).toBe("");
    expect(await page.locator("#status").innerText()).toMatch(/^created form-made: cron "30 9 \* \* MON-FRI"/);
    const made = await schedule("form-made");
    expect(made).toMatchObject({
      workflow: "OrderProcessing",
      cron: "30 9 * * MON-FRI",
      timezone: "America/New_York",
      overlap: "allow",
      catchup: "catch_up",
      max_catch_up: 3,
      input: { ...ORDER_INPUT, order_id: "F-1" },
      description: "Made in the web UI",
      state: "active",
    });
    // The form is ready for the next one.
    expect(await page.inputValue("#f-id")).toBe("");
  });

  it("pauses with a note, resumes, triggers and deletes through the UI", async () => {
    await ok("POST", "/v1/schedules", {
      schedule_id: "actions-demo",
      workflow: "OrderProcessing",
      interval: "1h",
      input: ORDER_INPUT,
    });
    await open("#/");
    const row = page.locator('tr[data-schedule-id="actions-demo"]');

    await page.click('button[aria-label="Pause actions-demo"]');
    await page.fill("dialog #dialog-input", "maintenance window");
    await page.click("dialog button[value=ok]");
    const paused = await until(
      () => schedule("actions-demo"),
      (s) => s.paused,
      "the pause",
    );
    expect(paused).toMatchObject({ state: "paused", pause_note: "maintenance window", next_fire_at: null });
    await row.locator(".badge.state-paused").waitFor();
    expect(await row.locator(".note").innerText()).toBe("maintenance window");

    await page.click('button[aria-label="Resume actions-demo"]');
    await until(
      () => schedule("actions-demo"),
      (s) => !s.paused,
      "the resume",
    );
    await row.locator(".badge.state-active").waitFor();

    await page.click('button[aria-label="Trigger actions-demo"]');
    const status = page.locator("#status");
    await status.filter({ hasText: "started execution" }).waitFor();
    const triggered = await schedule("actions-demo");
    expect(triggered.last_execution_id).toMatch(/^actions-demo:manual:/);
    expect(await status.innerText()).toBe(`started execution ${triggered.last_execution_id}`);
    const execs = await ok("GET", "/v1/executions?schedule_id=actions-demo");
    expect(execs.executions.map((e: Json) => e.execution_id)).toEqual([triggered.last_execution_id]);

    // No worker runs it, so it is still running: the overlap policy (skip) refuses the next one.
    await page.click('button[aria-label="Trigger actions-demo"]');
    await status.filter({ hasText: "not started" }).waitFor();
    expect(await status.innerText()).toBe(
      "not started: the previous execution of actions-demo is still running (overlap: skip)",
    );

    await page.click('button[aria-label="Delete actions-demo"]');
    await page.click("dialog button[value=cancel]");
    expect((await call("GET", "/v1/schedules/actions-demo")).status).toBe(200);
    await page.click('button[aria-label="Delete actions-demo"]');
    await page.click("dialog button[value=ok]");
    await until(
      async () => (await call("GET", "/v1/schedules/actions-demo")).status,
      (s) => s === 404,
      "the delete",
    );
    await row.waitFor({ state: "detached" });
    expect(await status.innerText()).toBe("deleted actions-demo");
  });

  it("draws the upcoming fires and the ledger over time, and lists the executions", async () => {
    // A ledger with every kind of row, made by the scheduler itself as the manual clock moves.
    await ok("POST", "/v1/workflows", { name: "LedgerDemo", version: "1.0.0" });
    await ok("POST", "/v1/schedules", {
      schedule_id: "ledger-demo",
      workflow: "LedgerDemo",
      interval: "10s",
      overlap: "allow",
      input: { order_id: "L-1" },
      description: "Every kind of ledger row",
    });
    const demo = () => schedule("ledger-demo");
    await setClock("2026-11-15T18:51:10Z");
    await until(demo, (s) => s.fired === 1, "the first start");
    await setClock("2026-11-15T18:51:20Z");
    await until(demo, (s) => s.fired === 2, "the second start");
    await ok("PATCH", "/v1/schedules/ledger-demo", { overlap: "skip" });
    await setClock("2026-11-15T18:51:30Z");
    await until(demo, (s) => s.skipped === 1, "an overlap skip");
    await setClock("2026-11-15T18:51:40Z");
    await until(demo, (s) => s.skipped === 2, "a second overlap skip");
    await ok("PATCH", "/v1/schedules/ledger-demo", { overlap: "buffer_one" });
    await setClock("2026-11-15T18:51:50Z");
    await until(demo, (s) => s.last_tick?.kind === "buffered", "a buffered occurrence");
    await setClock("2026-11-15T18:52:00Z");
    await until(demo, (s) => s.skipped === 3, "a buffer_full skip");
    // The previous execution ends: the buffered occurrence starts.
    await ok("POST", "/v1/executions/ledger-demo:2026-11-15T18:51:20Z/cancel", { reason: "UI test" });
    await until(demo, (s) => s.fired === 3, "the buffered start");
    // Three minutes of downtime: the missed ones are one row with their count and range.
    await setClock("2026-11-15T18:55:05Z");
    await until(demo, (s) => s.next_fire_at === "2026-11-15T18:55:10Z", "the catch-up");
    // An hourly cron whose start keeps failing past the grace becomes a dead letter.
    await ok("PATCH", "/v1/schedules/ledger-demo", { interval: null, cron: "0 * * * *", overlap: "allow" });
    await ok("POST", "/v1/workflows", {
      name: "LedgerDemo",
      version: "2.0.0",
      input_schema: { type: "object", required: ["priority"] },
    });
    await setClock("2026-11-15T19:00:00Z");
    await until(demo, (s) => s.last_error !== null, "a failed start");
    await setClock("2026-11-15T19:01:30Z");
    const sch = await until(demo, (s) => s.dead_letters.length === 1, "the dead letter");
    const rows: Json[] = (await ok("GET", "/v1/schedules/ledger-demo/occurrences?limit=1000")).occurrences;
    const kinds = (kind: string, reason?: string) =>
      rows.filter((r) => r.kind === kind && (reason === undefined || r.reason === reason)).length;
    expect([kinds("started"), kinds("skipped", "overlap"), kinds("buffered"), kinds("skipped", "buffer_full")]).toEqual(
      [3, 2, 2, 1],
    );
    expect(kinds("skipped", "missed")).toBe(2); // 17 in a range, then the dead letter's own occurrence
    expect(kinds("dead_letter")).toBe(1);

    await open("#/schedules/ledger-demo");
    expect(await page.locator("h1").textContent()).toBe("ledger-demo active");
    expect(await page.locator(".dead-letters li").innerText()).toBe(
      "2026-11-15T19:00:00Z input does not match LedgerDemo@2.0.0: /priority is required",
    );

    // (a) upcoming fires: the five next_fire_times (hourly) on a 24-hour strip, and listed.
    expect(sch.next_fire_times).toHaveLength(5);
    const upcoming = page.locator("svg.upcoming-chart");
    expect(await page.locator("[data-window=day]").getAttribute("aria-pressed")).toBe("true");
    expect(await upcoming.locator("[data-mark=fire]").count()).toBe(5);
    expect(await upcoming.locator("[data-mark=fire] title").first().textContent()).toBe(
      `fire 1: ${sch.next_fire_times[0]}\nlocal: 15 Nov 2026, 21:00:00 CET`,
    );
    expect(await page.locator(".fire-list li time").allInnerTexts()).toEqual(sch.next_fire_times);
    await page.click("[data-window=week]");
    expect(await page.locator("svg.upcoming-chart [data-mark=fire]").count()).toBe(5);
    await page.click("[data-window=day]");

    // (b) the ledger: one mark per row, by kind and reason, the missed range as a bar with its count.
    const ledger = page.locator("svg.ledger-chart");
    expect(await ledger.locator("g.mark").count()).toBe(rows.length);
    expect(await ledger.locator('g.mark[data-kind="started"] circle').count()).toBe(3);
    expect(await ledger.locator('g.mark[data-reason="overlap"]').count()).toBe(2);
    expect(await ledger.locator('g.mark[data-reason="buffer_full"] rect').count()).toBe(1);
    expect(await ledger.locator('g.mark[data-kind="buffered"] circle.hollow').count()).toBe(2);
    expect(await ledger.locator('g.mark[data-kind="dead_letter"] path.cross').count()).toBe(1);
    const bar = ledger.locator('g.mark[data-reason="missed"]:has(rect.range)');
    expect(await bar.count()).toBe(1);
    expect(await bar.locator("text").textContent()).toBe("17 missed");
    expect(await bar.locator("title").textContent()).toMatch(
      /^skipped \(missed\): 17 occurrence\(s\) from 2026-11-15T18:52:10Z to 2026-11-15T18:54:50Z/,
    );
    expect(await ledger.locator('g.mark[data-kind="dead_letter"] title').textContent()).toContain(
      "error: input does not match LedgerDemo@2.0.0: /priority is required",
    );
    const legend = async (key: string) => page.locator(`.legend li[data-legend="${key}"] .count`).innerText();
    expect([await legend("started"), await legend("missed"), await legend("dead_letter")]).toEqual([
      "(3)",
      "(18)",
      "(1)",
    ]);

    // Recent executions with their status colours.
    const executions: Json[] = (await ok("GET", "/v1/executions?schedule_id=ledger-demo")).executions;
    const trs = page.locator("table.executions tbody tr");
    expect(await trs.count()).toBe(executions.length);
    expect(await trs.locator("td").first().innerText()).toBe(executions[0].execution_id);
    expect(await page.locator("table.executions .badge.status-cancelled").count()).toBe(1);
    expect(await page.locator("table.executions .badge.status-running").count()).toBe(executions.length - 1);

    await page.screenshot({ path: join(SHOTS, "detail.png"), fullPage: true });
    await open("#/");
    await page.screenshot({ path: join(SHOTS, "list.png"), fullPage: true });
  });
});
