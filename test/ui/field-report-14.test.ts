/**
 * What a fourteenth tester met: number fields holding text that is not a number (`1e`, `3-`) read
 * as empty, so an edit removed the setting and a create left it out without a word.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium, startRig, type UiRig, useReportsRig } from "./browser.js";

/** Types into a number field as a user does (`fill` refuses text that is not a number). */
async function typeInto(page: Page, selector: string, text: string) {
  await page.locator(selector).click();
  await page.keyboard.press("ControlOrMeta+a");
  await page.keyboard.press("Backspace");
  await page.keyboard.type(text);
}

/** The schedule writes the page sends (POST /v1/schedules, PATCH /v1/schedules/…). */
function writes(page: Page) {
  const sent: string[] = [];
  page.on("request", (q) => {
    if (q.method() !== "GET" && /\/v1\/schedules/.test(q.url())) sent.push(`${q.method()} ${q.url()}`);
  });
  return sent;
}

describe.skipIf(!haveChromium)("web UI: a tester's fourteenth report", () => {
  let r: UiRig;
  const pageErrors = useReportsRig((rig) => {
    r = rig;
  });

  it("refuses an edit whose Max runs is not a number, sending nothing, the setting kept", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "capped", workflow: "Reports", interval: "1h", max_runs: 5 });
    await r.open("#/schedules/capped");
    const sent = writes(r.page);
    await r.page.click('button[aria-label="Edit capped"]');
    await r.page.click("#edit-form details.more-settings summary");
    await typeInto(r.page, "#e-max-runs", "1e");
    // What Chromium makes of it: the field's value reads as empty.
    expect(await r.page.inputValue("#e-max-runs")).toBe("");
    await r.page.click("#edit-form button[type=submit]");
    const error = r.page.locator("#e-form-error");
    await error.filter({ hasText: "Max runs" }).waitFor();
    expect(await error.textContent()).toBe(
      'INVALID_ARGUMENT: Max runs holds text that is not a number (such as "1e" or "3-"): type a whole number, or empty it for none. Nothing was sent.',
    );
    expect(await r.page.getAttribute("#e-max-runs", "aria-invalid")).toBe("true");
    expect(await r.page.evaluate("document.activeElement?.id")).toBe("e-max-runs");
    expect(sent).toEqual([]);
    expect((await r.ok("GET", "/v1/schedules/capped")).max_runs).toBe(5);
    // Emptied on purpose, it does unset (the field is told apart from one holding bad text).
    await typeInto(r.page, "#e-max-runs", "");
    expect(await r.page.getAttribute("#e-max-runs", "aria-invalid")).toBeNull();
    await r.page.click("#edit-form button[type=submit]");
    await r.page.locator("#status").filter({ hasText: "saved capped" }).waitFor();
    expect((await r.ok("GET", "/v1/schedules/capped")).max_runs).toBeUndefined();
    expect(pageErrors).toEqual([]);
  });

  it("leaves a stored time zone of UTC alone when an edit changes something else", async () => {
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "zoned-utc",
      workflow: "Reports",
      cron: "0 3 * * *",
      timezone: "UTC",
    });
    await r.open("#/schedules/zoned-utc");
    const patches: string[] = [];
    r.page.on("request", (q) => {
      if (q.method() === "PATCH") patches.push(q.postData() ?? "");
    });
    await r.page.click('button[aria-label="Edit zoned-utc"]');
    await r.page.fill("#e-description", "only the description");
    await r.page.click("#edit-form button[type=submit]");
    await r.page.locator("#status").filter({ hasText: "saved zoned-utc" }).waitFor();
    expect(patches.map((b) => JSON.parse(b))).toEqual([{ description: "only the description" }]);
    expect(await r.ok("GET", "/v1/schedules/zoned-utc")).toMatchObject({
      timezone: "UTC",
      description: "only the description",
    });
    expect(pageErrors).toEqual([]);
  });

  it("refuses a create whose Pause on failure or Max catch-up is not a number", async () => {
    await r.open("#/");
    const sent = writes(r.page);
    await r.page.click("#create > summary");
    await r.page.fill("#f-id", "created-bad");
    await r.page.fill("#f-workflow", "Reports");
    await r.page.fill("#f-timing", "0 * * * *");
    await r.page.selectOption("#f-catchup", "catch_up");
    await typeInto(r.page, "#f-max-catch-up", "--3");
    await r.page.click("#create-form button[type=submit]");
    const error = r.page.locator("#f-form-error");
    await error.filter({ hasText: "Max catch-up" }).waitFor();
    expect(await error.textContent()).toContain("Max catch-up holds text that is not a number");
    await typeInto(r.page, "#f-max-catch-up", "4");
    // Pause on failure sits under "More settings": typed, then folded away, the refusal opens
    // the fold on it.
    await r.page.click("#create-form details.more-settings summary");
    await typeInto(r.page, "#f-pause-on-failure", "3-");
    await r.page.click("#create-form details.more-settings summary");
    expect(await r.page.locator("#f-pause-on-failure").isVisible()).toBe(false);
    await r.page.click("#create-form button[type=submit]");
    await error.filter({ hasText: "Pause on failure" }).waitFor();
    expect(await r.page.locator("#f-pause-on-failure").isVisible()).toBe(true);
    expect(await r.page.evaluate("document.activeElement?.id")).toBe("f-pause-on-failure");
    expect(sent).toEqual([]);
    expect((await r.call("GET", "/v1/schedules/created-bad")).status).toBe(404);
    await typeInto(r.page, "#f-pause-on-failure", "3");
    await r.page.click("#create-form button[type=submit]");
    await r.page.locator("#f-form-done").filter({ hasText: "created created-bad" }).waitFor();
    expect(await r.ok("GET", "/v1/schedules/created-bad")).toMatchObject({ pause_on_failure: 3, max_catch_up: 4 });
    expect(pageErrors).toEqual([]);
  });

  it("keeps the executions list's page in the URL: Previous, a reload and Back step one page", async () => {
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "paged",
      workflow: "Reports",
      interval: "1h",
      overlap: "allow",
    });
    for (let i = 0; i < 105; i++) {
      r.clock.advance(10);
      await r.ok("POST", "/v1/schedules/paged/trigger", {});
    }
    const info = r.page.locator("#x-page-info");
    const firstRow = () => r.page.locator("tr[data-execution-id]").first().getAttribute("data-execution-id");
    await r.open("#/executions?schedule_id=paged");
    await r.page.uncheck("#auto-refresh");
    expect(await info.textContent()).toBe("page 1: 1–50");
    expect(await r.page.locator("#x-prev").isDisabled()).toBe(true);
    const page1 = await firstRow();
    await r.page.click("#x-next");
    await info.filter({ hasText: "page 2: 51–100" }).waitFor();
    const page2 = await firstRow();
    expect(r.page.url()).toMatch(/#\/executions\?schedule_id=paged&page=2&cursor=/);
    await r.page.click("#x-next");
    await info.filter({ hasText: "page 3: 101–105" }).waitFor();
    expect(await r.page.locator("#x-next").isDisabled()).toBe(true);
    await r.page.click("#x-prev");
    await info.filter({ hasText: "page 2: 51–100" }).waitFor();
    expect(await firstRow()).toBe(page2);
    // A reload opens the same page, and Previous still steps back one page.
    await r.page.reload();
    await info.filter({ hasText: "page 2: 51–100" }).waitFor();
    expect(await firstRow()).toBe(page2);
    await r.page.click("#x-prev");
    await info.filter({ hasText: "page 1: 1–50" }).waitFor();
    expect(await firstRow()).toBe(page1);
    expect(r.page.url()).not.toContain("cursor=");
    // Each page is a history entry: Back steps back one page (it left the list), Forward returns.
    await r.page.click("#x-next");
    await info.filter({ hasText: "page 2: 51–100" }).waitFor();
    await r.page.goBack();
    await info.filter({ hasText: "page 1: 1–50" }).waitFor();
    await r.page.goForward();
    await info.filter({ hasText: "page 2: 51–100" }).waitFor();
    expect(await firstRow()).toBe(page2);
    // A filter applied starts at page 1 again, in the same entry.
    await r.page.selectOption("#x-status", "RUNNING");
    await info.filter({ hasText: "page 1: 1–50" }).waitFor();
    expect(r.page.url()).toMatch(/#\/executions\?status=RUNNING&schedule_id=paged$/);
    // A cursor the server refuses (edited by hand) opens the first page.
    await r.open("#/executions?schedule_id=paged&page=3&cursor=garbage");
    await info.filter({ hasText: "page 1: 1–50" }).waitFor();
    expect(r.page.url()).not.toContain("cursor=");
    expect(pageErrors).toEqual([]);
  });

  it("resumes with catch_up when asked to, and plainly by default", async () => {
    const sch = { workflow: "Reports", interval: "1m", overlap: "allow", catchup: "catch_up", max_catch_up: 10 };
    for (const id of ["caught-up", "not-caught-up"]) {
      await r.ok("POST", "/v1/schedules", { schedule_id: id, ...sch });
      await r.ok("POST", `/v1/schedules/${id}/pause`, {});
    }
    r.clock.advance(5 * 60_000);
    await r.page.clock.setFixedTime(new Date(r.clock.now()));
    const bodies: string[] = [];
    r.page.on("request", (q) => {
      if (q.url().endsWith("/resume")) bodies.push(JSON.stringify(JSON.parse(q.postData() ?? "null")));
    });
    const runs = async (id: string) => (await r.ok("GET", `/v1/executions?schedule_id=${id}`)).executions.length;
    await r.open("#/schedules/caught-up");
    await r.page.click('button[aria-label="Resume caught-up"]');
    // Unticked at first, and the dialog opens on Resume: Enter at once resumes without catching up.
    expect(await r.page.isChecked("dialog #resume-catch-up")).toBe(false);
    await r.page.check("dialog #resume-catch-up");
    await r.page.click("dialog button[value=ok]");
    await r.page.locator("#status", { hasText: "resumed caught-up, catching up on the paused span" }).waitFor();
    expect(bodies).toEqual(['{"catch_up":true}']);
    await r.until(
      () => runs("caught-up"),
      (n) => n > 0,
      "the paused span's runs",
    );
    await r.open("#/schedules/not-caught-up");
    await r.page.click('button[aria-label="Resume not-caught-up"]');
    await r.page.keyboard.press("Enter");
    await r.page.locator("#status", { hasText: "resumed not-caught-up" }).waitFor();
    expect(bodies).toEqual(['{"catch_up":true}', "{}"]);
    expect(await runs("not-caught-up")).toBe(0);
    expect(pageErrors).toEqual([]);
  });

  it("triggers with an input for one run, checked as the create form's input", async () => {
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "with-input",
      workflow: "Reports",
      interval: "1h",
      overlap: "allow",
      input: { region: "eu" },
    });
    await r.open("#/schedules/with-input");
    const sent: string[] = [];
    r.page.on("request", (q) => {
      if (q.url().endsWith("/trigger")) sent.push(q.postData() ?? "");
    });
    await r.page.click('button[aria-label="Trigger with input with-input"]');
    // It starts with the schedule's own input, focused.
    expect(JSON.parse(await r.page.inputValue("dialog #trigger-input"))).toEqual({ region: "eu" });
    expect(await r.page.evaluate("document.activeElement?.id")).toBe("trigger-input");
    const error = r.page.locator("dialog[open] #dialog-error");
    await r.page.fill("dialog #trigger-input", "{not json");
    await r.page.click("dialog button[value=ok]");
    await error.filter({ hasText: "INVALID_ARGUMENT: the input is not valid JSON" }).waitFor();
    await r.page.fill("dialog #trigger-input", '{"region": "us", "region": "eu"}');
    await r.page.click("dialog button[value=ok]");
    await error
      .filter({ hasText: 'INVALID_ARGUMENT: the input gives the key "region" twice in one object; give each key once' })
      .waitFor();
    expect(sent).toEqual([]);
    await r.page.fill("dialog #trigger-input", '{"region": "us", "dry_run": true}');
    await r.page.click("dialog button[value=ok]");
    await r.page.locator("#status", { hasText: "with the input given" }).waitFor();
    const overridden = (await r.ok("GET", "/v1/schedules/with-input")).last_execution_id;
    expect((await r.ok("GET", `/v1/executions/${encodeURIComponent(overridden)}`)).input).toEqual({
      region: "us",
      dry_run: true,
    });
    // The schedule keeps its input; emptied, the box sends none and the run takes the schedule's.
    expect((await r.ok("GET", "/v1/schedules/with-input")).input).toEqual({ region: "eu" });
    r.clock.advance(1000);
    await r.page.click('button[aria-label="Trigger with input with-input"]');
    await r.page.fill("dialog #trigger-input", "");
    await r.page.click("dialog button[value=ok]");
    await r.until(
      () => r.ok("GET", "/v1/schedules/with-input"),
      (s) => s.last_execution_id !== overridden,
      "the second trigger",
    );
    const plain = (await r.ok("GET", "/v1/schedules/with-input")).last_execution_id;
    expect((await r.ok("GET", `/v1/executions/${encodeURIComponent(plain)}`)).input).toEqual({ region: "eu" });
    expect(sent.map((b) => JSON.parse(b))).toEqual([{ input: { region: "us", dry_run: true } }, {}]);
    expect(pageErrors).toEqual([]);
  });
});

