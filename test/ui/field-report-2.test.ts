/**
 * What a second tester met in Chromium (docs/ui.md) and these tests keep fixed: a cancel of an
 * execution that had already ended, the upcoming fires' windows past the first five, the ledger's
 * and the grid's colours and squares, time axes, phone cards on a schedule's page, and the smaller
 * findings.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium, type Json, startRig, type UiRig } from "./browser.js";

describe.skipIf(!haveChromium)("web UI: the second tester's findings", () => {
  let r: UiRig;
  const pageErrors: string[] = [];
  const worker = { worker_id: "field-worker-2" };
  const lease = async (): Promise<Json[]> =>
    (
      await r.ok("POST", "/v1/worker/poll", {
        ...worker,
        workflows: [{ name: "Reports", version: "1.0.0", max_attempts: 1, backoff_ms: 0 }],
        max_tasks: 100,
        wait_ms: 0,
      })
    ).tasks;
  const statusLine = () => r.page.locator("#status p").first();
  /** Turns the page's auto-refresh off, so that what the test changes behind it stays unseen. */
  const holdStill = () => r.page.uncheck("#auto-refresh");

  beforeAll(async () => {
    r = await startRig();
    r.page.on("pageerror", (err) => pageErrors.push(err.message));
    await r.ok("POST", "/v1/workflows", { name: "Reports", version: "1.0.0" });
  });
  afterAll(async () => {
    await r?.close();
  });

  it("says a cancel of an execution that already ended did nothing, not in green", async () => {
    await r.ok("POST", "/v1/executions", { execution_id: "done-meanwhile", workflow: "Reports", version: "1.0.0" });
    await r.open("#/executions/done-meanwhile");
    await holdStill();
    const task = (await lease()).find((t: Json) => t.execution_id === "done-meanwhile");
    await r.ok("POST", `/v1/worker/tasks/${task.task_id}/complete`, { ...worker, result: {} });
    await r.page.click('button[data-action="cancel"]');
    await r.page.click("dialog button[value=ok]");
    const line = statusLine();
    await line.filter({ hasText: "not cancelled" }).waitFor();
    expect(await line.textContent()).toBe("not cancelled: done-meanwhile already ended COMPLETED");
    expect(await line.getAttribute("class")).toContain("warn");
    expect(pageErrors).toEqual([]);
  });

  it("shows a schedule's executions and ledger rows as one card per row at 390 px", async () => {
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "phone-report-with-a-long-id",
      workflow: "Reports",
      interval: "1h",
    });
    await r.ok("POST", "/v1/schedules/phone-report-with-a-long-id/trigger", {});
    await r.page.setViewportSize({ width: 390, height: 844 });
    try {
      await r.open("#/schedules/phone-report-with-a-long-id");
      await r.page.click(".ledger-rows summary");
      const fit =
        (await r.page.evaluate(`[...document.querySelectorAll("table.executions, .ledger-rows table")].map((t) =>
        ({ table: Math.round(t.getBoundingClientRect().width), box: t.parentElement.clientWidth }))`)) as Json[];
      expect(fit.length).toBe(2);
      for (const { table, box } of fit) expect(table).toBeLessThanOrEqual(box);
      expect(await r.page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
      // Each card labels its values, as the executions page's do.
      const label = await r.page.evaluate(
        `getComputedStyle(document.querySelector("table.executions td[data-label=Status]"), "::before").content`,
      );
      expect(label).toBe('"Status"');
    } finally {
      await r.page.setViewportSize({ width: 1280, height: 900 });
    }
  });
});
