/**
 * What a user met in Chromium (docs/ui.md) and these tests keep fixed: keyboard focus after Pause
 * and Resume, the delete dialog's safe default, the upcoming strip's labels apart at any width, the
 * ledger legend's key for failed runs, long ids on phone cards, the notify field checked in the
 * form by the server's rule, status lines that follow what they describe, and no console error
 * for what the page handles.
 */
import type { ConsoleMessage, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium, startRig, type UiRig } from "./browser.js";

describe.skipIf(!haveChromium)("web UI polish", () => {
  let r: UiRig;
  const consoleErrors: string[] = [];
  const active = (page: Page) => page.evaluate("document.activeElement?.getAttribute('aria-label') ?? ''");

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
});
