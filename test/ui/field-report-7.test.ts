/**
 * What a seventh tester met: a status line pushed the schedules list down under the pointer, so a
 * second click on the same spot triggered another schedule; a running execution showed no elapsed
 * time; the backfill dialog said "more than 49" and started 879; the list cut its status text to a
 * few characters; a long workflow name made a phone page scroll sideways; the day grid did not say
 * it shows only 14 days; close fires overprinted their labels; ids broke mid-token at a glance.
 */

import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { haveChromium, leaseReports, SHOTS, type UiRig, useReportsRig } from "./browser.js";

// The DOM names of the code page.evaluate runs in the browser: the compiler here has no DOM lib
// (tsconfig.json types Node), so they are declared for this file only.
// biome-ignore lint/suspicious/noExplicitAny: browser globals, typed by the browser
declare const document: any;
// biome-ignore lint/suspicious/noExplicitAny: browser globals, typed by the browser
declare const getComputedStyle: any;
// biome-ignore lint/suspicious/noExplicitAny: browser globals, typed by the browser
declare const NodeFilter: any;
type HTMLElement = { clientWidth: number };
type Text = { data: string };

describe.skipIf(!haveChromium)("web UI: a tester's seventh report", () => {
  let r: UiRig;
  const pageErrors = useReportsRig((rig) => {
    r = rig;
  });

  it("keeps the rows where they are when an action's status appears, so a second click hits the same row", async () => {
    for (const id of ["shift-a", "shift-b", "shift-c"]) {
      await r.ok("POST", "/v1/schedules", { schedule_id: id, workflow: "Reports", interval: "1h" });
    }
    // A live worker polls Reports, so the row itself does not change (no "waiting" line).
    await leaseReports(r, "shift-worker");
    await r.open("#/?q=shift-");
    const posts: string[] = [];
    r.page.on("request", (req) => {
      if (req.method() === "POST") posts.push(new URL(req.url()).pathname);
    });
    const row = r.page.locator('tr[data-schedule-id="shift-b"]');
    // A refresh redraws the rows: a box read while the old row is swapped for the new one is null.
    const rowBox = () =>
      r.until(
        () => row.boundingBox(),
        (b) => b !== null,
        "the row's box",
      );
    const rowBefore = await rowBox();
    const button = await row.locator('button[aria-label="Trigger shift-b"]').boundingBox();
    if (rowBefore === null || button === null) throw new Error("no row");
    const x = button.x + button.width / 2;
    const y = button.y + button.height / 2;
    await r.page.mouse.click(x, y);
    await r.page.locator("#status p", { hasText: "shift-b" }).waitFor();
    expect(await rowBox()).toEqual(rowBefore);
    // The button is held for a double click's time after a click (field-report-8).
    const ready = r.page.locator('button[aria-label="Trigger shift-b"]:not([aria-disabled])');
    await ready.waitFor();
    await r.page.mouse.click(x, y);
    await r.until(
      async () => posts.length,
      (n) => n === 2,
      "the second trigger",
    );
    expect(posts).toEqual(["/v1/schedules/shift-b/trigger", "/v1/schedules/shift-b/trigger"]);
    // The button does nothing while its request is in flight (field-report-8): the next click
    // waits for the second trigger's answer.
    await r.page.locator("#status p", { hasText: "not started" }).waitFor();
    await ready.waitFor();
    // Two lines at once (a refusal while the server is down, and the refresh failing) do not move
    // the rows either.
    await r.page.route("**/v1/**", (route) => route.abort("connectionrefused"));
    await r.page.mouse.click(x, y);
    await r.until(
      () => r.page.locator("#status p").count(),
      (n) => n === 2,
      "the outage lines",
    );
    expect(await rowBox()).toEqual(rowBefore);
    const refusal = r.page.locator("#status p").first();
    expect(await refusal.getAttribute("title")).toMatch(/^could not trigger shift-b: UNAVAILABLE/);
    await r.page.unroute("**/v1/**");
    expect(pageErrors).toEqual([]);
  });

  it("keeps a row's buttons in place when its trigger brings a 'waiting' line", async () => {
    await r.ok("POST", "/v1/workflows", { name: "Lonely", version: "1.0.0" });
    for (const id of ["lonely-a", "lonely-b", "lonely-c"]) {
      await r.ok("POST", "/v1/schedules", { schedule_id: id, workflow: "Lonely", interval: "1h" });
    }
    await r.page.setViewportSize({ width: 1280, height: 900 });
    await r.open("#/?q=lonely-");
    const posts: string[] = [];
    r.page.on("request", (req) => {
      if (req.method() === "POST" && req.url().includes("lonely")) posts.push(new URL(req.url()).pathname);
    });
    const trigger = r.page.locator('button[aria-label="Trigger lonely-b"]');
    const box = () =>
      r.until(
        () => trigger.boundingBox(),
        (b) => b !== null,
        "the button's box",
      );
    const before = await box();
    if (before === null) throw new Error("no button");
    await r.page.mouse.click(before.x + before.width / 2, before.y + before.height / 2);
    // No worker polls Lonely: the row says so under its outcome. That line widened the outcome
    // column and moved the actions 40 px right, so the same spot was the row's Pause button.
    await r.page.locator('tr[data-schedule-id="lonely-b"] .no-worker').waitFor();
    expect(await box()).toEqual(before);
    await r.page.locator('button[aria-label="Trigger lonely-b"]:not([aria-disabled])').waitFor();
    await r.page.mouse.click(before.x + before.width / 2, before.y + before.height / 2);
    await r.until(
      async () => posts.length,
      (n) => n === 2,
      "the second trigger",
    );
    expect(posts).toEqual(["/v1/schedules/lonely-b/trigger", "/v1/schedules/lonely-b/trigger"]);
    expect(pageErrors).toEqual([]);
  });

  it("shows a running execution's elapsed time, live, and when a scheduled one was due and how late it started", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "late", workflow: "Reports", cron: "0 * * * *" });
    // A backfill starts a past occurrence now: 1 h 51 min after it was due.
    const due = "2026-11-15T17:00:00Z";
    await r.ok("POST", "/v1/schedules/late/backfill", { start_at: due, end_at: due });
    const [e] = (await r.ok("GET", "/v1/executions?schedule_id=late")).executions;
    expect(e.status).toBe("RUNNING");
    expect(e.trigger.scheduled_for).toBe(due);
    // A worker takes it: until then it is queued, not started (field-report-8).
    await leaseReports(r, "late-worker");
    await r.open(`#/executions/${encodeURIComponent(e.execution_id)}`);
    const fact = (name: string) =>
      r.page.locator("dl.settings dt", { hasText: new RegExp(`^${name}$`) }).locator("xpath=following-sibling::dd[1]");
    expect(await fact("Scheduled for").locator("time").getAttribute("datetime")).toBe(e.trigger.scheduled_for);
    expect(Date.parse(e.started_at) - Date.parse(due)).toBe(6_660_347);
    expect(await fact("Started").innerText()).toContain("started 1h51m after its scheduled time");
    const elapsed = () => fact("Elapsed").innerText();
    expect(await elapsed()).toMatch(/^\d+ms so far \(running\)$/);
    // The browser's clock moves on and the text follows, without a reload.
    await r.page.clock.setFixedTime(new Date(Date.parse(e.started_at) + 6_200));
    await r.until(elapsed, (t) => t === "6.2s so far (running)", "the elapsed time to move");
    expect(pageErrors).toEqual([]);
  });

  it("counts every occurrence of a backfill's range before it starts, and shows the runs that have not ended", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "bulk", workflow: "Reports", cron: "0 * * * *" });
    await r.open("#/schedules/bulk");
    await r.page.click('button[aria-label="Backfill bulk"]');
    await r.page.locator("dialog[open]").waitFor();
    const said = () => r.page.locator("#backfill-count").textContent();
    // 84 days of hours: past the dialog's count, which says so and that all will start.
    await r.page.fill("#backfill-from", "2026-08-01T00:00:00Z");
    await r.page.fill("#backfill-to", "2026-10-24T00:00:00Z");
    await r.until(said, (t) => (t ?? "").startsWith("The range holds more"), "the capped count");
    expect(await said()).toBe(
      "The range holds more than 1,000 occurrences (the dialog counts up to 1,000); Backfill starts all of them.",
    );
    // 36 days and 15 hours of hours: 879, the number it starts (it said "more than 49").
    await r.page.fill("#backfill-from", "2026-10-01T00:00:00Z");
    await r.page.fill("#backfill-to", "2026-11-06T14:00:00Z");
    await r.until(said, (t) => t === "The range holds 879 occurrences.", "the count");
    await r.page.click('dialog[open] button[value="ok"]');
    await r.page.locator("#status p", { hasText: "879 occurrences, 879 started" }).waitFor();
    // Nothing polls Reports: all 879 wait, and the page says so where it said "last outcome -".
    const open = r.page.locator(".glance-open");
    await open.waitFor();
    // The page behind refreshes during the backfill (e41dedb): a refresh read mid-way may show
    // 800 first; the one after the answer shows them all.
    await r.until(
      () => open.locator("strong").innerText(),
      (t) => t === "879",
      "all 879 counted",
    );
    expect(await open.locator("a").innerText()).toBe("executions running or waiting for a worker");
    expect(await open.locator("a").getAttribute("href")).toBe("#/executions?schedule_id=bulk&status=RUNNING");
    // The ledger's 879 rows are more than the page reads (500): it said "every decision (500 rows)".
    expect(await r.page.locator("#ledger-heading + p").textContent()).toBe(
      "The newest 500 rows the scheduler recorded for this schedule. Hover a mark for its details.",
    );
    expect(pageErrors).toEqual([]);
  });

  it("lets the list's trouble lines use the row's width at 1280 px, wrapped, whole in their title", async () => {
    await r.ok("POST", "/v1/workflows", { name: "Strict", version: "1.0.0" });
    await r.ok("POST", "/v1/schedules", { schedule_id: "trouble-refused", workflow: "Strict", interval: "1m" });
    await r.ok("POST", "/v1/workflows", {
      ...{ name: "Strict", version: "2.0.0" },
      input_schema: { type: "object", required: ["must"] },
    });
    const get = () => r.ok("GET", "/v1/schedules/trouble-refused");
    await r.setClock(new Date(r.clock.now() + 60_000).toISOString());
    await r.until(get, (s) => typeof s.last_error === "string", "the refused start");
    await r.ok("POST", "/v1/workflows", { name: "Orphan", version: "1.0.0" });
    await r.ok("POST", "/v1/schedules", { schedule_id: "trouble-waiting", workflow: "Orphan", interval: "1h" });
    await r.ok("POST", "/v1/schedules/trouble-waiting/trigger", {});
    // A row as wide as they get beside them: a long id and zone, a jitter, a pause note.
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "trouble-wide-nightly-reconciliation-of-every-regional-ledger",
      workflow: "Reports",
      cron: "30 2 * * 1-5",
      timezone: "America/Argentina/Buenos_Aires",
      jitter: "5s",
      description: "Reconciles every regional ledger against the bank statements of the night before",
    });
    await r.ok("POST", "/v1/schedules/trouble-wide-nightly-reconciliation-of-every-regional-ledger/pause", {
      note: "paused while the bank migrates its statement export to the new format",
    });
    await r.page.setViewportSize({ width: 1280, height: 900 });
    await r.open("#/?q=trouble-");
    for (const selector of [
      'tr[data-schedule-id="trouble-refused"] .start-error',
      'tr[data-schedule-id="trouble-waiting"] .no-worker',
    ]) {
      const line = r.page.locator(selector);
      await line.waitFor();
      const fit = await line.evaluate((e) => ({
        cut: e.scrollWidth > e.clientWidth || e.scrollHeight > e.clientHeight,
        width: e.getBoundingClientRect().width,
        text: e.textContent,
        title: e.getAttribute("title"),
      }));
      // Cut at 14 characters it read "not starting: in…" and "waiting: no live…".
      expect(fit.cut, `${selector}: ${fit.text}`).toBe(false);
      expect(fit.width).toBeGreaterThan(120);
      expect(fit.title).not.toBeNull();
      expect(fit.text).toContain(fit.title);
    }
    const wrap = await r.page
      .locator("table.schedules")
      .evaluate((t) => [t.getBoundingClientRect().width, (t.parentElement as HTMLElement).clientWidth]);
    expect(wrap[0]).toBeLessThanOrEqual(wrap[1]);
    const table = await r.page.locator("table.schedules").boundingBox();
    for (const b of await r.page.locator("table.schedules td.actions-cell button").all()) {
      const box = await b.boundingBox();
      expect(box !== null && table !== null && box.x + box.width <= table.x + table.width).toBe(true);
    }
    await r.page.screenshot({ path: join(SHOTS, "list-trouble-1280.png") });
    expect(pageErrors).toEqual([]);
  });

  it("keeps phone pages inside the window with a long workflow name", async () => {
    const name = "CustomerLedgerReconciliationAndInvoiceExportPipelineV";
    expect(name.length).toBe(53);
    await r.ok("POST", "/v1/workflows", { name, version: "1.0.0" });
    await r.ok("POST", "/v1/schedules", { schedule_id: "wide-name", workflow: name, interval: "1h" });
    await r.ok("POST", "/v1/schedules/wide-name/trigger", {});
    const pages = ["#/", "#/workflows", `#/workflows/${name}`, "#/executions", "#/schedules/wide-name"];
    for (const width of [320, 390]) {
      await r.page.setViewportSize({ width, height: 800 });
      for (const hash of pages) {
        await r.open(hash);
        // What lies past the right edge, unless a box that scrolls or clips holds it inside the window.
        const out = await r.page.evaluate((w) => {
          const escaped: string[] = [];
          for (const el of document.querySelectorAll("body *")) {
            const b = el.getBoundingClientRect();
            if (b.width <= 1 || b.right <= w + 1) continue;
            let held = false;
            for (let a = el.parentElement; a !== null && a !== document.body; a = a.parentElement) {
              const ox = getComputedStyle(a).overflowX;
              if (ox !== "visible" && a.getBoundingClientRect().right <= w + 1) held = true;
            }
            if (!held)
              escaped.push(
                `${el.tagName.toLowerCase()}#${el.id}.${el.parentElement?.className} right=${Math.round(b.right)}`,
              );
          }
          return { escaped, scroll: document.documentElement.scrollWidth };
        }, width);
        expect({ width, hash, ...out }).toEqual({ width, hash, escaped: [], scroll: width });
      }
    }
    await r.page.setViewportSize({ width: 1280, height: 900 });
    expect(pageErrors).toEqual([]);
  });

  it("says the day grid shows only the newest 14 days", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "noon", workflow: "Reports", cron: "0 12 * * *" });
    await r.ok("POST", "/v1/schedules/noon/backfill", {
      start_at: "2026-10-20T00:00:00Z",
      end_at: "2026-11-08T23:00:00Z",
    });
    await r.open("#/schedules/noon");
    const heading = r.page.locator(".grid-wrap h3");
    expect(await heading.innerText()).toBe(
      "By day (UTC), one square per occurrence: the newest 14 days with occurrences (6 older days are not shown)",
    );
    expect(await r.page.locator(".occurrence-grid tr").count()).toBe(14);
    await r.ok("POST", "/v1/schedules", { schedule_id: "noon-short", workflow: "Reports", cron: "0 12 * * *" });
    await r.ok("POST", "/v1/schedules/noon-short/backfill", {
      start_at: "2026-11-06T00:00:00Z",
      end_at: "2026-11-08T23:00:00Z",
    });
    await r.open("#/schedules/noon-short");
    expect(await heading.innerText()).toBe("By day (UTC), one square per occurrence: all 3 days with occurrences");
  });

  it("gives fires 18 ms apart one label on the upcoming strip, where their numbers overprinted", async () => {
    await r.open("#/");
    for (const width of [1280, 390]) {
      await r.page.setViewportSize({ width, height: 800 });
      // A string, not a function: the test runner would rewrite a function's import().
      const labels: { text: string; left: number; right: number }[] = await r.page.evaluate(`(async () => {
        const { upcomingStrip } = await import("/charts.js");
        const now = Date.parse("2026-11-15T18:51:00Z");
        const at = (ms) => new Date(now + ms).toISOString();
        // A retry fire, the next occurrence 18 ms after it, and one an hour later.
        const svg = upcomingStrip([at(3600000), at(3600018), at(7200000)], "day", now);
        document.querySelector("main").append(svg);
        const out = [...svg.querySelectorAll("text.mark-label")].map((t) => {
          const b = t.getBoundingClientRect();
          return { text: t.textContent, left: b.left, right: b.right };
        });
        svg.remove();
        return out;
      })()`);
      expect(labels.map((l) => l.text)).toEqual(["1–2", "3"]);
      const [a, b] = labels;
      if (a === undefined || b === undefined) throw new Error("labels");
      expect(a.right).toBeLessThan(b.left);
    }
    await r.page.setViewportSize({ width: 1280, height: 900 });
    expect(pageErrors).toEqual([]);
  });

  it("keeps ids and instants whole at a glance at 1280 px, and a multi-line error's lines", async () => {
    await r.ok("POST", "/v1/workflows", { name: "Glance", version: "1.0.0" });
    await r.ok("POST", "/v1/schedules", { schedule_id: "nightly-orders", workflow: "Glance", cron: "0 1 * * *" });
    await r.ok("POST", "/v1/schedules/nightly-orders/backfill", {
      start_at: "2026-11-15T01:00:00Z",
      end_at: "2026-11-15T01:00:00Z",
    });
    const worker = { worker_id: "glance-worker" };
    const { tasks } = await r.ok("POST", "/v1/worker/poll", {
      ...worker,
      workflows: [{ name: "Glance", version: "1.0.0", max_attempts: 1, backoff_ms: 0 }],
      max_tasks: 1,
      wait_ms: 0,
    });
    const message = "upload refused\n  status: 413\n  body: batch too large";
    await r.ok("POST", `/v1/worker/tasks/${tasks[0].task_id}/fail`, {
      ...worker,
      error: { message },
      retryable: false,
    });
    await r.page.setViewportSize({ width: 1280, height: 900 });
    await r.open("#/schedules/nightly-orders");
    const glance = r.page.locator("section.glance");
    /** The lines a piece of an element's text is drawn on (distinct tops of its boxes). */
    const linesOf = (selector: string, piece: string) =>
      glance.locator(selector).evaluate((e, text) => {
        const walker = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
        const nodes: Text[] = [];
        for (let n = walker.nextNode(); n !== null; n = walker.nextNode()) nodes.push(n as Text);
        const whole = nodes.map((n) => n.data).join("");
        const start = whole.indexOf(text);
        const range = document.createRange();
        let at = 0;
        for (const n of nodes) {
          const end = at + n.data.length;
          if (start >= at && start < end) range.setStart(n, start - at);
          if (start + text.length > at && start + text.length <= end) range.setEnd(n, start + text.length - at);
          at = end;
        }
        return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
      }, piece);
    const link = 'a[href^="#/executions/"]';
    expect(await glance.locator(link).textContent()).toBe("nightly-orders:2026-11-15T01:00:00Z");
    expect(await linesOf(link, "2026-11-15T01:00:00Z")).toBe(1);
    expect(await linesOf(".zones time", "2026-11-16T01:00:00Z")).toBe(1);
    // Nothing in the box runs past its column.
    const over = await glance.evaluate((g) =>
      [...g.children].filter((c) => c.scrollWidth > c.clientWidth + 1).map((c) => c.textContent),
    );
    expect(over).toEqual([]);
    expect(await glance.locator(".glance-error").innerText()).toBe(message);
  });

  it("folds the list's filters behind a button on a phone, where they filled the first screen", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "phone-first", workflow: "Reports", interval: "1h" });
    await r.page.setViewportSize({ width: 390, height: 844 });
    await r.open("#/");
    const toggle = r.page.locator("#filters-toggle");
    expect(await toggle.isVisible()).toBe(true);
    expect(await toggle.getAttribute("aria-expanded")).toBe("false");
    expect(await r.page.locator("#filter-state").isVisible()).toBe(false);
    // The search and the first schedule are on the first screen.
    expect(await r.page.locator("#search").isVisible()).toBe(true);
    const firstRow = await r.page.locator("table.schedules tbody tr").first().boundingBox();
    expect(firstRow?.y ?? Infinity).toBeLessThan(844);
    await toggle.click();
    expect(await toggle.getAttribute("aria-expanded")).toBe("true");
    await r.page.selectOption("#filter-state", "active");
    expect(await toggle.innerText()).toBe("Filters and sort (1 set)");
    expect(await r.page.locator("#filter-state").isVisible()).toBe(true);
    await r.page.setViewportSize({ width: 1280, height: 900 });
    await r.open("#/");
    expect(await toggle.isVisible()).toBe(false);
    expect(await r.page.locator("#filter-state").isVisible()).toBe(true);
    expect(pageErrors).toEqual([]);
  });
});
