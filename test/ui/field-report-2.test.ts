/**
 * What a second tester met in Chromium (docs/ui.md) and these tests keep fixed: a cancel of an
 * execution that had already ended, the upcoming fires' windows past the first five, the ledger's
 * and the grid's colours and squares, time axes, phone cards on a schedule's page, and the smaller
 * findings.
 */
import { describe, expect, it } from "vitest";
import { haveChromium, type Json, leaseReports, type UiRig, useReportsRig } from "./browser.js";

describe.skipIf(!haveChromium)("web UI: the second tester's findings", () => {
  let r: UiRig;
  const pageErrors = useReportsRig((rig) => {
    r = rig;
  });
  const worker = { worker_id: "field-worker-2" };
  const lease = (): Promise<Json[]> => leaseReports(r, worker.worker_id);
  const statusLine = () => r.page.locator("#status p").first();
  /** Turns the page's auto-refresh off, so that what the test changes behind it stays unseen. */
  const holdStill = () => r.page.uncheck("#auto-refresh");

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
      // The ledger's picture keeps a size its labels can be read at, and scrolls in its own box (it
      // was scaled to a third: labels a few pixels tall).
      const ledgerWidth = Number(
        await r.page.evaluate(`document.querySelector("svg.ledger-chart").getBoundingClientRect().width`),
      );
      expect(ledgerWidth).toBeGreaterThanOrEqual(600);
      // Each card labels its values, as the executions page's do.
      const label = await r.page.evaluate(
        `getComputedStyle(document.querySelector("table.executions td[data-label=Status]"), "::before").content`,
      );
      expect(label).toBe('"Status"');
    } finally {
      await r.page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it("labels time axes as precisely as their ticks, inside the picture", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "half-minute", workflow: "Reports", interval: "30s" });
    await r.ok("POST", "/v1/schedules/half-minute/backfill", {
      start_at: "2026-11-15T18:48:00Z",
      end_at: "2026-11-15T18:51:00Z",
    });
    for (const width of [1280, 390]) {
      await r.page.setViewportSize({ width, height: 900 });
      await r.open("#/schedules/half-minute");
      const drawn = (await r.page.evaluate(`[...document.querySelectorAll("svg.chart")].map((svg) => {
        const box = svg.getBoundingClientRect();
        const texts = [...svg.querySelectorAll(".tick-label, .now-label")].map((t) => {
          const b = t.getBoundingClientRect();
          return { text: t.textContent, out: b.left < box.left - 0.5 || b.right > box.right + 0.5 };
        });
        return { chart: svg.getAttribute("class"), texts };
      })`)) as { chart: string; texts: { text: string; out: boolean }[] }[];
      for (const { chart, texts } of drawn) {
        expect(
          texts.filter((t) => t.out),
          `${chart} at ${width} px`,
        ).toEqual([]);
        const ticks = texts.map((t) => t.text).filter((t) => t !== "now");
        expect(new Set(ticks).size, `${chart}: ${ticks.join(" ")}`).toBe(ticks.length);
      }
      // The ledger's ticks are 30 s apart here, so they read to the second.
      const ledger = await r.page.locator("svg.ledger-chart .tick-label").allTextContents();
      expect(ledger.length).toBeGreaterThan(2);
      for (const l of ledger) expect(l).toMatch(/^\d\d:\d\d:\d\dZ$/);
    }
    await r.page.setViewportSize({ width: 1280, height: 900 });
  });

  it("ticks a ledger of a year and more on the first of months, labelled with their year", async () => {
    // A backfill in June 2025 and a trigger now (November 2026): ticks 30 and 365 days apart counted
    // from 1970 gave two labels, both "12-18", one of them past "now".
    // A schedule backfilled one day at `since`, triggered now: its ledger's tick labels.
    const ticksOf = async (id: string, since: string) => {
      await r.ok("POST", "/v1/schedules", { schedule_id: id, workflow: "Reports", interval: "1d" });
      const end = new Date(Date.parse(since) + 86_400_000).toISOString();
      await r.ok("POST", `/v1/schedules/${id}/backfill`, { start_at: since, end_at: end });
      await r.ok("POST", `/v1/schedules/${id}/trigger`, {});
      await r.open(`#/schedules/${id}`);
      return r.page.locator("svg.ledger-chart .tick-label").allTextContents();
    };
    const ledger = await ticksOf("yearly-span", "2025-06-01T00:00:00Z");
    expect(ledger.length).toBeGreaterThan(1);
    for (const l of ledger) expect(l).toMatch(/^\d{4}(-\d\d)?$/);
    expect([...ledger].sort()).toEqual(ledger);
    expect(new Set(ledger).size).toBe(ledger.length);
    expect(ledger[0]! > "2025-06").toBe(true);
    // None past now (2026-11-15 in the rig): the padding after the newest row is not labelled (over
    // three years and a half the padding reached into 2027, and "2027" was a tick).
    const longer = await ticksOf("longer-span", "2023-06-01T00:00:00Z");
    expect(longer.length).toBeGreaterThan(1);
    for (const l of [...ledger, ...longer]) expect(l <= "2026-11", l).toBe(true);
  });

  it("colours the ledger's started marks by their execution's status, as the day grid does", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "mostly-cancelled", workflow: "Reports", interval: "1h" });
    await r.ok("POST", "/v1/schedules/mostly-cancelled/backfill", {
      start_at: "2026-11-15T15:00:00Z",
      end_at: "2026-11-15T17:00:00Z",
    });
    const { executions } = await r.ok("GET", "/v1/executions?schedule_id=mostly-cancelled");
    expect(executions.length).toBe(3);
    const [running, ...rest] = executions as Json[];
    for (const e of rest) await r.ok("POST", `/v1/executions/${encodeURIComponent(e.execution_id)}/cancel`, {});
    await r.until(
      () => r.ok("GET", "/v1/executions?schedule_id=mostly-cancelled&status=CANCELLED"),
      (p: Json) => p.executions.length === 2,
      "the cancels",
    );
    await r.open("#/schedules/mostly-cancelled");
    const colour = (selector: string, property: "fill" | "background-color") =>
      r.page.evaluate(
        `getComputedStyle(document.querySelector(${JSON.stringify(selector)}))[${JSON.stringify(property)}]`,
      );
    const cancelledMarks = r.page.locator("svg.ledger-chart g.mark.status-cancelled");
    expect(await cancelledMarks.count()).toBe(2);
    expect(await colour("svg.ledger-chart g.mark.status-cancelled circle", "fill")).toBe(
      await colour(".occurrence-grid .cell.status-cancelled", "background-color"),
    );
    const runningMark = r.page.locator(`svg.ledger-chart g.mark[data-status="${running.status}"]`);
    expect(await runningMark.count()).toBe(1);
    expect(await colour("svg.ledger-chart g.mark.status-running circle", "fill")).toBe(
      await colour(".occurrence-grid .cell.status-running", "background-color"),
    );
    // Neither is drawn as a completed run.
    const completedFill = await colour('.legend li[data-legend="completed"] circle', "fill");
    expect(await colour("svg.ledger-chart g.mark.status-cancelled circle", "fill")).not.toBe(completedFill);
    const legend = async (key: string) =>
      ((await r.page.locator(`.legend li[data-legend="${key}"]`).textContent()) ?? "").replace(/\s+/g, " ").trim();
    expect(await legend("cancelled")).toBe("started, cancelled (2)");
    expect(await legend("running")).toBe("started, running (1)");
    expect(await legend("completed")).toBe("started, completed (0)");
  });

  it("draws one grid square per occurrence: a buffered one that started is one square, a missed range says its count", async () => {
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "buffering",
      workflow: "Reports",
      interval: "1h",
      overlap: "buffer_one",
    });
    const get = () => r.ok("GET", "/v1/schedules/buffering");
    const [first, second] = (await get()).next_fire_times as string[];
    await r.setClock(first as string);
    await r.until(get, (s: Json) => s.fired === 1, "the first fire");
    await r.setClock(second as string);
    await r.until(get, (s: Json) => s.buffered.length === 1, "the buffered occurrence");
    // The list says a backlog is there (it was seen only on the schedule's page).
    await r.open("#/?q=buffering");
    const backlog = r.page.locator("tr[data-schedule-id=buffering] .buffered-count");
    expect(await backlog.textContent()).toBe("1 buffered");
    expect(await backlog.getAttribute("title")).toBe(`waiting to start, oldest ${second}`);
    // The first run ends: the buffered occurrence starts.
    const task = (await lease()).find((t: Json) => t.execution_id.startsWith("buffering"));
    await r.ok("POST", `/v1/worker/tasks/${task.task_id}/complete`, { ...worker, result: {} });
    await r.until(get, (s: Json) => s.fired === 2, "the buffered start");
    // Five hours down: the occurrences meanwhile are missed, one ledger row for the range.
    const later = new Date(Date.parse(second as string) + 6 * 3_600_000).toISOString();
    await r.setClock(later);
    await r.until(
      () => r.ok("GET", "/v1/schedules/buffering/occurrences"),
      (b: Json) => (b.occurrences ?? b).some((row: Json) => row.reason === "missed" && row.count > 1),
      "the missed range",
    );
    const ledger = await r.ok("GET", "/v1/schedules/buffering/occurrences");
    const rows = (ledger.occurrences ?? ledger) as Json[];
    const range = rows.find((row) => row.reason === "missed");
    await r.open("#/schedules/buffering");
    const square = r.page.locator(`.occurrence-grid [title^="${second}"]`);
    expect(await square.count()).toBe(1);
    expect(await square.getAttribute("class")).toContain("status-running");
    expect(await square.getAttribute("title")).toBe(`${second}: running (buffered first)`);
    const missed = r.page.locator(".occurrence-grid .cell.reason-missed");
    expect(await missed.count()).toBe(1);
    expect(await missed.getAttribute("title")).toBe(`${range.count} missed, ${range.range_from} … ${range.range_to}`);
    expect((await missed.textContent())?.trim()).toBe(String(range.count));
    // One square per occurrence (a range's row counts once) across the whole grid.
    const occurrences = new Set(rows.map((row) => row.occurrence ?? `${row.range_from}/${row.range_to}`));
    expect(await r.page.locator(".occurrence-grid .cell").count()).toBe(occurrences.size);

    // A backfill runs the range's first two: they are squares of their own, and the range keeps
    // the rest (it kept all of them beside the backfill's squares).
    const hour = 3_600_000;
    const firstMissed = Date.parse(range.range_from);
    const twoOf = { start_at: range.range_from, end_at: new Date(firstMissed + hour).toISOString() };
    expect(await r.ok("POST", "/v1/schedules/buffering/backfill", twoOf)).toMatchObject({ started: 2 });
    await r.open("#/schedules/buffering");
    expect(await missed.count()).toBe(1);
    expect((await missed.textContent())?.trim()).toBe(String(range.count - 2));
    expect(await missed.getAttribute("title")).toBe(
      `${range.count - 2} missed, ${range.range_from} … ${range.range_to} (2 of the ${range.count} ran later)`,
    );
    expect(await r.page.locator(".occurrence-grid .cell").count()).toBe(occurrences.size + 2);
    // The whole range run: no missed square is left, one square per occurrence.
    await r.ok("POST", "/v1/schedules/buffering/backfill", { start_at: range.range_from, end_at: range.range_to });
    await r.open("#/schedules/buffering");
    expect(await missed.count()).toBe(0);
    expect(await r.page.locator(".occurrence-grid .cell").count()).toBe(occurrences.size - 1 + range.count);
  });

  it("draws the 24 h and 7 day windows of upcoming fires from the server, not from the next five", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "every-day", workflow: "Reports", cron: "0 9 * * *" });
    await r.ok("POST", "/v1/schedules", { schedule_id: "every-minute", workflow: "Reports", cron: "* * * * *" });
    const marks = () => r.page.locator(".upcoming-chart g.mark.fire").count();
    const pick = async (win: string) => {
      await r.page.click(`button[data-window="${win}"]`);
      await r.page.locator(`button[data-window="${win}"][aria-pressed="true"]`).waitFor();
      await r.page.locator(".upcoming-chart").waitFor();
    };
    await r.open("#/schedules/every-day");
    await pick("week");
    // Seven days from now hold seven 09:00 fires; it drew five and left two days empty.
    await r.until(marks, (n) => n === 7, "seven daily fires");
    expect(await r.page.locator(".window-capped").count()).toBe(0);

    await r.open("#/schedules/every-minute");
    await pick("day");
    // 1,440 fires in the day: the first 50 are drawn over the stretch they cover, and said so.
    await r.until(marks, (n) => n === 50, "fifty fires");
    const fires = (await r.ok("GET", "/v1/schedules/every-minute")).next_fire_times as string[];
    const last = Date.parse(fires[0] as string) + 49 * 60_000;
    const until = Number(await r.page.locator(".upcoming-chart").getAttribute("data-shown-until"));
    expect(until).toBeGreaterThanOrEqual(last);
    expect(until).toBeLessThan(last + 5 * 60_000);
    expect(await r.page.locator(".window-capped").textContent()).toBe(
      `The first 50 fires are shown, up to ${new Date(last).toISOString().replace(".000Z", "Z")}: the window holds more, so it is drawn only that far.`,
    );
    // The marks are spread over the strip, not piled at "now".
    const xs = (await r.page
      .locator(".upcoming-chart g.mark.fire circle")
      .evaluateAll((cs) => cs.map((c) => Number(c.getAttribute("cx"))))) as number[];
    expect(Math.max(...xs) - Math.min(...xs)).toBeGreaterThan(400);
    expect(pageErrors).toEqual([]);
  });

  it("says deleted on the list after a delete from the schedule's own page, and stays on a refused one", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "to-delete", workflow: "Reports", interval: "1h" });
    await r.open("#/schedules/to-delete");
    // Refused (the server is down): the page stays, with why.
    await r.page.route("**/v1/schedules/to-delete", (route) =>
      route.request().method() === "DELETE" ? route.abort("connectionrefused") : route.continue(),
    );
    await r.page.click('button[aria-label="Delete to-delete"]');
    await r.page.click("dialog button[value=ok]");
    await statusLine().filter({ hasText: "could not delete to-delete" }).waitFor();
    expect(await r.page.evaluate("location.hash")).toBe("#/schedules/to-delete");
    await r.page.unroute("**/v1/schedules/to-delete");
    await r.page.click('button[aria-label="Delete to-delete"]');
    await r.page.click("dialog button[value=ok]");
    await r.page.waitForFunction("location.hash === '#/'");
    await r.page.waitForSelector("body[data-loaded=true]");
    expect(await r.page.locator("#status").textContent()).toBe("deleted to-delete");
    expect((await r.call("GET", "/v1/schedules/to-delete")).status).toBe(404);
  });

  it("keeps the backfill dialog open with the server's refusal and the range typed", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "refused-backfill", workflow: "Reports", interval: "1h" });
    await r.open("#/schedules/refused-backfill");
    await r.page.click('button[aria-label="Backfill refused-backfill"]');
    const sent: string[] = [];
    r.page.on("request", (q) => {
      if (q.url().endsWith("/backfill")) sent.push(q.url());
    });
    // A range the dialog knows is wrong is said, not sent (it was sent and refused with a 400).
    await r.page.fill("#backfill-from", "2026-11-15T10:00:00Z");
    await r.page.fill("#backfill-to", "2026-11-15T09:00:00Z");
    await r.page.click("dialog button[value=ok]");
    const error = r.page.locator("dialog[open] #dialog-error");
    await error.filter({ hasText: "The range ends before it starts." }).waitFor();
    expect(sent).toEqual([]);
    // One the server refuses (occurrences still to come): its refusal, with the range kept.
    await r.page.fill("#backfill-to", "2026-11-16T09:00:00Z");
    await r.page.click("dialog button[value=ok]");
    await error.filter({ hasText: "INVALID" }).waitFor();
    expect(sent.length).toBe(1);
    expect(await r.page.inputValue("#backfill-from")).toBe("2026-11-15T10:00:00Z");
    expect(await r.page.inputValue("#backfill-to")).toBe("2026-11-16T09:00:00Z");
    // Typing on clears it: it was about the range before (it stayed under the new count).
    await r.page.fill("#backfill-to", "2026-11-15T11:00:00Z");
    expect((await error.textContent()) ?? "").toBe("");
    // Corrected, it starts and closes.
    await r.page.click("dialog button[value=ok]");
    await r.page.locator("dialog").waitFor({ state: "detached" });
    await statusLine().filter({ hasText: "backfill 2026-11-15T10:00:00Z" }).waitFor();
    expect((await r.ok("GET", "/v1/executions?schedule_id=refused-backfill")).executions.length).toBe(2);
  });

  it("closes the edit form unsaved with its Cancel button or Escape", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "edited", workflow: "Reports", interval: "1h" });
    await r.open("#/schedules/edited");
    await r.page.click('button[aria-label="Edit edited"]');
    await r.page.fill("#e-description", "typed, then thought better of");
    await r.page.click('#edit-form button:text-is("Cancel")');
    await r.page.locator("#edit-form").waitFor({ state: "detached" });
    expect(await r.page.evaluate("document.activeElement?.getAttribute('aria-label')")).toBe("Edit edited");
    await r.page.click('button[aria-label="Edit edited"]');
    await r.page.locator("#e-description").press("Escape");
    await r.page.locator("#edit-form").waitFor({ state: "detached" });
    expect((await r.ok("GET", "/v1/schedules/edited")).description).toBeUndefined();
  });

  it("wraps a long error on an execution's page at 390 px", async () => {
    await r.ok("POST", "/v1/executions", { execution_id: "long-error", workflow: "Reports", version: "1.0.0" });
    const task = (await lease()).find((t: Json) => t.execution_id === "long-error");
    const message = `the vendor refused the upload because ${"the batch was too large ".repeat(8)}${"x".repeat(120)}`;
    await r.ok("POST", `/v1/worker/tasks/${task.task_id}/fail`, { ...worker, error: { message }, retryable: false });
    await r.page.setViewportSize({ width: 390, height: 844 });
    try {
      await r.open("#/executions/long-error");
      const box = (await r.page.locator("#x-error").evaluate((el) => ({
        scroll: el.scrollWidth,
        client: el.clientWidth,
      }))) as { scroll: number; client: number };
      expect(box.scroll).toBeLessThanOrEqual(box.client);
      expect(await r.page.locator("#x-error").textContent()).toContain("x".repeat(120));
    } finally {
      await r.page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it("heads the upcoming fires' columns with their zones", async () => {
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "tokyo-morning",
      workflow: "Reports",
      cron: "30 9 * * *",
      timezone: "Asia/Tokyo",
    });
    await r.open("#/schedules/tokyo-morning");
    // The list comes with the window's fires (a daily cron opens on "7 days", read from the server).
    await r.page.locator("table.fire-list tbody tr").first().waitFor();
    const heads = await r.page.locator("table.fire-list thead th").allTextContents();
    expect(heads).toEqual(["UTC", "Schedule (Asia/Tokyo)", "Yours (Europe/Berlin)", "From now"]);
    const first = r.page.locator("table.fire-list tbody tr").first();
    expect(await first.locator("td").first().textContent()).toMatch(/^2026-11-1\dT00:30:00Z$/);
    expect(await first.locator("td.zone").textContent()).toMatch(/09:30:00 GMT\+9/);
    expect(await first.locator("td.local").textContent()).toMatch(/01:30:00 CET/);
  });
});
