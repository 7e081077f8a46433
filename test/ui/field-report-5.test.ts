/**
 * A user's afternoon in Chromium (docs/ui.md), kept fixed: the create form's preview listed fires
 * from today for a schedule whose start_at was next year (it sent neither bound); a long input made
 * a schedule's page 25,000 px wide; at 390 px the preview's table and a last error ran past the
 * phone's edge.
 */
import { describe, expect, it } from "vitest";
import { haveChromium, type UiRig, useReportsRig } from "./browser.js";

describe.skipIf(!haveChromium)("web UI: a user's afternoon", () => {
  let r: UiRig;
  const pageErrors = useReportsRig((rig) => {
    r = rig;
  });
  const width = () => r.page.evaluate("document.documentElement.scrollWidth") as Promise<number>;

  it("previews a new schedule within its start_at and end_at", async () => {
    await r.open("#/");
    await r.page.click("#create > summary");
    await r.page.fill("#f-timing", "0 * * * *");
    if (!(await r.page.locator("#f-start-at").isVisible()))
      await r.page.click("#create-form details.more-settings summary");
    await r.page.fill("#f-start-at", "2027-03-01T00:00:00Z");
    await r.page.fill("#f-end-at", "2027-03-01T02:00:00Z");
    const preview = r.page.locator("#timing-preview");
    await preview.getByText("until end_at 2027-03-01T02:00:00Z").waitFor();
    const fires = (await preview.locator("tbody tr td.mono").allTextContents()).map((t) => t.trim());
    expect(fires).toEqual(["2027-03-01T00:00:00Z", "2027-03-01T01:00:00Z", "2027-03-01T02:00:00Z"]);
    expect(pageErrors).toEqual([]);
  });

  it("keeps a schedule's page as wide as the window with a long input, and its preview table on a phone", async () => {
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "long-input",
      workflow: "Reports",
      interval: "1h",
      input: { blob: "z".repeat(3000) },
    });
    for (const w of [1280, 390]) {
      await r.page.setViewportSize({ width: w, height: 900 });
      await r.open("#/schedules/long-input");
      expect(await width()).toBeLessThanOrEqual(w);
    }
    // The create form's preview at 390 px: one card per fire, inside the page.
    await r.open("#/");
    await r.page.click("#create > summary");
    await r.page.fill("#f-timing", "0 9 * * 1-5");
    await r.page.fill("#f-timezone", "America/Argentina/Buenos_Aires");
    await r.page.locator("#timing-preview tbody tr").first().waitFor();
    expect(await width()).toBeLessThanOrEqual(390);
    await r.page.setViewportSize({ width: 1280, height: 900 });
  });

  it("wraps a last error naming a long property inside its box at 390 px", async () => {
    await r.ok("POST", "/v1/workflows", { name: "Orphan", version: "1.0.0" });
    await r.ok("POST", "/v1/schedules", { schedule_id: "refused", workflow: "Orphan", interval: "5s" });
    // The latest version requires a property the schedule's input lacks: its starts are refused.
    await r.ok("POST", "/v1/workflows", {
      name: "Orphan",
      version: "2.0.0",
      input_schema: { type: "object", required: [`must_have_a_${"really_".repeat(8)}long_property_name`] },
    });
    await r.setClock("2026-11-15T18:52:00Z");
    await r.until(
      () => r.ok("GET", "/v1/schedules/refused"),
      (s) => typeof s.last_error === "string",
      "a refused start",
    );
    await r.page.setViewportSize({ width: 390, height: 844 });
    await r.open("#/schedules/refused");
    await r.page.locator(".alert").first().waitFor();
    expect(await width()).toBeLessThanOrEqual(390);
    await r.page.setViewportSize({ width: 1280, height: 900 });
    expect(pageErrors).toEqual([]);
  });
});
