/**
 * What an eleventh tester met as a newcomer: a weekly schedule's "7 days" drew one fire above a
 * table of five running 28 days on; an empty status line kept a 52 px band under the top bar on
 * every page; at 390 px the navigation left "Workers" alone on a line and the title started 210 px
 * down; the "created" message lay over a row of the list.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { haveChromium, type UiRig, useReportsRig } from "./browser.js";

type Box = { x: number; y: number; width: number; height: number };

/** The upcoming table's caption and its rows' UTC times, once the window's fires are drawn. */
async function listed(page: Page): Promise<{ caption: string; times: string[] }> {
  await page.locator("table.fire-list caption").waitFor();
  return {
    caption: (await page.locator("table.fire-list caption").textContent()) ?? "",
    times: await page.locator("table.fire-list tbody tr time").allTextContents(),
  };
}

async function box(page: Page, selector: string): Promise<Box> {
  const b = await page.locator(selector).first().boundingBox();
  if (b === null) throw new Error(`no box for ${selector}`);
  return b;
}

/**
 * The boxes of `selectors` measured in one animation frame, once two frames in a row agree (at
 * most 60 frames). A string runs in the page: DOM types are not in the test's compilation.
 */
async function settledBoxes(page: Page, selectors: string[]): Promise<[Box, Box]> {
  const boxes = (await page.evaluate(`new Promise((resolve) => {
    const measure = () => ${JSON.stringify(selectors)}.map((s) => {
      const r = document.querySelector(s).getBoundingClientRect();
      return { x: r.x, y: r.y, width: r.width, height: r.height };
    });
    let last = JSON.stringify(measure());
    let frames = 0;
    const next = () => requestAnimationFrame(() => {
      const now = JSON.stringify(measure());
      if (now === last || ++frames >= 60) resolve(JSON.parse(now));
      else { last = now; next(); }
    });
    next();
  })`)) as Box[];
  const [a, b] = boxes;
  if (a === undefined || b === undefined) throw new Error(`no box for ${selectors.join(" or ")}`);
  return [a, b];
}

