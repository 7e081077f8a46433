/**
 * What a tester met in Chromium against a busy server (docs/ui.md) and these tests keep fixed: an
 * edit of a schedule that fires meanwhile saves (and one changed by someone else says what), the
 * ledger's colours past 200 executions, the list's actions at 1280 px with rows as wide as they
 * get, the backfill dialog's safe start and its count, an action while the server is down, relative
 * times that count on while it is, gone workers, a timed-out run and an unknown page.
 */
import type { ConsoleMessage } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium, type Json, leaseReports, startRig, type UiRig } from "./browser.js";

/** Every action button of the list outside its table's visible box, and the table's overflow (runs in the page). */
const CLIPPED = `(() => {
  const wrap = document.querySelector(".list-view .table-wrap").getBoundingClientRect();
  const table = document.querySelector("table.schedules").getBoundingClientRect();
  const out = [];
  for (const b of document.querySelectorAll("table.schedules .actions button")) {
    const r = b.getBoundingClientRect();
    if (r.right > wrap.right + 1 || r.left < wrap.left - 1) out.push(b.getAttribute("aria-label"));
  }
  const lines = Math.max(...[...document.querySelectorAll("table.schedules .actions")].map((a) =>
    new Set([...a.querySelectorAll("button")].map((b) => Math.round(b.getBoundingClientRect().top))).size));
  return { clipped: out, table: Math.round(table.width), wrap: Math.round(wrap.width), lines, page: document.documentElement.scrollWidth };
})()`;

