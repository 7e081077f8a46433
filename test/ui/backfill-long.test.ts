/**
 * A long backfill (up to 10,000 occurrences, 10–90 s): the dialog showed a greyed button for
 * 10 s, then TIMEOUT, and never the result though the server finished (a tester). It moves the
 * page's clock on past the server's, so it has a rig of its own.
 */
import type { Route } from "playwright-core";
import { describe, expect, it } from "vitest";
import { haveChromium, type UiRig, useReportsRig } from "./browser.js";

describe.skipIf(!haveChromium)("web UI: a long backfill", () => {
  let r: UiRig;
  const pageErrors = useReportsRig((rig) => {
    r = rig;
  });

  it("awaits it, says what it does and for how long, keeps the page refreshing, then shows its result", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "long-backfill", workflow: "Reports", interval: "1h" });
    await r.open("#/schedules/long-backfill");
    await r.page.click('button[aria-label="Backfill long-backfill"]');
    await r.page.fill("#backfill-from", "2026-11-15T10:00:00Z");
    await r.page.fill("#backfill-to", "2026-11-15T12:00:00Z");
    await r.page.locator("#backfill-count", { hasText: "The range holds 3 occurrences." }).waitFor();
    // The server's answer is held back, as a backfill of thousands keeps it.
    let held: Route | undefined;
    let asked = () => {};
    const sent = new Promise<void>((resolve) => {
      asked = resolve;
    });
    await r.page.route("**/backfill", (route) => {
      held = route;
      asked();
    });
    const reads: string[] = [];
    r.page.on("request", (q) => {
      if (q.method() === "GET" && q.url().endsWith("/v1/schedules/long-backfill")) reads.push(q.url());
    });
    await r.page.click("dialog button[value=ok]");
    await sent;
    const progress = r.page.locator("dialog[open] #backfill-progress");
    await progress.waitFor();
    expect(await progress.textContent()).toBe("Starting 3 occurrences… 0 s");
    expect(await progress.getAttribute("role")).toBe("status");
    const readsBefore = reads.length;
    await r.page.clock.fastForward(23_000);
    await progress.filter({ hasText: "… 23 s" }).waitFor();
    // Past the 10 s other requests wait: no TIMEOUT, Backfill still disabled, the dialog open.
    expect((await r.page.locator("dialog[open] #dialog-error").textContent()) ?? "").toBe("");
    expect(await r.page.locator("dialog[open] button[value=ok]").isDisabled()).toBe(true);
    // The page behind went on refreshing (every 5 s) while the dialog waited.
    await r.until(
      async () => reads.length,
      (n) => n > readsBefore,
      "a refresh of the page behind",
    );
    // Escape does not close it while the backfill runs: its result would be said nowhere in it.
    await r.page.keyboard.press("Escape");
    await r.page.clock.fastForward(60_000);
    await progress.filter({ hasText: "… 1 min 23 s" }).waitFor();
    expect(await r.page.locator("dialog[open]").count()).toBe(1);
    await (held as Route).continue();
    await r.page.locator("dialog").waitFor({ state: "detached" });
    await r.page
      .locator("#status")
      .filter({
        hasText: "backfill 2026-11-15T10:00:00Z … 2026-11-15T12:00:00Z: 3 occurrences, 3 started, 0 already existed",
      })
      .waitFor();
    await r.page.unroute("**/backfill");
    expect(pageErrors).toEqual([]);
  });
});
