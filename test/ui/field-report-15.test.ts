/**
 * What a fifteenth tester met: a run a worker took 21.5 s late read "started on time"; a cancel the
 * worker had not carried out yet showed only RUNNING and a live Cancel button; a worker's token
 * signed in; the sign-in page gave CLI advice; a read-only identity's list said "0 schedules match:
 * 0 active, …" over the line saying it may see none; a missing schedule's page polled for good.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium, leaseReports, startRig, type UiRig, useReportsRig } from "./browser.js";

// biome-ignore lint/suspicious/noExplicitAny: browser globals, typed by the browser
declare const document: any;

/** Ends the life of every status message now, as the few seconds of real time would. */
function endLives(page: Page): Promise<number> {
  return page.evaluate(() => {
    const lives = document.getElementById("status")?.getAnimations({ subtree: true }) ?? [];
    for (const a of lives) a.finish();
    return lives.length;
  });
}

/** The value of one fact on an execution's page ("Started", "Status"). */
const fact = (r: UiRig, name: string) =>
  r.page.locator("dl.settings dt", { hasText: new RegExp(`^${name}$`) }).locator("xpath=following-sibling::dd[1]");

describe.skipIf(!haveChromium)("web UI: a tester's fifteenth report", () => {
  let r: UiRig;
  const pageErrors = useReportsRig((rig) => {
    r = rig;
  });

  it("says how late a worker took a scheduled run, not how late the server created it", async () => {
    // Created 84 ms after its scheduled time, taken by a worker 21.5 s after it.
    await r.setClock("2026-11-15T19:04:00.084Z");
    await r.ok("POST", "/v1/schedules", { schedule_id: "taken-late", workflow: "Reports", cron: "4 19 * * *" });
    const due = "2026-11-15T19:04:00Z";
    await r.ok("POST", "/v1/schedules/taken-late/backfill", { start_at: due, end_at: due });
    const [e] = (await r.ok("GET", "/v1/executions?schedule_id=taken-late")).executions;
    expect(e.started_at).toBe("2026-11-15T19:04:00.084Z");
    await r.setClock("2026-11-15T19:04:21.546Z");
    await leaseReports(r, "late-taker");
    await r.open(`#/executions/${encodeURIComponent(e.execution_id)}`);
    // It read "started on time (84ms after its scheduled time)" beside WorkflowTaskStarted +21.46 s.
    expect(await fact(r, "Started").locator(".late").innerText()).toBe(
      "created on time (84ms after its scheduled time); a worker took it at 2026-11-15T19:04:21.546Z, 21.5s after its scheduled time",
    );
    expect(pageErrors).toEqual([]);
  });

  it("says a cancel the worker has not carried out yet, for as long as it runs, and offers no second cancel", async () => {
    await r.ok("POST", "/v1/executions", { execution_id: "stubborn", workflow: "Reports" });
    await leaseReports(r, "stubborn-worker");
    await r.open("#/executions/stubborn");
    await r.page.click('button[data-action="cancel"]');
    await r.page.fill("#dialog-input", "wrong input");
    await r.page.click("dialog button[value=ok]");
    const notice = r.page.locator(".execution-body p.cancel-asked");
    await notice.waitFor();
    // The worker has not stopped: the server keeps it RUNNING with the cancel's reason.
    const e = await r.ok("GET", "/v1/executions/stubborn");
    expect(e).toMatchObject({ status: "RUNNING", cancel_reason: "wrong input" });
    const events = (await r.ok("GET", "/v1/executions/stubborn/events")).events;
    const at = events.findLast((ev: { type: string }) => ev.type === "CancelRequested").at;
    expect(await notice.innerText()).toBe(
      `RUNNING: cancel requested at ${at}, waiting for the worker to stop (reason: wrong input). A worker hears of it at once; one whose code ignores it hands the run back 60 s after it heard, and the next lease compensates it.`,
    );
    expect(await fact(r, "Status").innerText()).toContain(`cancel requested at ${at}, waiting for the worker to stop`);
    // The status line's "cancel requested" goes after a few seconds; the page's notice stays.
    await endLives(r.page);
    await r.page.clock.fastForward(5_000);
    await r.until(
      () => r.page.locator("#status p.ok").count(),
      (n) => n === 0,
      "the status line's message to go",
    );
    expect(await notice.count()).toBe(1);
    // The Cancel button no longer invites a second cancel (it changed nothing: the first reason stays).
    expect(await r.page.locator('button[data-action="cancel"]').count()).toBe(0);
    const asked = r.page.locator('button[data-action="cancel-requested"]');
    expect(await asked.isDisabled()).toBe(true);
    expect(await asked.innerText()).toBe("Cancel requested");
    expect(await asked.getAttribute("title")).toBe(
      `Cancel requested at ${at}: the server keeps the first reason, so a second cancel would change nothing.`,
    );
    expect(pageErrors).toEqual([]);
  });

  // Last: they move the page's clock on past the server's.
  it("stops refreshing the page of a schedule or an execution that does not exist", async () => {
    for (const [hash, api] of [
      ["#/schedules/no-such-schedule", "/v1/schedules/no-such-schedule"],
      ["#/executions/no-such-run", "/v1/executions/no-such-run"],
    ] as const) {
      const asked: string[] = [];
      const onRequest = (q: { url(): string }) => asked.push(new URL(q.url()).pathname);
      r.page.on("request", onRequest);
      await r.open(hash);
      expect(await r.page.locator(".alert").innerText()).toMatch(/does not exist/);
      expect(await r.page.locator("main").innerText()).toContain(
        "This page no longer refreshes by itself: reload it to look again.",
      );
      // A reload (or opening it) asks once.
      expect(asked).toContain(api);
      asked.length = 0;
      // Two rounds of the auto-refresh, then a request of the test's own: what the rounds asked
      // for would have gone before it (each round's requests are sent as its timer fires).
      await r.page.clock.fastForward(5_000);
      await r.page.clock.fastForward(5_000);
      await r.page.evaluate(() => fetch("/favicon.svg?after-two-rounds").then((a) => a.status));
      r.page.off("request", onRequest);
      // It asked again every 5 s, each a 404 in the console.
      expect(asked).toEqual(["/favicon.svg"]);
    }
    expect(pageErrors).toEqual([]);
  });
});