describe.skipIf(!haveChromium)("web UI: the tester's findings", () => {
  let r: UiRig;
  const consoleErrors: string[] = [];
  const pageErrors: string[] = [];
  const worker = { worker_id: "field-worker" };
  const lease = (): Promise<Json[]> => leaseReports(r, worker.worker_id);
  const status = async () => ((await r.page.locator("#status").textContent()) ?? "").trim();
  const formError = async () => ((await r.page.locator("#e-form-error").textContent()) ?? "").trim();

  beforeAll(async () => {
    r = await startRig();
    r.page.on("console", (m: ConsoleMessage) => {
      // Chromium's own line for a 4xx the page handles (a 412 here) is no page code's (docs/ui.md).
      if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) consoleErrors.push(m.text());
    });
    r.page.on("pageerror", (err) => pageErrors.push(err.message));
    await r.ok("POST", "/v1/workflows", { name: "Reports", version: "1.0.0" });
  });
  afterAll(async () => {
    await r?.close();
  });

  it("saves an edit though the schedule fired meanwhile, and names a setting someone else changed", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "busy", workflow: "Reports", interval: "10s" });
    await r.open("#/schedules/busy");
    const opened = await r.ok("GET", "/v1/schedules/busy");
    await r.page.click('button[aria-label="Edit busy"]');
    await r.page.fill("#e-description", "edited while it fires");
    // Two fires while the form is open: only the counters and the revision move.
    await r.setClock("2026-11-15T18:51:25Z");
    const fired = await r.until(
      () => r.ok("GET", "/v1/schedules/busy"),
      (s: Json) => s.revision > opened.revision,
      "a fire",
    );
    expect(fired.fired).toBeGreaterThan(0);
    await r.page.click("#edit-form button[type=submit]");
    await r.until(status, (s) => s.startsWith("saved busy"), "the save");
    const saved = await r.ok("GET", "/v1/schedules/busy");
    expect(saved.description).toBe("edited while it fires");

    // Someone else changes the overlap (a setting the form shows) while this form is open.
    await r.page.click('button[aria-label="Edit busy"]');
    await r.page.fill("#e-description", "mine");
    await r.ok("PATCH", "/v1/schedules/busy", { overlap: "allow", description: "theirs" });
    await r.page.click("#edit-form button[type=submit]");
    const said = await r.until(formError, (t) => t !== "", "the conflict");
    expect(said).toContain("overlap");
    expect(said).toContain("description");
    // Nothing of theirs was overwritten.
    const theirs = await r.ok("GET", "/v1/schedules/busy");
    expect([theirs.overlap, theirs.description]).toEqual(["allow", "theirs"]);
    await r.page.click("#e-reload");
    expect(await r.page.inputValue("#e-description")).toBe("theirs");
    expect(await r.page.inputValue("#e-overlap")).toBe("allow");
    await r.page.fill("#e-description", "mine after reading theirs");
    await r.page.click("#edit-form button[type=submit]");
    await r.until(status, (s) => s.startsWith("saved busy"), "the save after reload");
    expect((await r.ok("GET", "/v1/schedules/busy")).description).toBe("mine after reading theirs");
    await r.ok("DELETE", "/v1/schedules/busy");
    expect(pageErrors).toEqual([]);
  });

  it("colours the ledger and the grid by each row's status past 200 executions", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "many", workflow: "Reports", interval: "1m" });
    // The oldest occurrence fails; 210 newer ones follow it.
    await r.ok("POST", "/v1/schedules/many/backfill", {
      start_at: "2026-11-14T10:00:00Z",
      end_at: "2026-11-14T10:00:00Z",
    });
    const first = (await lease()).find((t: Json) => t.execution_id.startsWith("many"));
    await r.ok("POST", `/v1/worker/tasks/${first.task_id}/fail`, {
      ...worker,
      error: { message: "no" },
      retryable: false,
    });
    await r.setClock("2026-11-15T18:51:30Z");
    await r.ok("POST", "/v1/schedules/many/backfill", {
      start_at: "2026-11-15T11:00:00Z",
      end_at: "2026-11-15T14:29:00Z",
    });
    await r.open("#/schedules/many");
    const cell = r.page.locator('.occurrence-grid tr[data-day="2026-11-14"] a').first();
    expect(await cell.getAttribute("class")).toContain("status-failed");
    expect(await r.page.locator("svg.ledger-chart g.mark.failed").count()).toBe(1);
    await r.ok("DELETE", "/v1/schedules/many");
  });

  it("keeps every action of the list inside its table at 1280 px, with rows as wide as they get", async () => {
    const long = "a pause note long enough to be clipped in the list: the vendor's API is down until Monday";
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "nightly-report-for-every-subsidiary",
      workflow: "Reports",
      cron: "30 9 * * 1-5",
      timezone: "America/Argentina/Buenos_Aires",
      description: "weekday report for every subsidiary of the group, in their own currency",
    });
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "with-milliseconds",
      workflow: "Reports",
      interval: "10s",
      start_at: "2026-11-15T18:00:00.150Z",
    });
    await r.ok("POST", "/v1/schedules", { schedule_id: "paused-long", workflow: "Reports", interval: "1m" });
    await r.ok("POST", "/v1/schedules/paused-long/pause", { note: long });
    // The latest version refuses its input: "not starting: …" under its outcome.
    await r.ok("POST", "/v1/workflows", { name: "TypedWorkflowWithALongName", version: "1.0.0" });
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "typed-refused",
      workflow: "TypedWorkflowWithALongName",
      interval: "10s",
      input: {},
    });
    await r.ok("POST", "/v1/workflows", {
      ...{ name: "TypedWorkflowWithALongName", version: "2.0.0" },
      input_schema: { type: "object", required: ["must"], properties: { must: { type: "string" } } },
    });
    await r.setClock("2026-11-15T18:52:00Z");
    await r.until(
      () => r.ok("GET", "/v1/schedules/typed-refused"),
      (s: Json) => s.last_error !== undefined && s.last_error !== null,
      "a dead letter",
    );
    await r.page.setViewportSize({ width: 1280, height: 900 });
    await r.open("#/");
    const fit = (await r.page.evaluate(CLIPPED)) as Json;
    expect(fit.clipped).toEqual([]);
    expect(fit.table).toBeLessThanOrEqual(fit.wrap);
    expect(fit.page).toBeLessThanOrEqual(1280);
    // The three buttons wrap at most once: a row is not three buttons tall.
    expect(fit.lines).toBeLessThanOrEqual(2);
    // The next fire with its milliseconds, as the API and the CLI give it (cut to the second, it
    // read as an instant 150 ms earlier).
    const next = r.page.locator("tr[data-schedule-id=with-milliseconds] time");
    expect(await next.textContent()).toBe("2026-11-15T18:52:00.150Z");
    expect(await next.getAttribute("datetime")).toBe("2026-11-15T18:52:00.150Z");
    expect(await next.getAttribute("title")).toMatch(/^local: /);
    // The clipped note keeps its whole text on hover.
    expect(await r.page.locator("tr[data-schedule-id=paused-long] .note").getAttribute("title")).toBe(long);
  });

  it("opens the backfill dialog on its first field and says how many occurrences the range holds", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "hourly", workflow: "Reports", interval: "1h" });
    await r.open("#/schedules/hourly");
    await r.page.click('button[aria-label="Backfill hourly"]');
    await r.page.locator("dialog[open]").waitFor();
    expect(await r.page.evaluate("document.activeElement?.id")).toBe("backfill-from");
    // The day before now (18:52:00) holds the hourly fires 19:00 … 18:00.
    await r.until(
      () => r.page.locator("#backfill-count").textContent(),
      (t) => t === "The range holds 24 occurrences.",
      "the count",
    );
    await r.page.fill("#backfill-from", "2026-11-15T17:00:00Z");
    await r.until(
      () => r.page.locator("#backfill-count").textContent(),
      (t) => t === "The range holds 2 occurrences.",
      "the count of the new range",
    );
    await r.page.fill("#backfill-from", "not a time");
    await r.until(
      () => r.page.locator("#backfill-count").textContent(),
      (t) => (t ?? "").includes("not a time"),
      "the refusal",
    );
    // Enter at once starts nothing.
    await r.page.keyboard.press("Enter");
    await r.page.locator("dialog").waitFor({ state: "detached" });
    expect((await r.ok("GET", "/v1/schedules/hourly")).fired).toBe(0);
    expect((await r.ok("GET", "/v1/executions?schedule_id=hourly")).executions).toEqual([]);
  });

  it("says an action failed while the server is down, and keeps saying so once the server answers", async () => {
    await r.open("#/?q=hourly");
    await r.page.route("**/v1/**", (route) => route.abort("connectionrefused"));
    await r.page.click('button[aria-label="Trigger hourly"]');
    const lines = () => r.page.locator("#status p").allTextContents();
    // Both lines: the refresh after the action failing replaced the action's refusal.
    const down = await r.until(lines, (l) => l.length === 2, "the outage lines");
    expect(down[0]).toMatch(/^could not trigger hourly: UNAVAILABLE: the server does not answer/);
    expect(down[1]).toMatch(/^could not refresh: UNAVAILABLE: the server does not answer/);
    expect(pageErrors).toEqual([]);
    await r.page.unroute("**/v1/**");
    await r.page.evaluate("document.dispatchEvent(new Event('visibilitychange'))");
    // The refresh's line goes; the refusal stays, since the trigger did not happen.
    const back = await r.until(lines, (l) => l.length === 1, "the refresh line to clear");
    expect(back[0]).toMatch(/^could not trigger hourly: /);
    expect((await r.ok("GET", "/v1/executions?schedule_id=hourly")).executions).toEqual([]);
    expect(pageErrors).toEqual([]);
  });

  it("counts relative times on from the browser's clock while the server is down", async () => {
    // Only the browser's clock moves here; the server's stays where the next tests expect it.
    await r.ok("POST", "/v1/schedules", { schedule_id: "counting", workflow: "Reports", interval: "1h" });
    const next = Date.parse((await r.ok("GET", "/v1/schedules/counting")).next_fire_at);
    /** The relative time under the list's next fire, and the schedule page's first "From now". */
    const places: [string, string][] = [
      ["#/?q=counting", 'tr[data-schedule-id="counting"] td[data-label="Next fire (UTC)"] div'],
      ["#/schedules/counting", 'table.fire-list td[data-label="From now"]'],
    ];
    for (const [hash, selector] of places) {
      await r.page.clock.setFixedTime(new Date(next - 8_000));
      await r.open(hash);
      const relative = () => r.page.locator(selector).first().innerText();
      expect({ hash, text: await relative() }).toEqual({ hash, text: "in 8s" });
      await r.page.route("**/v1/**", (route) => route.abort("connectionrefused"));
      // The browser's clock goes on; the server answers nothing. It read "in 8s" 14 s later.
      await r.page.clock.setFixedTime(new Date(next + 6_000));
      await r.until(relative, (t) => t === "due 6s ago", `${hash}: the passed fire read as due`);
      await r.page.evaluate("document.dispatchEvent(new Event('visibilitychange'))");
      await r.page.locator("#status p", { hasText: "could not refresh" }).waitFor();
      await r.page.clock.setFixedTime(new Date(next + 9_000));
      await r.until(relative, (t) => t === "due 9s ago", `${hash}: the count after a failed refresh`);
      await r.page.unroute("**/v1/**");
    }
    await r.page.clock.setFixedTime(new Date(r.clock.now()));
    expect(pageErrors).toEqual([]);
  });

  it("marks gone workers apart from live ones", async () => {
    await r.ok("POST", "/v1/worker/poll", {
      worker_id: "gone-worker",
      workflows: [{ name: "Reports", version: "1.0.0", max_attempts: 1, backoff_ms: 0 }],
      max_tasks: 1,
      wait_ms: 0,
    });
    await r.ok("POST", "/v1/worker/leave", { worker_id: "gone-worker" });
    await lease();
    await r.open("#/workers");
    const state = (id: string) => r.page.locator(`tr[data-worker="${id}"] [data-label="Status"]`).textContent();
    expect(((await state("gone-worker")) ?? "").trim()).toBe("gone");
    expect(((await state("field-worker")) ?? "").trim()).toBe("live");
    expect(await r.page.locator('tr[data-worker="gone-worker"]').getAttribute("class")).toContain("gone");
  });

  it("reads a timed-out run as TIMED OUT, and an unknown page as not found", async () => {
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "slow",
      workflow: "Reports",
      interval: "1h",
      run_timeout: "1m",
    });
    await r.ok("POST", "/v1/schedules/slow/trigger", {});
    await lease();
    await r.setClock("2026-11-15T18:55:00Z");
    await r.until(
      () => r.ok("GET", "/v1/schedules/slow"),
      (s: Json) => s.last_outcome?.error_type === "Timeout",
      "the timeout",
    );
    await r.open("#/?q=slow");
    expect((await r.page.locator("tr[data-schedule-id=slow] .outcome .badge").textContent())?.trim()).toBe("TIMED OUT");
    await r.open("#/schedules/slow");
    expect((await r.page.locator(".glance .outcome .badge").textContent())?.trim()).toBe("TIMED OUT");
    // Its execution says so too, in its row and on its page (both said FAILED).
    const id = (await r.ok("GET", "/v1/schedules/slow")).last_outcome.execution_id as string;
    expect((await r.page.locator(".badge.timed-out").allTextContents()).map((t) => t.trim())).toContain("TIMED OUT");
    // The ledger row names the error type, and the pictures draw it apart from other failures (a
    // red mark like any failure, and keyed as one): ringed, keyed "timed out", titled so.
    const ledger = await r.ok("GET", "/v1/schedules/slow/occurrences");
    const started = (ledger.occurrences as Json[]).find((o) => o.execution_id === id);
    expect(started).toMatchObject({ kind: "started", status: "FAILED", error_type: "Timeout" });
    expect(await r.page.locator("svg.ledger-chart g.mark.timed-out").count()).toBe(1);
    expect(await r.page.locator('.legend [data-legend="timed_out"]').textContent()).toBe(" started, timed out (1)");
    expect(await r.page.locator('.legend [data-legend="failed"]').textContent()).toBe(" started, failed (0)");
    const square = r.page.locator(".occurrence-grid .cell.timed-out");
    expect(await square.getAttribute("title")).toMatch(/: timed out$/);
    await r.open(`#/executions/${encodeURIComponent(id)}`);
    expect((await r.page.locator("main h1 .badge").textContent())?.trim()).toBe("TIMED OUT");

    await r.open("#/bogus/page");
    expect(await r.page.locator("main h1").textContent()).toBe("Page not found");
    expect(await r.page.locator('main a[href="#/"]').count()).toBeGreaterThan(0);
    expect(consoleErrors).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
