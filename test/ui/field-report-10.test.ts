/**
 * What a tenth tester met: one long cron expression (77 characters, valid) pushed every row's
 * actions, next fire and counts out of the schedules list's box at 1280 px and wider; on a phone a
 * 52-character one was cut at the card's edge with no title; and the Backfill dialog offered the
 * last 24 hours whatever the period, 28,800 occurrences of a 3 s schedule one click away.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { haveChromium, type UiRig, useReportsRig } from "./browser.js";

const LONG_CRON = "0 0 1 JAN,FEB,MAR,APR,MAY,JUN,JUL,AUG,SEP,OCT,NOV,DEC MON,TUE,WED,THU,FRI";
const PHONE_CRON = "0,30 8-11,13-17 * JAN,FEB,MAR,OCT,NOV,DEC MON-FRI";
/** Letter ranges: a browser may break after a hyphen before a letter ("JAN-" / "FEB"). */
const RANGES_CRON = "0 0 1-5 JAN-FEB,MAR-APR,MAY-JUN,JUL-AUG,SEP-OCT,NOV-DEC MON-WED,THU-FRI";
const LONG_WORKFLOW = "AVeryLongWorkflowNameForQuarterlyFinancialReconciliationAcrossAllRegions";

/**
 * What of the list lies past its box: the table's overflow of the box, the cells and action
 * buttons whose right edge is past the box's (or the window's), and a cron cut in its cell.
 */
async function pastTheBox(page: Page): Promise<{ overflow: number; cells: string[]; buttons: string[] }> {
  // A string: this runs in the page (DOM types are not in the test's compilation).
  return page.evaluate(`(() => {
    const wrap = document.querySelector(".table-wrap");
    const box = wrap.getBoundingClientRect();
    const right = Math.min(box.right, window.innerWidth) + 0.5;
    const name = (el) => (el.closest("tr")?.dataset.scheduleId ?? "?") + " " + (el.dataset.label ?? el.getAttribute("aria-label") ?? el.tagName);
    const cells = [...document.querySelectorAll("table.schedules tbody td, table.schedules tbody th, table.schedules code.timing")]
      .filter((el) => el.getBoundingClientRect().right > right)
      .map(name);
    const buttons = [...document.querySelectorAll("table.schedules .actions button")]
      .filter((b) => b.getBoundingClientRect().right > right)
      .map(name);
    return { overflow: wrap.scrollWidth - wrap.clientWidth, cells, buttons };
  })()`);
}

/**
 * Where the browser broke a timing's text into lines, as drawn (innerText does not say soft
 * wraps): for each line after the first, the characters either side of the break.
 */
async function drawnBreaks(page: Page, selector: string): Promise<string[]> {
  return page.evaluate(`(() => {
    const el = document.querySelector(${JSON.stringify(selector)});
    const chars = [];
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (let i = 0; i < node.data.length; i++) {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const rect = range.getClientRects()[0];
        if (rect) chars.push({ c: node.data[i], top: Math.round(rect.top) });
      }
    }
    const breaks = [];
    for (let i = 1; i < chars.length; i++) if (chars[i].top > chars[i - 1].top + 2) breaks.push(chars[i - 1].c + chars[i].c);
    return breaks;
  })()`);
}

/** A break between fields (after a space) or after a comma, never inside a token such as `8-11`. */
const BETWEEN_TOKENS = /^([ ,].|. )$/;

