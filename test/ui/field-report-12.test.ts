/**
 * What a twelfth tester met once the status line floated at the top right: an action's message lay
 * over a phone's page title, or over another row's buttons at 1280 px, for good (no timeout, no way
 * to dismiss it); two errors side by side were 183 px each on a phone; instants broke at their
 * hyphen; and "The next 1 fire". A later tester found ids that never wrapped (a 100-character
 * schedule id pushed the executions list's Status out of view at 1280 and 1920 px) and instants
 * and ids still broken at a hyphen at 375 px (the Settings card, execution ids in the lists).
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { haveChromium, leaseReports, type UiRig, useReportsRig } from "./browser.js";

// The DOM names of the code page.evaluate runs in the browser: the compiler here has no DOM lib
// (tsconfig.json types Node), so it is declared for this file only.
// biome-ignore lint/suspicious/noExplicitAny: browser globals, typed by the browser
declare const document: any;

type Box = { x: number; y: number; width: number; height: number };

async function box(page: Page, selector: string): Promise<Box> {
  const b = await page.locator(selector).first().boundingBox();
  if (b === null) throw new Error(`no box for ${selector}`);
  return b;
}

/** Ends the life of every status message now, as the few seconds of real time would. */
function endLives(page: Page): Promise<number> {
  return page.evaluate(() => {
    const lives = document.getElementById("status")?.getAnimations({ subtree: true }) ?? [];
    for (const a of lives) a.finish();
    return lives.length;
  });
}

/** How many lines each element matched takes (an instant broken at its hyphen takes two). */
function lines(page: Page, selector: string): Promise<number[]> {
  return page.locator(selector).evaluateAll((els) => els.map((e) => e.getClientRects().length));
}

/**
 * Each instant, and each part of an id between its colons (up to 24 characters), in the text of the
 * elements a selector matches: the lines it is drawn on and how far it runs past its cell or card
 * (runs in the page, on the text as drawn, whatever elements hold it).
 */
const PIECES = (selector: string) => `(() => {
  const out = [];
  for (const el of document.querySelectorAll(${JSON.stringify(selector)})) {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    const nodes = [];
    for (let n = walker.nextNode(); n !== null; n = walker.nextNode()) nodes.push(n);
    const whole = nodes.map((n) => n.data).join("");
    const box = el.closest("dd, td, th, .card, main").getBoundingClientRect();
    for (const m of whole.matchAll(/\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z|[^:\\s()]+/g)) {
      if (m[0].length > 24) continue;
      const range = document.createRange();
      let at = 0;
      for (const n of nodes) {
        const end = at + n.data.length;
        if (m.index >= at && m.index < end) range.setStart(n, m.index - at);
        if (m.index + m[0].length > at && m.index + m[0].length <= end) range.setEnd(n, m.index + m[0].length - at);
        at = end;
      }
      const rects = [...range.getClientRects()].filter((q) => q.width > 0);
      const lines = new Set(rects.map((q) => Math.round(q.top))).size;
      const over = Math.round(Math.max(...rects.map((q) => q.right)) - box.right);
      if (lines !== 1 || over > 1) out.push({ text: m[0], in: whole.slice(0, 60), lines, over });
    }
  }
  return out;
})()`;