describe.skipIf(!haveChromium)("web UI: the day grid of a trimmed ledger", () => {
  let r: UiRig;
  beforeAll(async () => {
    // The ledger keeps 10 rows a schedule here (1,000 by default), so a small backfill trims it.
    r = await startRig({ ledgerRetention: 10 });
    await r.ok("POST", "/v1/workflows", { name: "Reports", version: "1.0.0" });
  });
  afterAll(async () => {
    await r?.close();
  });

  it("does not call the days the ledger kept all of them once older rows are gone", async () => {
    const heading = () => r.page.locator(".grid-heading").textContent();
    await r.ok("POST", "/v1/schedules", { schedule_id: "whole", workflow: "Reports", interval: "1h" });
    await r.ok("POST", "/v1/schedules/whole/backfill", {
      start_at: "2026-11-15T10:00:00Z",
      end_at: "2026-11-15T12:00:00Z",
    });
    const extent = () => r.page.locator("#ledger-heading + p").textContent();
    await r.open("#/schedules/whole");
    expect(await heading()).toBe("By day (UTC), one square per occurrence: the one day with occurrences");
    expect(await extent()).toBe(
      "Every decision the scheduler recorded for this schedule (3 rows). Hover a mark for its details.",
    );
    await r.ok("POST", "/v1/schedules", { schedule_id: "trimmed", workflow: "Reports", interval: "1h" });
    // 49 occurrences over three days; the ledger keeps the newest 10, of two days.
    const done = await r.ok("POST", "/v1/schedules/trimmed/backfill", {
      start_at: "2026-11-13T00:00:00Z",
      end_at: "2026-11-15T00:00:00Z",
    });
    expect(done.started).toBe(49);
    const kept = (await r.ok("GET", "/v1/schedules/trimmed/occurrences?limit=500")).occurrences;
    expect(kept.length).toBeLessThan(49);
    await r.open("#/schedules/trimmed");
    const said = await heading();
    expect(said).not.toMatch(/\ball\b/);
    expect(said).toMatch(
      /^By day \(UTC\), one square per occurrence: the \d+ days? with occurrences still in the ledger \(it keeps only each schedule's newest decisions, 1,000 by default; older ones are gone\)$/,
    );
    // The paragraph above the pictures said "every decision" of the rows kept.
    expect(await extent()).toBe(
      `The decisions for this schedule still in the ledger (${kept.length} rows; it keeps only each schedule's ` +
        "newest, 1,000 by default, and older ones are gone). Hover a mark for its details.",
    );
  });
});
