/**
 * What a thirteenth tester met: a slow search's late answer drawn over a newer one's rows (the
 * schedules list, the executions list's status filter), and a hash with a bare `%` that left a blank
 * page or the previous one under the new URL.
 */
import type { Page, Request, Route } from "playwright-core";
import { describe, expect, it } from "vitest";
import { haveChromium, leaseReports, type UiRig, useReportsRig } from "./browser.js";

// biome-ignore lint/suspicious/noExplicitAny: browser globals, typed by the browser
declare const document: any;

/**
 * Holds the first request whose URL matches `slow` until `release` is called; the others pass.
 * `held` resolves once it has been asked, `done` once its answer reached the page.
 */
async function holdFirst(page: Page, glob: string, slow: RegExp) {
  let release = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let heldRequest: Request | undefined;
  let asked = () => {};
  const held = new Promise<void>((resolve) => {
    asked = resolve;
  });
  const handler = async (route: Route) => {
    if (heldRequest === undefined && slow.test(decodeURIComponent(route.request().url()))) {
      heldRequest = route.request();
      asked();
      await gate;
    }
    await route.continue();
  };
  await page.route(glob, handler);
  const done = async () => {
    const req = heldRequest;
    if (req === undefined) throw new Error("nothing held");
    release();
    await req.response();
    await page.unroute(glob, handler);
  };
  return { held, done };
}

/** The ids of the rows a list shows. */
const rowIds = (page: Page, attr: string) =>
  page.locator(`tr[${attr}]`).evaluateAll((rows, a) => rows.map((t) => t.getAttribute(a)), attr);

/** Gives the page time to draw an answer it was handed (nothing to wait on when it is, rightly, dropped). */
const settle = (page: Page) => page.waitForTimeout(300);