describe.skipIf(!haveChromium)("web UI: a tester's fifteenth report, with access control", () => {
  let r: UiRig;
  let dir: string;
  const sha = (t: string) => createHash("sha256").update(t).digest("hex");

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "orbit-ui-access-15-"));
    const config = join(dir, "identities.yaml");
    writeFileSync(
      config,
      `identities:
  - name: admin
    token_sha256: ${sha("admin-token")}
    kind: client
    allow:
      - workflows: "*"
        actions: [schedule, start, read, cancel]
  - name: auditor
    token_sha256: ${sha("auditor-token")}
    kind: client
    allow:
      - workflows: "*"
        actions: [read]
  - name: pool
    token_sha256: ${sha("pool-token")}
    kind: worker
    allow:
      - workflows: "*"
`,
    );
    r = await startRig({ config });
  });
  afterAll(async () => {
    await r?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("tells a browser user what to do, not the CLI's advice, and keeps the server's words aside", async () => {
    await r.page.goto(`${r.proxy.url}/#/`);
    await r.page.waitForSelector("#signin-token");
    // It read "this server requires a bearer token: send Authorization: Bearer <token> (orbit
    // --token or ORBIT_TOKEN)".
    expect(await r.page.locator("#signin-reason").innerText()).toBe(
      "This server has access control: paste your access token below to sign in.",
    );
    expect(await r.page.locator(".signin").innerText()).not.toContain("ORBIT_TOKEN");
    const server = r.page.locator(".signin details.signin-server");
    expect(await server.locator("summary").innerText()).toBe("What the server answered");
    expect(await server.locator("p").textContent()).toBe(
      "UNAUTHENTICATED: this server requires a bearer token: send Authorization: Bearer <token> (orbit --token or ORBIT_TOKEN)",
    );
    // A token the server does not know (revoked) is said with the server's reason.
    await r.page.evaluate("sessionStorage.setItem('orbit.token', 'revoked-token')");
    await r.open("#/executions");
    await r.page.waitForSelector("#signin-token");
    expect(await r.page.locator("#signin-reason").innerText()).toBe(
      "The server refused the token this tab kept (the bearer token is not one this server knows): sign in again with a current token.",
    );
    expect(await r.page.locator(".signin details").count()).toBe(0);
  });

  it("refuses a worker identity's token at sign-in, and a worker's token kept in the tab", async () => {
    await r.page.goto(`${r.proxy.url}/#/signin`);
    await r.page.waitForSelector("#signin-token");
    await r.page.fill("#signin-token", "pool-token");
    await r.page.click(".signin button[type=submit]");
    const refusal =
      "pool is a worker identity: its token is for workers (the worker protocol) and cannot sign in to this UI. Sign in with the token of a client identity.";
    // It signed in: "signed in as pool", then every page a 403 "identity pool is a worker…".
    await r.page.locator("#signin-error", { hasText: refusal }).waitFor();
    expect(await r.page.evaluate("sessionStorage.getItem('orbit.token')")).toBeNull();
    expect(await r.page.evaluate("location.hash")).toBe("#/signin");
    expect(await r.page.locator("#identity").innerText()).not.toContain("pool");
    // A worker's token already kept in the tab (signed in before this check) is dropped likewise.
    await r.page.evaluate("sessionStorage.setItem('orbit.token', 'pool-token')");
    await r.open("#/executions");
    await r.page.waitForSelector("#signin-token");
    expect(await r.page.locator("#signin-reason").innerText()).toBe(refusal);
    expect(await r.page.evaluate("sessionStorage.getItem('orbit.token')")).toBeNull();
    // A client's token still signs in.
    await r.page.fill("#signin-token", "admin-token");
    await r.page.click(".signin button[type=submit]");
    await r.page.locator("h1", { hasText: "Executions" }).waitFor();
    expect(await r.page.locator("#identity").innerText()).toContain("signed in as admin");
  });

  it("shows a read-only identity no zero counts above the line saying it may not see schedules", async () => {
    await r.ok("POST", "/v1/workflows", { name: "Reports", version: "1.0.0" }, { authorization: "Bearer admin-token" });
    await r.ok(
      "POST",
      "/v1/schedules",
      { schedule_id: "hidden-hourly", workflow: "Reports", interval: "1h" },
      { authorization: "Bearer admin-token" },
    );
    await r.page.goto(`${r.proxy.url}/#/signin`);
    await r.page.evaluate("sessionStorage.setItem('orbit.token', 'auditor-token')");
    await r.open("#/");
    expect(await r.page.locator("p.empty").innerText()).toBe(
      "Identity auditor may not see schedules: listing them needs the schedule permission on a workflow (it may read).",
    );
    // It read "0 schedules match: 0 active, 0 paused, 0 ended." directly above that line.
    expect(await r.page.locator("#list-summary").innerText()).toBe("");
  });
});