describe.skipIf(!haveChromium)("web UI: a tester's tenth report", () => {
  let r: UiRig;
  const pageErrors = useReportsRig((rig) => {
    r = rig;
  });

  it("wraps a long cron expression so that every row's actions stay in the box at 1280 px and wider", async () => {
    await r.ok("POST", "/v1/workflows", { name: LONG_WORKFLOW, version: "12.345.6789" });
    const note = `Paused because the downstream ledger service in eu-central-1 is being migrated; ${"x".repeat(150)}`;
    const rows = [
      { schedule_id: "wide-long-cron-1", workflow: LONG_WORKFLOW, version: "12.345.6789", cron: LONG_CRON },
      { schedule_id: "wide-long-cron-2", workflow: "Reports", cron: LONG_CRON, paused: true, pause_note: note },
      { schedule_id: "wide-phone-cron", workflow: "Reports", cron: PHONE_CRON },
      { schedule_id: "wide-short-cron", workflow: "Reports", cron: "30 9 * * *" },
      { schedule_id: "wide-months-cron", workflow: "Reports", cron: "0 1 1-15 JAN,FEB,MAR MON-FRI" },
      { schedule_id: "wide-ranges-cron", workflow: "Reports", cron: RANGES_CRON },
    ];
    for (const row of rows) {
      await r.ok("POST", "/v1/schedules", {
        timezone: "America/Argentina/ComodRivadavia",
        description: `${"Supercalifragilisticexpialidocious".repeat(5)} and some words`,
        ...row,
      });
    }
    for (const width of [1280, 1440, 1920]) {
      await r.page.setViewportSize({ width, height: 900 });
      await r.open("#/?q=wide-");
      await r.page.locator("#list-summary", { hasText: "6 schedules match" }).waitFor();
      expect({ width, ...(await pastTheBox(r.page)) }).toEqual({ width, overflow: 0, cells: [], buttons: [] });
      // An ordinary expression stays on one line; a long one wraps, whole in its title.
      for (const id of ["wide-short-cron", "wide-months-cron"]) {
        const code = r.page.locator(`tr[data-schedule-id="${id}"] code.timing`);
        expect({ id, lines: await code.evaluate((el) => el.getClientRects().length) }).toEqual({ id, lines: 1 });
      }
      // Drawn breaks fall between tokens: a range broke after its hyphen ("11-" / "13", a re-tester).
      for (const id of ["wide-long-cron-1", "wide-phone-cron", "wide-ranges-cron"]) {
        const breaks = await drawnBreaks(r.page, `tr[data-schedule-id="${id}"] code.timing`);
        expect({ id, width, inside: breaks.filter((b) => !BETWEEN_TOKENS.test(b)) }).toEqual({ id, width, inside: [] });
        expect({ id, width, wrapped: breaks.length > 0 }).toEqual({ id, width, wrapped: true });
      }
      const long = r.page.locator('tr[data-schedule-id="wide-long-cron-1"] code.timing');
      expect(await long.getAttribute("title")).toBe(`cron "${LONG_CRON}" America/Argentina/ComodRivadavia`);
      expect((await long.innerText()).replace(/\s+/g, " ")).toBe(`cron "${LONG_CRON}"`);
    }
    await r.page.setViewportSize({ width: 1280, height: 900 });
    for (const row of rows) await r.ok("DELETE", `/v1/schedules/${row.schedule_id}`);
    expect(pageErrors).toEqual([]);
  });

  it("wraps a long cron expression inside its card on a phone, whole in its title", async () => {
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "realistic-cron",
      workflow: "Reports",
      cron: PHONE_CRON,
      timezone: "Europe/Berlin",
      paused: true,
    });
    for (const width of [390, 320]) {
      await r.page.setViewportSize({ width, height: 844 });
      await r.open("#/?q=realistic");
      await r.page.locator('tr[data-schedule-id="realistic-cron"]').waitFor();
      expect({ width, ...(await pastTheBox(r.page)) }).toEqual({ width, overflow: 0, cells: [], buttons: [] });
      const code = r.page.locator('tr[data-schedule-id="realistic-cron"] code.timing');
      expect(await code.getAttribute("title")).toBe(`cron "${PHONE_CRON}" Europe/Berlin`);
      // Cut between fields or after a comma, never inside a field's token (as drawn: innerText
      // does not say where the browser wrapped, and the check on it could not fail).
      const text = await code.innerText();
      expect(text.replace(/\s+/g, " ")).toBe(`cron "${PHONE_CRON}"`);
      const breaks = await drawnBreaks(r.page, 'tr[data-schedule-id="realistic-cron"] code.timing');
      expect({ width, inside: breaks.filter((b) => !BETWEEN_TOKENS.test(b)) }).toEqual({ width, inside: [] });
    }
    await r.page.setViewportSize({ width: 1280, height: 900 });
    expect(pageErrors).toEqual([]);
  });

  it("offers a backfill range of at most 100 occurrences, a day for a slow schedule", async () => {
    const cases: [string, Record<string, string>, string][] = [
      // 28,800 occurrences in a day; the last 5 minutes hold 101 (both ends inclusive): the last
      // minute.
      ["every-3s", { interval: "3s" }, "PT1M"],
      ["every-30s", { interval: "30s" }, "PT30M"],
      ["every-second", { cron: "* * * * * *" }, "PT1M"],
      ["hourly-default", { interval: "1h" }, "PT24H"],
    ];
    for (const [id, timing, expected] of cases) {
      await r.ok("POST", "/v1/schedules", { schedule_id: id, workflow: "Reports", paused: true, ...timing });
      await r.open(`#/schedules/${id}`);
      await r.page.click(`button[aria-label="Backfill ${id}"]`);
      const count = r.page.locator("#backfill-count", { hasText: /^The range holds/ });
      await count.waitFor();
      const n = Number((/holds ([\d,]+) occurrence/.exec(await count.innerText())?.[1] ?? "").replace(/,/g, ""));
      expect({ id, n: n <= 100 && n > 0 }).toEqual({ id, n: true });
      const from = Date.parse(await r.page.inputValue("#backfill-from"));
      const to = Date.parse(await r.page.inputValue("#backfill-to"));
      const span = { PT1M: 60_000, PT30M: 1_800_000, PT24H: 86_400_000 }[expected];
      expect({ id, span: to - from }).toEqual({ id, span });
      // The dialog still opens on From with the caret after its text.
      expect(await r.page.evaluate("document.activeElement?.id")).toBe("backfill-from");
      await r.page.click("dialog button[value=cancel]");
      await r.page.locator("dialog").waitFor({ state: "detached" });
    }
    expect((await r.ok("GET", "/v1/executions?schedule_id=every-3s")).executions).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
