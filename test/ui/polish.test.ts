/**
 * What a user met in Chromium (docs/ui.md) and these tests keep fixed: keyboard focus after Pause,
 * Resume and Delete, the delete dialog's safe default, the upcoming strip's labels apart at any
 * width, the ledger legend's key for failed runs, long ids on phone cards, the notify field checked
 * in the form by the server's rule, status lines that follow what they describe, and no console
 * error for what the page handles.
 */
import type { ConsoleMessage, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium, type Json, startRig, type UiRig } from "./browser.js";

/** The overlapping neighbours among an SVG's tick labels, as drawn (runs in the page). */
const OVERLAPS = `(() => {
  const boxes = [...document.querySelectorAll(".upcoming-chart .tick-label")]
    .map((t) => { const b = t.getBoundingClientRect(); return { text: t.textContent, left: b.left, right: b.right }; })
    .sort((a, b) => a.left - b.left);
  const out = [];
  for (let i = 1; i < boxes.length; i++) {
    if (boxes[i].left < boxes[i - 1].right) out.push(boxes[i - 1].text + " over " + boxes[i].text);
  }
  return { count: boxes.length, overlaps: out };
})()`;

/** Text in a phone card cut at the card's edge without its whole text in a title (runs in the page). */
const CUT = `(() => {
  const out = [];
  for (const table of document.querySelectorAll("table.responsive")) {
    const edge = table.closest(".table-wrap").getBoundingClientRect().right;
    for (const el of table.querySelectorAll("tbody *")) {
      if (el.children.length > 0 || (el.textContent ?? "") === "") continue;
      const own = el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX === "hidden";
      if (el.getBoundingClientRect().right <= edge + 1 && !own) continue;
      const title = el.closest("[title]")?.getAttribute("title") ?? "";
      if (title === "" || !(el.textContent.includes(title) || title.includes(el.textContent))) out.push(el.textContent);
    }
  }
  return out;
})()`;