describe.skipIf(!haveChromium)("web UI: a tester's eleventh report", () => {
  let r: UiRig;
  const pageErrors = useReportsRig((rig) => {
    r = rig;
  });

  it("lists under the upcoming strip the fires of the window its buttons choose", async () => {
    // Sunday 18:51 UTC: Wednesday's 06:00 is more than a day away, and the next five run a month on.
    await r.ok("POST", "/v1/schedules", { schedule_id: "weekly", workflow: "Reports", cron: "0 6 * * WED" });
    await r.ok("POST", "/v1/schedules", { schedule_id: "hourly", workflow: "Reports", cron: "0 * * * *" });
    await r.open("#/schedules/weekly");
    await r.page.uncheck("#auto-refresh");
    // A week does not hold the next five: the strip opens on them (it opened on "7 days", one fire).
    expect(await r.page.locator('button[data-window="fit"]').getAttribute("aria-pressed")).toBe("true");
    const five = await listed(r.page);
    expect(five.caption).toBe("The next 5 fires");
    expect(five.times).toHaveLength(5);
    const end = (days: number) => r.clock.now() + days * 86_400_000;
    for (const [win, caption, days] of [
      ["week", "1 fire in the next 7 days", 7],
      ["day", "No fire in the next 24 h; the next one:", 1],
    ] as const) {
      await r.page.click(`button[data-window="${win}"]`);
      await r.page.locator("table.fire-list caption", { hasText: caption }).waitFor();
      const { times } = await listed(r.page);
      expect(times).toEqual(["2026-11-18T06:00:00Z"]);
      // The strip draws what the table lists: the fire inside the window, or none.
      const marks = await r.page.locator(".upcoming-chart g.mark.fire").count();
      expect(marks).toBe(Date.parse(times[0] as string) <= end(days) ? 1 : 0);
    }

    await r.open("#/schedules/hourly");
    await r.page.uncheck("#auto-refresh");
    await r.page.click('button[data-window="day"]');
    await r.page.locator("table.fire-list caption", { hasText: "in the next 24 h" }).waitFor();
    const day = await listed(r.page);
    expect(day.caption).toBe("The first 10 of the 24 fires in the next 24 h");
    expect(day.times).toHaveLength(10);
    for (const t of day.times) expect(Date.parse(t)).toBeLessThanOrEqual(end(1));
    expect(pageErrors).toEqual([]);
  });

  it("keeps no band for an empty status line, and moves nothing when a message comes", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "band", workflow: "Reports", interval: "1h" });
    for (const [width, height] of [
      [1280, 900],
      [390, 844],
    ] as const) {
      await r.page.setViewportSize({ width, height });
      await r.open("#/?q=band");
      const bar = await box(r.page, "header.topbar");
      const main = await box(r.page, "main");
      // The status line reserved 52 px under the top bar on every page.
      expect(main.y).toBe(bar.y + bar.height);
      const title = await box(r.page, "main h1");
      const row = await box(r.page, 'tr[data-schedule-id="band"]');
      await r.page.click('button[aria-label="Trigger band"]');
      const message = r.page.locator("#status p", { hasText: "band" });
      await message.waitFor();
      expect(await box(r.page, "main h1")).toEqual(title);
      // The row may grow a "waiting" line (no worker polls Reports), but it starts where it did.
      expect((await box(r.page, 'tr[data-schedule-id="band"]')).y).toBe(row.y);
      // Said in the window, under the top bar.
      const said = await box(r.page, "#status p");
      expect(said.y).toBeGreaterThanOrEqual(bar.y + bar.height);
      expect(said.x + said.width).toBeLessThanOrEqual(width);
    }
    await r.page.setViewportSize({ width: 1280, height: 900 });
    expect(pageErrors).toEqual([]);
  });

  it("keeps the navigation on one line at 390 and 360 px", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "line-a", workflow: "Reports", cron: "0 6 * * MON" });
    for (const width of [390, 360]) {
      await r.page.setViewportSize({ width, height: 844 });
      await r.open("#/?q=line-");
      const links = await r.page.locator("nav[aria-label=Main] a").evaluateAll((as) =>
        as.map((a) => {
          const b = (
            a as unknown as { getBoundingClientRect(): { top: number; right: number } }
          ).getBoundingClientRect();
          return { top: Math.round(b.top), right: b.right };
        }),
      );
      expect(new Set(links.map((l) => l.top)).size).toBe(1);
      for (const l of links) expect(l.right).toBeLessThanOrEqual(width);
      // The title started 210 px down (the nav's two lines and the status line's band).
      expect((await box(r.page, "main h1")).y).toBeLessThan(140);
    }
    expect(pageErrors).toEqual([]);
  });

  it("says 'created' under the Create button, with a link, and lays nothing over the list", async () => {
    await r.page.setViewportSize({ width: 1280, height: 900 });
    for (let i = 0; i < 8; i++) {
      await r.ok("POST", "/v1/schedules", { schedule_id: `made-${i}`, workflow: "Reports", interval: "1h" });
    }
    await r.open("#/?q=made-");
    await r.page.click("#create > summary");
    await r.page.fill("#f-id", "made-new");
    await r.page.fill("#f-workflow", "Reports");
    await r.page.fill("#f-timing", "0 * * * *");
    await r.page.click("#create-form button[type=submit]");
    const done = r.page.locator("#f-form-done");
    await done.filter({ hasText: "created made-new" }).waitFor();
    expect(await done.locator("a").getAttribute("href")).toBe("#/schedules/made-new");
    // Under the button the user pressed, in the window: measured in one frame once the layout holds
    // still (the form's preview and the list redraw after the answer), to the pixel (layout is
    // fractional, the scroll that brings the line into view is not: it may end 0.2 px short).
    const [button, said] = await settledBoxes(r.page, ["#create-form button[type=submit]", "#f-form-done"]);
    expect(said.y).toBeGreaterThanOrEqual(button.y + button.height - 1);
    expect(said.y + said.height).toBeLessThanOrEqual(900 + 1);
    // The status line, which lies over the page at the top of the window, holds nothing.
    expect(await r.page.locator("#status p").count()).toBe(0);
    await r.page.locator('tr[data-schedule-id="made-new"]').waitFor();
    // The next submit starts afresh: a refusal does not stand beside "created".
    await r.page.fill("#f-id", "made-new");
    await r.page.fill("#f-workflow", "Reports");
    await r.page.fill("#f-timing", "0 * * * *");
    await r.page.click("#create-form button[type=submit]");
    await r.page.locator("#f-form-error").filter({ hasText: "made-new" }).waitFor();
    expect(await done.textContent()).toBe("");
    expect(pageErrors).toEqual([]);
  });
});
