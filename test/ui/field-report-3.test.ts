/**
 * What a third round of field reports met in Chromium (docs/ui.md) and these tests keep fixed: the
 * upcoming strip drawing the past when the first fire was already before the browser's now, the day
 * grid's skip colours against the ledger picture's, and manual triggers in the day grid.
 */
import { describe, expect, it } from "vitest";
import { haveChromium, type Json, leaseReports, type UiRig, useReportsRig } from "./browser.js";

describe.skipIf(!haveChromium)("web UI: the third round of findings", () => {
  let r: UiRig;
  const pageErrors = useReportsRig((rig) => {
    r = rig;
  });

  it("starts the 24 h and 7 day strips at now, leaving out fires already past", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "two-seconds", workflow: "Reports", interval: "2s" });
    const fires = (await r.ok("GET", "/v1/schedules/two-seconds")).next_fire_times as string[];
    // The browser reads the page seconds after the server did: its first two fires are past there.
    const now = Date.parse(fires[0] as string) + 3_000;
    await r.page.clock.setFixedTime(new Date(now));
    try {
      await r.open("#/schedules/two-seconds");
      await r.page.uncheck("#auto-refresh");
      // The table lists no fire "ago": the next five from now, as the strip draws them (read from
      // the server, since two of the five the page knows are past).
      await r.page.locator("table.fire-list caption", { hasText: "The next 5 fires" }).waitFor();
      const fromNow = await r.page.locator("table.fire-list tbody td:last-child").allTextContents();
      expect(fromNow.length).toBe(5);
      for (const t of fromNow) expect(t).not.toContain("ago");
      for (const win of ["day", "week"]) {
        await r.page.click(`button[data-window="${win}"]`);
        await r.page.locator(`button[data-window="${win}"][aria-pressed="true"]`).waitFor();
        const marks = r.page.locator(".upcoming-chart g.mark.fire");
        await r.until(
          () => marks.count(),
          (n) => n === 50,
          `fifty fires in ${win}`,
        );
        // The strip starts at now (it started 3.4 h before the first fire for 7 days).
        const desc = (await r.page.locator(".upcoming-chart desc").textContent()) ?? "";
        expect(desc).toContain(`between ${new Date(now).toISOString()} and `);
        const titles = await marks.locator("title").allTextContents();
        for (const t of titles) expect(Date.parse(/: (\S+)/.exec(t)?.[1] ?? "")).toBeGreaterThanOrEqual(now);
        // Fifty fires 2 s apart are spread over the strip, with the note, not crushed into a dot.
        const xs = (await r.page
          .locator(".upcoming-chart g.mark.fire circle")
          .evaluateAll((cs) => cs.map((c) => Number(c.getAttribute("cx"))))) as number[];
        expect(Math.max(...xs) - Math.min(...xs)).toBeGreaterThan(400);
        expect(await r.page.locator(".window-capped").count()).toBe(1);
      }
    } finally {
      await r.page.clock.setFixedTime(new Date(r.clock.now()));
    }
    expect(pageErrors).toEqual([]);
  });

  it("draws the next five from the server when fires the page knows have passed", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "one-second", workflow: "Reports", interval: "1s" });
    const fires = (await r.ok("GET", "/v1/schedules/one-second")).next_fire_times as string[];
    // The page stayed open: the browser is past three of the five fires the schedule named.
    const now = Date.parse(fires[2] as string) + 500;
    await r.page.clock.setFixedTime(new Date(now));
    try {
      await r.open("#/schedules/one-second");
      await r.page.uncheck("#auto-refresh");
      await r.page.click('button[data-window="fit"]');
      await r.page.locator('button[data-window="fit"][aria-pressed="true"]').waitFor();
      const marks = r.page.locator(".upcoming-chart g.mark.fire");
      await r.until(
        () => marks.count(),
        (n) => n === 5,
        "five fires drawn after three known ones passed",
      );
      const titles = await marks.locator("title").allTextContents();
      for (const t of titles) expect(Date.parse(/: (\S+)/.exec(t)?.[1] ?? "")).toBeGreaterThanOrEqual(now);
    } finally {
      await r.page.clock.setFixedTime(new Date(r.clock.now()));
    }
    expect(pageErrors).toEqual([]);
  });

  it("offers no Pause on an ended schedule, in the list and on its page", async () => {
    const endAt = new Date(r.clock.now() + 90_000).toISOString();
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "ends-soon",
      workflow: "Reports",
      interval: "1m",
      end_at: endAt,
    });
    await r.setClock(new Date(r.clock.now() + 120_000).toISOString());
    await r.until(
      () => r.ok("GET", "/v1/schedules/ends-soon"),
      (s: Json) => s.state === "ended",
      "the schedule ended",
    );
    // No fire to list: the table of the next fires was its headers alone.
    await r.open("#/schedules/ends-soon");
    await r.page.locator("#upcoming-heading").waitFor();
    expect(await r.page.locator("table.fire-list").count()).toBe(0);
    for (const page of ["#/", "#/schedules/ends-soon"]) {
      await r.open(page);
      const buttons =
        page === "#/"
          ? r.page.locator("tr[data-schedule-id=ends-soon] .actions button")
          : r.page.locator(".actions button");
      await buttons.first().waitFor();
      const names = await buttons.allTextContents();
      expect(names).toContain("Trigger");
      expect(names).not.toContain("Pause");
    }
    expect(pageErrors).toEqual([]);
  });

  it("draws no fire past the last run of max_runs in the 24 h and 7 day windows", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "two-runs", workflow: "Reports", interval: "1h", max_runs: 2 });
    const sch = await r.ok("GET", "/v1/schedules/two-runs");
    expect({ left: sch.remaining_runs, listed: sch.next_fire_times.length }).toEqual({ left: 2, listed: 2 });
    await r.open("#/schedules/two-runs");
    await r.page.uncheck("#auto-refresh");
    const marks = r.page.locator(".upcoming-chart g.mark.fire");
    for (const win of ["day", "week"]) {
      await r.page.click(`button[data-window="${win}"]`);
      await r.page.locator(`button[data-window="${win}"][aria-pressed="true"]`).waitFor();
      // It drew 24 fires and "more later" for the day, 50 and "the window holds more" for the week.
      await r.until(
        () => marks.count(),
        (n) => n === 2,
        `the two runs left in ${win}`,
      );
      expect(await r.page.locator(".window-capped").count()).toBe(0);
    }
    expect(await r.page.locator("table.fire-list tbody tr").count()).toBe(2);
    expect(await r.page.locator(".upcoming-note").textContent()).toBe("max_runs: 2 runs left, then it ends.");
    expect(pageErrors).toEqual([]);
  });

  it("lists a jittered schedule's pending fire at the time it is due, with its occurrence", async () => {
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "jittered",
      workflow: "Reports",
      interval: "1m",
      jitter: "50s",
    });
    const sch = await r.ok("GET", "/v1/schedules/jittered");
    const [occurrence] = sch.next_fire_times as string[];
    const due = sch.next_fire_at as string;
    expect(Date.parse(due)).toBeGreaterThan(Date.parse(occurrence as string));
    // The browser is past the occurrence but before its jittered fire: the fire is still to come.
    const now = Math.floor((Date.parse(occurrence as string) + Date.parse(due)) / 2);
    await r.page.clock.setFixedTime(new Date(now));
    try {
      await r.open("#/schedules/jittered");
      await r.page.uncheck("#auto-refresh");
      const rows = r.page.locator("table.fire-list tbody tr");
      await rows.first().waitFor();
      // It listed four, from the second occurrence on.
      expect(await rows.count()).toBe(5);
      const first = await rows.first().locator("td").first().innerText();
      expect(first).toBe(`${due}\noccurrence ${occurrence}`);
      expect(await rows.first().locator("td").last().innerText()).toMatch(/^in /);
      const marks = r.page.locator(".upcoming-chart g.mark.fire");
      await r.until(
        () => marks.count(),
        (n) => n === 5,
        "five fires in the strip",
      );
    } finally {
      await r.page.clock.setFixedTime(new Date(r.clock.now()));
    }
    expect(pageErrors).toEqual([]);
  });

  it("marks a schedule whose cancelled run's compensation failed as in trouble in the list", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "refunds", workflow: "Reports", interval: "1h" });
    const { execution_id: id } = await r.ok("POST", "/v1/schedules/refunds/trigger");
    const task = (await leaseReports(r, "comp-worker")).find((t: Json) => t.execution_id === id).task_id;
    const worker = { worker_id: "comp-worker" };
    await r.ok("POST", `/v1/worker/tasks/${task}/steps`, {
      ...worker,
      step: "charge",
      seq: 1,
      result: {},
      compensable: true,
    });
    await r.ok("POST", `/v1/executions/${encodeURIComponent(id)}/cancel`, { reason: "customer left" });
    await r.ok("POST", `/v1/worker/tasks/${task}/compensating`, worker);
    await r.ok("POST", `/v1/worker/tasks/${task}/compensations`, {
      ...worker,
      step: "charge",
      error: { message: "refund service down", type: "PaymentError" },
    });
    await r.ok("POST", `/v1/worker/tasks/${task}/cancelled`, worker);
    await r.open("#/?q=refunds");
    const row = r.page.locator("tr[data-schedule-id=refunds]");
    await row.waitFor();
    // A grey CANCELLED and nothing else: what the run had done was not undone, and the list hid it.
    expect(await row.getAttribute("class")).toContain("failing");
    expect(await row.locator(".compensation-failed").textContent()).toBe(
      "customer left; compensation failed: charge: refund service down",
    );
    expect(pageErrors).toEqual([]);
  });

  it("colours a skipped occurrence's grid square by its reason, as the ledger picture does", async () => {
    // Buffer full: one running, one buffered, the third skipped. Concurrency: two schedules share a key.
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "buf",
      workflow: "Reports",
      interval: "1h",
      overlap: "buffer_one",
    });
    const keyed = (id: string) =>
      r.ok("POST", "/v1/schedules", { schedule_id: id, workflow: "Reports", interval: "1h", concurrency_key: "k" });
    await keyed("key-a");
    const first = Date.parse((await r.ok("GET", "/v1/schedules/buf")).next_fire_times[0]);
    const skips = async (id: string) =>
      ((await r.ok("GET", `/v1/schedules/${id}/occurrences`)).occurrences as Json[]).filter(
        (o) => o.kind === "skipped",
      );
    for (let i = 0; i < 3; i++) {
      await r.setClock(new Date(first + i * 3_600_000).toISOString());
      await r.until(
        () => r.ok("GET", "/v1/schedules/buf/occurrences"),
        (b: Json) => b.occurrences.length === i + 1,
        `fire ${i + 1}`,
      );
      // Created once key-a's run holds the key, key-b's first occurrence is skipped for it.
      if (i === 0) await keyed("key-b");
    }
    expect((await skips("buf")).map((o) => o.reason)).toEqual(["buffer_full"]);
    await r.until(
      () => skips("key-b"),
      (rows) => rows.some((o) => o.reason === "concurrency"),
      "key-b skipped for the key",
    );
    const colour = (selector: string, property: "fill" | "background-color") =>
      r.page.evaluate(
        `getComputedStyle(document.querySelector(${JSON.stringify(selector)}))[${JSON.stringify(property)}]`,
      );
    const drawn = async (reason: string) => ({
      grid: await colour(`.occurrence-grid .cell.reason-${reason}`, "background-color"),
      ledger: await colour(
        `svg.ledger-chart g.mark.reason-${reason} path, svg.ledger-chart g.mark.reason-${reason} rect`,
        "fill",
      ),
    });
    await r.open("#/schedules/buf");
    const full = await drawn("buffer_full");
    expect(full.grid).toBe(full.ledger);
    await r.open("#/schedules/key-b");
    const conc = await drawn("concurrency");
    expect(conc.grid).toBe(conc.ledger);
    // Neither is the overlap amber any more.
    expect(new Set([full.grid, conc.grid, "rgb(208, 135, 0)"]).size).toBe(3);
    expect(pageErrors).toEqual([]);
  });

  it("places and titles a manual trigger's grid square by the time it was made", async () => {
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "by-hand",
      workflow: "Reports",
      interval: "1h",
      overlap: "allow",
    });
    const day = new Date(r.clock.now()).toISOString().slice(0, 10);
    await r.ok("POST", "/v1/schedules/by-hand/backfill", { start_at: `${day}T00:00:00Z`, end_at: `${day}T02:00:00Z` });
    await r.ok("POST", "/v1/schedules/by-hand/trigger", {});
    const rows = (await r.ok("GET", "/v1/schedules/by-hand/occurrences")).occurrences as Json[];
    const manual = rows.find((o) => o.occurrence === null);
    expect(manual?.kind).toBe("started");
    expect(manual.recorded_at.slice(0, 10)).toBe(day);
    await r.open("#/schedules/by-hand");
    const titles = await r.page
      .locator(`.occurrence-grid tr[data-day="${day}"] .cell`)
      .evaluateAll((cs) => cs.map((c) => c.getAttribute("title")));
    expect(titles.length).toBe(4);
    // Last in its day, as it came last; it was first and titled "undefined … undefined: running".
    expect(titles[3]?.startsWith(`manual trigger at ${manual.recorded_at}: `)).toBe(true);
    expect(titles.join(" ")).not.toContain("undefined");
    expect(titles.slice(0, 3).map((t) => t?.slice(0, 21))).toEqual(
      ["00", "01", "02"].map((hour) => `${day}T${hour}:00:00Z:`),
    );
    // The ledger picture titles its mark the same way (it said "started: -").
    const marks = await r.page.locator(".ledger-chart g.mark title").allTextContents();
    const trigger = marks.filter((t) => t.includes("manual trigger"));
    expect(trigger.length).toBe(1);
    expect(trigger[0]?.startsWith(`started (manual trigger): ${manual.recorded_at}\nlocal: `)).toBe(true);
    expect(marks.join(" ")).not.toContain(": -");
    expect(pageErrors).toEqual([]);
  });
});