describe.skipIf(!haveChromium)("web UI polish", () => {
  let r: UiRig;
  const consoleErrors: string[] = [];
  const active = (page: Page) => page.evaluate("document.activeElement?.getAttribute('aria-label') ?? ''");
  /** Leases the pending tasks of Reports as the test's worker, through the worker protocol. */
  const leaseReports = async (): Promise<Json[]> =>
    (
      await r.ok("POST", "/v1/worker/poll", {
        worker_id: "polish-worker",
        workflows: [{ name: "Reports", version: "1.0.0", max_attempts: 1, backoff_ms: 0 }],
        max_tasks: 10,
        wait_ms: 0,
      })
    ).tasks;

  beforeAll(async () => {
    r = await startRig();
    r.page.on("console", (m: ConsoleMessage) => {
      if (m.type() === "error") consoleErrors.push(m.text());
    });
    await r.ok("POST", "/v1/workflows", { name: "Reports", version: "1.0.0" });
  });
  afterAll(async () => {
    await r?.close();
  });

  it("keeps focus on the row's new button after Pause and Resume; the delete dialog opens on Cancel", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "focus-demo", workflow: "Reports", interval: "1h" });
    await r.open("#/?q=focus-demo");
    await r.page.focus('button[aria-label="Pause focus-demo"]');
    await r.page.keyboard.press("Enter");
    await r.page.fill("dialog #dialog-input", "by keyboard");
    await r.page.click("dialog button[value=ok]");
    await r.until(
      () => active(r.page),
      (a) => a === "Resume focus-demo",
      "focus on Resume",
    );
    // Resume asks whether to catch up (unticked); its dialog opens on Resume, so Enter twice.
    await r.page.keyboard.press("Enter");
    await r.page.locator("dialog[open]").waitFor();
    await r.page.keyboard.press("Enter");
    await r.until(
      () => active(r.page),
      (a) => a === "Pause focus-demo",
      "focus on Pause",
    );
    expect((await r.ok("GET", "/v1/schedules/focus-demo")).state).toBe("active");

    await r.page.focus('button[aria-label="Delete focus-demo"]');
    await r.page.keyboard.press("Enter");
    await r.page.locator("dialog[open]").waitFor();
    expect(await r.page.evaluate("document.activeElement?.textContent")).toBe("Cancel");
    // Enter at once keeps the schedule.
    await r.page.keyboard.press("Enter");
    await r.page.locator("dialog").waitFor({ state: "detached" });
    expect((await r.call("GET", "/v1/schedules/focus-demo")).status).toBe(200);
    expect(consoleErrors).toEqual([]);
  });

  it("moves the focus to the next row's Delete after a confirmed Delete, and to the heading after the last row", async () => {
    for (const id of ["gone-a", "gone-b", "gone-c"]) {
      await r.ok("POST", "/v1/schedules", { schedule_id: id, workflow: "Reports", interval: "1h" });
    }
    await r.open("#/?q=gone-");
    /** Deletes `id` by keyboard: Enter on its Delete, Tab from Cancel to Delete, Enter. */
    const remove = async (id: string) => {
      await r.page.focus(`button[aria-label="Delete ${id}"]`);
      await r.page.keyboard.press("Enter");
      await r.page.locator("dialog[open]").waitFor();
      await r.page.keyboard.press("Tab");
      await r.page.keyboard.press("Enter");
      await r.page.locator(`tr[data-schedule-id="${id}"]`).waitFor({ state: "detached" });
    };
    const focused = () =>
      r.page.evaluate("document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.tagName");
    // The focus fell to the page (<body>), and a keyboard user lost their place in the list.
    await remove("gone-b");
    await r.until(focused, (a) => a === "Delete gone-c", "the focus on the next row's Delete");
    await remove("gone-c");
    await r.until(focused, (a) => a === "Delete gone-a", "the focus on the row before, the last row gone");
    await remove("gone-a");
    await r.until(focused, (a) => a === "H1", "the focus on the list's heading, no row left");
    expect(await r.page.locator("main h1").textContent()).toBe("Schedules");
    expect(await r.page.locator("#status").textContent()).toContain("deleted gone-a");
    expect(consoleErrors).toEqual([]);
  });

  it("draws the upcoming strip's labels apart at 1280 and 390 px, and keys failed runs in the legend", async () => {
    // Daily at 19:00 UTC: the first fire fails; the next five span five days (the 7-day window).
    await r.ok("POST", "/v1/schedules", { schedule_id: "daily", workflow: "Reports", cron: "0 19 * * *" });
    await r.setClock("2026-11-15T19:00:00Z");
    await r.until(
      () => r.ok("GET", "/v1/schedules/daily"),
      (s: Json) => s.fired === 1,
      "the first fire",
    );
    const worker = { worker_id: "polish-worker" };
    const tasks = await leaseReports();
    const task = tasks.find((t: Json) => t.execution_id.includes("daily"));
    await r.ok("POST", `/v1/worker/tasks/${task.task_id}/fail`, {
      ...worker,
      error: { message: "refused" },
      retryable: false,
    });
    for (const width of [1280, 390]) {
      await r.page.setViewportSize({ width, height: 900 });
      await r.open("#/schedules/daily");
      for (const win of ["fit", "day", "week"]) {
        await r.page.click(`button[data-window="${win}"]`);
        await r.page.locator(`button[data-window="${win}"][aria-pressed="true"]`).waitFor();
        const { count, overlaps } = (await r.page.evaluate(OVERLAPS)) as { count: number; overlaps: string[] };
        expect(count).toBeGreaterThan(1);
        expect({ width, win, overlaps }).toEqual({ width, win, overlaps: [] });
      }
    }
    await r.page.setViewportSize({ width: 1280, height: 900 });
    // The legend keys the red mark the picture draws for a failed run, with its count.
    const legend = async (key: string) =>
      ((await r.page.locator(`.legend li[data-legend="${key}"]`).textContent()) ?? "").replace(/\s+/g, " ").trim();
    expect(await legend("failed")).toBe("started, failed (1)");
    expect(await legend("completed")).toBe("started, completed (0)");
    const fill = (selector: string) =>
      r.page.evaluate(`getComputedStyle(document.querySelector(${JSON.stringify(selector)})).fill`);
    const failedKey = await fill('.legend li[data-legend="failed"] circle');
    expect(failedKey).toBe(await fill("svg.ledger-chart g.mark.failed circle"));
    expect(failedKey).not.toBe(await fill('.legend li[data-legend="completed"] circle'));
    expect(consoleErrors).toEqual([]);
  });

  it("wraps a long id in a phone card rather than cutting it", async () => {
    const id = "nightly_reconciliation_of_every_subsidiary_ledger_in_europe_and_the_americas";
    await r.ok("POST", "/v1/schedules", { schedule_id: id, workflow: "Reports", interval: "1h" });
    await r.ok("POST", `/v1/schedules/${id}/trigger`, {});
    await r.page.setViewportSize({ width: 390, height: 844 });
    for (const hash of [`#/?q=${id}`, "#/executions"]) {
      await r.open(hash);
      expect({ hash, cut: await r.page.evaluate(CUT) }).toEqual({ hash, cut: [] });
    }
    await r.page.setViewportSize({ width: 1280, height: 900 });
    expect(consoleErrors).toEqual([]);
  });

  it("checks the notify field in the form by the server's rule, and clears a status line that no longer holds", async () => {
    const writes: string[] = [];
    r.page.on("request", (q) => {
      if (q.method() !== "GET") writes.push(`${q.method()} ${q.url()}`);
    });
    await r.open("#/");
    await r.page.click("#create > summary");
    const fillForm = async (id: string, notify: string) => {
      await r.page.fill("#f-id", id);
      await r.page.fill("#f-workflow", "Reports");
      await r.page.fill("#f-timing", "0 * * * *");
      if (!(await r.page.locator("#f-notify").isVisible()))
        await r.page.click("#create-form details.more-settings summary");
      await r.page.fill("#f-notify", notify);
    };
    const refused = [
      "ftp://hooks.example.test/orbit",
      "http://169.254.169.254/latest",
      "http://[fe80::1]/hook",
      '{"url": "https://hooks.example.test/orbit", "events": ["failure", "sometimes"]}',
      '{"url": "https://hooks.example.test/orbit", "secret": "x"}',
      JSON.stringify(Array.from({ length: 6 }, (_, i) => `https://hooks.example.test/${i}`)),
      "[42]",
    ];
    for (const notify of refused) {
      const server = await r.call("POST", "/v1/schedules", {
        schedule_id: "hooked",
        workflow: "Reports",
        cron: "0 * * * *",
        notify: notify.startsWith("{") || notify.startsWith("[") ? JSON.parse(notify) : notify,
      });
      expect(server.status).toBe(400);
      await fillForm("hooked", notify);
      await r.page.click("#create-form button[type=submit]");
      // The server's own words, said before anything is sent.
      await r.page.locator("#f-form-error").filter({ hasText: "INVALID_ARGUMENT" }).waitFor();
      expect(await r.page.locator("#f-form-error").innerText()).toBe(`${server.body.code}: ${server.body.message}`);
    }
    expect(writes).toEqual([]);

    // A success, then a refusal: "created …" does not stay beside the refusal.
    await fillForm("hooked", '{"url": "https://hooks.example.test/orbit", "events": ["failure"]}');
    await r.page.click("#create-form button[type=submit]");
    await r.page.locator("#f-form-done").filter({ hasText: "created hooked" }).waitFor();
    await fillForm("hooked-2", "ftp://nope.example.test");
    await r.page.click("#create-form button[type=submit]");
    await r.page.locator("#f-form-error").filter({ hasText: "INVALID_ARGUMENT" }).waitFor();
    expect(await r.page.locator("#status").innerText()).toBe("");
    expect(await r.page.locator("#f-form-done").textContent()).toBe("");
    expect(writes).toHaveLength(1);

    // A search longer than the server takes is not sent: the field stops at its limit.
    await r.page.fill("#search", "x".repeat(250));
    await r.page.locator("#list-summary", { hasText: "0 schedules match" }).waitFor();
    expect((await r.page.inputValue("#search")).length).toBe(200);
    expect(consoleErrors).toEqual([]);
  });

  it("clears 'cancel requested' once the execution is cancelled", async () => {
    await r.ok("POST", "/v1/executions", { execution_id: "polish-cancel", workflow: "Reports", version: "1.0.0" });
    const worker = { worker_id: "polish-worker" };
    const tasks = await leaseReports();
    const task = tasks.find((t: Json) => t.execution_id === "polish-cancel");
    await r.open("#/executions/polish-cancel");
    await r.page.click('button[data-action="cancel"]');
    await r.page.click("dialog button[value=ok]");
    const status = r.page.locator("#status");
    await status.filter({ hasText: "cancel requested for polish-cancel: RUNNING" }).waitFor();
    expect((await r.ok("POST", `/v1/worker/tasks/${task.task_id}/cancelled`, worker)).status).toBe("CANCELLED");
    // The next refresh (a tab shown again refreshes at once) shows it cancelled, and no longer
    // says that a cancel was requested of a running execution.
    await r.page.evaluate("document.dispatchEvent(new Event('visibilitychange'))");
    await r.page.locator("h1 .badge.status-cancelled").waitFor();
    expect(await status.innerText()).toBe("");
    expect(consoleErrors).toEqual([]);
  });

  it("says a refusal met while changing a filter in the status line, not as an uncaught error", async () => {
    const pageErrors: string[] = [];
    const onError = (err: Error) => pageErrors.push(err.message);
    r.page.on("pageerror", onError);
    // A search the server refuses. A linked search longer than its 200 characters was one; the
    // page now cuts it (field-report-17), so the refusal is the server's, forged here.
    const refuse = (route: import("playwright-core").Route) =>
      route.fulfill({
        status: 400,
        contentType: "application/json",
        body: JSON.stringify({ code: "INVALID_ARGUMENT", message: "query parameter q is refused" }),
      });
    await r.page.route("**/v1/schedules?*q=yyy*", refuse);
    await r.open("#/?q=yyy");
    const status = r.page.locator("#status");
    await status.filter({ hasText: "could not refresh: INVALID_ARGUMENT" }).waitFor();
    // No auto-refresh meanwhile: what the status line says next comes from the filter's change.
    await r.page.uncheck("#auto-refresh");
    await r.page.evaluate("document.getElementById('status').replaceChildren()");
    await r.page.selectOption("#filter-state", "paused");
    await status.filter({ hasText: "could not refresh: INVALID_ARGUMENT" }).waitFor();
    await r.page.unroute("**/v1/schedules?*q=yyy*", refuse);
    r.page.off("pageerror", onError);
    expect(pageErrors).toEqual([]);
    // Only Chromium's own line for each 400 (docs/ui.md § Fit and finish).
    expect(consoleErrors.length).toBeGreaterThan(0);
    expect(
      consoleErrors.filter((e) => !e.startsWith("Failed to load resource: the server responded with a status of 400")),
    ).toEqual([]);
  });
});