describe.skipIf(!haveChromium)("web UI: a tester's thirteenth report", () => {
  let r: UiRig;
  const pageErrors = useReportsRig((rig) => {
    r = rig;
  });

  it("drops a slow search's late answer: the rows stay those of the search in the box", async () => {
    for (const id of ["fail-1", "fail-2", "fail-3", "cron-5"])
      await r.ok("POST", "/v1/schedules", { schedule_id: id, workflow: "Reports", interval: "1h" });
    await r.open("#/");
    await r.page.uncheck("#auto-refresh");
    const slow = await holdFirst(r.page, "**/v1/schedules?**", /[?&]q=fail(&|$)/);
    await r.page.fill("#search", "fail");
    await slow.held;
    await r.page.fill("#search", "cron-5");
    await r.until(
      () => rowIds(r.page, "data-schedule-id"),
      (ids) => ids.join() === "cron-5",
      "the cron-5 row",
    );
    await slow.done();
    await settle(r.page);
    expect(await rowIds(r.page, "data-schedule-id")).toEqual(["cron-5"]);
    expect(await r.page.locator("#list-summary").textContent()).toMatch(/^1 schedule matches/);
    expect(await r.page.evaluate(() => document.location.hash)).toBe("#/?q=cron-5");
  });

  it("drops a slow status filter's late answer on the executions list", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "runs", workflow: "Reports", interval: "1h", overlap: "allow" });
    const failed = (await r.ok("POST", "/v1/schedules/runs/trigger", {})).execution_id as string;
    const tasks = await leaseReports(r, "w13");
    const task = tasks.find((t) => t.execution_id === failed);
    await r.ok("POST", `/v1/worker/tasks/${task.task_id}/fail`, {
      worker_id: "w13",
      error: { message: "boom" },
      retryable: false,
    });
    const running = (await r.ok("POST", "/v1/schedules/runs/trigger", {})).execution_id as string;
    await r.open("#/executions?schedule_id=runs");
    await r.page.uncheck("#auto-refresh");
    const slow = await holdFirst(r.page, "**/v1/executions?**", /[?&]status=FAILED(&|$)/);
    await r.page.selectOption("#x-status", "FAILED");
    await slow.held;
    await r.page.selectOption("#x-status", "RUNNING");
    await r.until(
      () => rowIds(r.page, "data-execution-id"),
      (ids) => ids.join() === running,
      "the running execution's row",
    );
    await slow.done();
    await settle(r.page);
    expect(await rowIds(r.page, "data-execution-id")).toEqual([running]);
  });

  it("shows the page-not-found page for a hash with a bare %, not a blank or the previous page", async () => {
    await r.open("#/executions");
    for (const hash of ["#/executions/x%", "#/schedules/%E0%A4%A"]) {
      await r.page.evaluate((h) => {
        document.location.hash = h;
      }, hash);
      await r.page.locator(".not-found h1").waitFor();
      expect(await r.page.locator("main h1").allTextContents()).toEqual(["Page not found"]);
      expect(await r.page.locator(".not-found code").textContent()).toBe(hash);
    }
    await r.open("#/schedules/x%25");
    expect(await r.page.locator("main h1").first().textContent()).not.toBe("Page not found");
    expect(pageErrors).toEqual([]);
  });

  it("links a schedule's page to all of its executions past the newest 20 it lists", async () => {
    // It listed the newest 20 and linked only to the running ones: the rest were reachable only
    // through one execution's page.
    await r.ok("POST", "/v1/schedules", { schedule_id: "many", workflow: "Reports", interval: "1h", overlap: "allow" });
    await r.open("#/schedules/many");
    expect(await r.page.locator("#all-executions").count()).toBe(0);
    for (let i = 0; i < 21; i++) {
      r.clock.advance(1000);
      await r.ok("POST", "/v1/schedules/many/trigger", {});
    }
    await r.open("#/schedules/many");
    await r.page.locator("#all-executions a").waitFor();
    expect(await r.page.locator("#all-executions a").getAttribute("href")).toBe("#/executions?schedule_id=many");
    await r.page.click("#all-executions a");
    await r.page.locator('tr[data-execution-id^="many:manual:"]').first().waitFor();
    expect(pageErrors).toEqual([]);
  });

  // Last: they move the page's clock on past the server's.
  it("says a refresh the server does not answer in 10 s could not be done", async () => {
    await r.open("#/");
    const stalled: Route[] = [];
    await r.page.route("**/v1/**", (route) => {
      stalled.push(route);
    });
    // The auto-refresh's next round, then its wait for an answer.
    await r.page.clock.fastForward(5_000);
    await r.until(
      async () => stalled.length,
      (n) => n > 0,
      "the refresh's requests",
    );
    const line = r.page.locator("#status p[data-refresh]");
    expect(await line.count()).toBe(0);
    await r.page.clock.fastForward(10_000);
    await line.waitFor();
    expect(await line.textContent()).toBe("could not refresh: TIMEOUT: the server did not answer in 10 s");
    await r.page.unroute("**/v1/**");
    for (const route of stalled) await route.abort().catch(() => {});
  });

  it("says a write the server does not answer may have been applied, without aborting it, and refreshes", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "unanswered", workflow: "Reports", interval: "1h" });
    await r.open("#/?q=unanswered");
    await r.page.uncheck("#auto-refresh");
    const stalled: Route[] = [];
    await r.page.route("**/v1/**", (route) => {
      stalled.push(route);
    });
    await r.page.locator('tr[data-schedule-id="unanswered"] [data-action=trigger]').click();
    await r.until(
      async () => stalled.length,
      (n) => n > 0,
      "the trigger's request",
    );
    const post = stalled[0] as Route;
    expect(post.request().method()).toBe("POST");
    await r.page.clock.fastForward(10_000);
    const warn = r.page.locator("#status p.warn");
    await warn.waitFor();
    expect(await warn.textContent()).toBe(
      "trigger unanswered: the server did not answer in 10 s: the change may or may not have been applied; refreshing",
    );
    // The refresh after it, unanswered too.
    await r.until(
      async () => stalled.length,
      (n) => n > 1,
      "the refresh after the trigger",
    );
    await r.page.clock.fastForward(10_000);
    await r.page.locator("#status p[data-refresh]").waitFor();
    // Not aborted: the server still gets it, and applies it.
    await post.continue();
    await r.until(
      () => r.ok("GET", "/v1/schedules/unanswered"),
      (s) => s.last_execution_id !== undefined && s.last_execution_id !== null,
      "the trigger applied",
    );
    await r.page.unroute("**/v1/**");
    for (const route of stalled.slice(1)) await route.abort().catch(() => {});
    expect(pageErrors).toEqual([]);
  });
});