describe.skipIf(!haveChromium)("web UI: a tester's twelfth report", () => {
  let r: UiRig;
  const pageErrors = useReportsRig((rig) => {
    r = rig;
  });

  it("lets a success go by itself, and keeps an error until it is dismissed", async () => {
    await r.page.setViewportSize({ width: 1280, height: 900 });
    await r.ok("POST", "/v1/schedules", { schedule_id: "fade", workflow: "Reports", interval: "1h" });
    await r.open("#/?q=fade");
    await r.page.uncheck("#auto-refresh");
    await r.page.click('button[aria-label="Trigger fade"]');
    const started = r.page.locator("#status p", { hasText: "started execution" });
    await started.waitFor();
    // Hovered (the pointer on its way to a button under it), it still goes; focused, it waits.
    await started.hover();
    await started.focus();
    const paused = await started.evaluate((p) => p.getAnimations().map((a: { playState: string }) => a.playState));
    expect(paused).toEqual(["paused"]);
    await r.page.locator('button[aria-label="Trigger fade"]').focus();
    expect(await endLives(r.page)).toBe(1);
    await started.waitFor({ state: "detached" });
    // Nothing lies over the row's buttons any more: a click at the Delete button's middle hits it.
    const del = await box(r.page, 'button[aria-label="Delete fade"]');
    const hit = await r.page.evaluate(
      ([x, y]) => document.elementFromPoint(x as number, y as number)?.getAttribute("aria-label"),
      [del.x + del.width / 2, del.y + del.height / 2],
    );
    expect(hit).toBe("Delete fade");

    // An error has no life: it stays until its × is pressed.
    await r.page.route("**/v1/**", (route) => route.abort());
    await r.page.click('button[aria-label="Trigger fade"]');
    const refused = r.page.locator("#status p.error", { hasText: "could not trigger fade" });
    await refused.waitFor();
    await r.page.locator("#status p.error", { hasText: "could not refresh" }).waitFor();
    expect(await endLives(r.page)).toBe(0);
    expect(await refused.count()).toBe(1);
    expect(await refused.textContent()).not.toContain("\u00d7");
    await refused.locator('button[aria-label="Dismiss message"]').click();
    await refused.waitFor({ state: "detached" });
    expect(await r.page.locator("#status p").count()).toBe(1);
    await r.page.unroute("**/v1/**");
    expect(pageErrors).toEqual([]);
  });

  it("stacks the messages the window's width on a phone, each read whole", async () => {
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "phone-a-rather-long-schedule-id",
      workflow: "Reports",
      interval: "1h",
    });
    await r.page.setViewportSize({ width: 360, height: 800 });
    await r.open("#/?q=phone");
    await r.page.uncheck("#auto-refresh");
    const bar = await box(r.page, "header.topbar");
    await r.page.route("**/v1/**", (route) => route.abort());
    await r.page.click('button[aria-label="Trigger phone-a-rather-long-schedule-id"]');
    await r.page.locator("#status p", { hasText: "could not refresh" }).waitFor();
    const boxes = await r.page
      .locator("#status p")
      .evaluateAll((ps) =>
        ps.map((p) => ({ ...p.getBoundingClientRect().toJSON(), cut: p.scrollWidth > p.clientWidth })),
      );
    expect(boxes).toHaveLength(2);
    const [a, b] = boxes as [Box & { cut: boolean }, Box & { cut: boolean }];
    for (const m of [a, b]) {
      // 183 px each side by side; now the window's width less its 12 px margins.
      expect(m.width).toBeGreaterThanOrEqual(360 - 2 * 12 - 1);
      expect(m.x + m.width).toBeLessThanOrEqual(360);
      expect(m.y).toBeGreaterThanOrEqual(bar.y + bar.height);
      expect(m.cut).toBe(false);
    }
    expect(b.y).toBeGreaterThanOrEqual(a.y + a.height);
    const cut = await r.page
      .locator("#status .message-text")
      .evaluateAll((ts) => ts.map((t) => t.scrollWidth > t.clientWidth));
    expect(cut).toEqual([false, false]);
    await r.page.unroute("**/v1/**");
    await r.page.setViewportSize({ width: 1280, height: 900 });
  });

  it("keeps an instant whole on an execution's page", async () => {
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "instant-whole-nightly",
      workflow: "Reports",
      cron: "0 4 * * *",
    });
    const t = await r.ok("POST", "/v1/schedules/instant-whole-nightly/trigger", {});
    await r.page.setViewportSize({ width: 390, height: 844 });
    await r.open(`#/executions/${encodeURIComponent(t.execution_id)}`);
    await r.page.locator("main h1 .instant").waitFor();
    expect(await lines(r.page, "main h1 .instant")).toEqual([1]);
    await r.page.locator(".event-head time").first().waitFor();
    for (const n of await lines(r.page, ".event-head time")) expect(n).toBe(1);
    await r.page.setViewportSize({ width: 1280, height: 900 });
    expect(pageErrors).toEqual([]);
  });

  it("keeps the executions list's Status in view with a 100-character schedule id, at 1280 and 1920 px", async () => {
    const long = `long-${"x".repeat(95)}`;
    // A workflow's name may be 128 characters with no word in it, a worker's id 200.
    const flow = `reportgeneration${"x".repeat(100)}`;
    const worker = `worker-${"z".repeat(150)}`;
    await r.ok("POST", "/v1/workflows", { name: flow, version: "1.0.0" });
    await r.ok("POST", "/v1/schedules", { schedule_id: long, workflow: "Reports", interval: "1h" });
    await r.ok("POST", "/v1/schedules", { schedule_id: "long-flow", workflow: flow, interval: "1h" });
    await r.ok("POST", `/v1/schedules/${long}/trigger`, {});
    await r.ok("POST", "/v1/schedules/long-flow/trigger", {});
    for (const task of await leaseReports(r, "w")) {
      await r.ok("POST", `/v1/worker/tasks/${task.task_id}/fail`, {
        worker_id: "w",
        error: { message: "boom" },
        retryable: false,
      });
    }
    await r.ok("POST", "/v1/worker/poll", {
      worker_id: worker,
      workflows: [{ name: flow, version: "1.0.0", max_attempts: 1, backoff_ms: 0 }],
      max_tasks: 1,
      wait_ms: 0,
    });
    /** Whether each table is wider than its box, and its FAILED badges past the box's edge (runs in the page). */
    const measure = () =>
      r.page.evaluate(() =>
        [...document.querySelectorAll("main table")].map((t) => {
          const box = (t.closest(".table-wrap") ?? t.parentElement).getBoundingClientRect();
          const failed = [...t.querySelectorAll(".badge.status-failed")];
          return {
            wide: t.getBoundingClientRect().width > box.width + 1,
            hidden: failed.filter((b) => b.getBoundingClientRect().right > box.right + 1).length,
          };
        }),
      );
    for (const width of [1280, 1920]) {
      await r.page.setViewportSize({ width, height: 900 });
      for (const hash of ["#/executions", `#/schedules/${long}`, "#/?q=long", "#/workers", "#/workflows"]) {
        await r.open(hash);
        const tables = await measure();
        expect(tables.length).toBeGreaterThan(0);
        // The executions list was 2,419 px wide in its 1,232 px box, FAILED out of view.
        for (const t of tables) expect({ width, hash, ...t }).toEqual({ width, hash, wide: false, hidden: 0 });
      }
      await r.open("#/executions");
      const failed = r.page.locator(`tr[data-execution-id^="${long}:"] .badge.status-failed`);
      const badge = await failed.boundingBox();
      expect(badge?.x ?? Infinity).toBeLessThan(width - (badge?.width ?? 0));
    }
    await r.page.setViewportSize({ width: 1280, height: 900 });
    expect(pageErrors).toEqual([]);
  });

  it("keeps every instant whole, and breaks an id only after a colon, at 375 and 320 px", async () => {
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "fail-15s",
      workflow: "Reports",
      interval: "15s",
      jitter: "1s",
      catchup_window: "1h",
      pause_on_failure: 3,
    });
    const t = await r.ok("POST", "/v1/schedules/fail-15s/trigger", {});
    for (const task of await leaseReports(r, "w")) {
      await r.ok("POST", `/v1/worker/tasks/${task.task_id}/fail`, {
        worker_id: "w",
        error: { message: "boom" },
        retryable: false,
      });
    }
    const where = "main time, main a[href^='#/executions/'], main a[href^='#/schedules/'], main h1";
    for (const width of [375, 320]) {
      await r.page.setViewportSize({ width, height: 800 });
      for (const hash of [
        "#/schedules/fail-15s",
        "#/executions?schedule_id=fail-15s",
        `#/executions/${t.execution_id}`,
      ]) {
        await r.open(hash);
        // "2026-12-" / "06T23:55:58.829Z" in the Settings card, "fail-15s:2026-12-" / "07T00:10:45Z" in the lists.
        expect({ width, hash, broken: await r.page.evaluate(PIECES(where)) }).toEqual({ width, hash, broken: [] });
      }
    }
    await r.page.setViewportSize({ width: 1280, height: 900 });
    expect(pageErrors).toEqual([]);
  });

  it("says 'The next fire' with one fire left", async () => {
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "last-one",
      workflow: "Reports",
      cron: "0 6 * * *",
      end_at: "2026-11-16T07:00:00Z",
    });
    await r.open("#/schedules/last-one");
    await r.page.click('button[data-window="fit"]');
    const caption = r.page.locator("table.fire-list caption");
    await caption.waitFor();
    expect(await caption.textContent()).toBe("The next fire");
  });
});
