/**
 * The web UI in a real browser (Debian's Chromium through playwright-core) against a real server
 * with a manual clock: the schedules list and its filters, the create form with the live preview,
 * the actions, a schedule's page (outcomes, zones, ledger, grid, edit, backfill), executions with
 * their history, cancel and retry, workflows and workers, and the screenshots of docs/ui.md.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium, type Json, SHOTS, startRig, type UiRig } from "./browser.js";

const ORDER_INPUT = { order_id: "R-1", customer_id: "cust-1", amount: 120, items: [{ sku: "BOOK-1", quantity: 1 }] };

describe.skipIf(!haveChromium)("web UI", () => {
  let r: UiRig;
  const shot = (name: string) => r.page.screenshot({ path: join(SHOTS, name), fullPage: true });

  beforeAll(async () => {
    r = await startRig();
    await r.ok("POST", "/v1/workflows", { name: "OrderProcessing", version: "1.0.0" });
  });
  afterAll(async () => {
    await r?.close();
  });

  it("serves the page, and no request leaves the machine", async () => {
    const type = async (path: string) => (await fetch(r.proxy.url + path)).headers.get("content-type");
    expect(await type("/")).toBe("text/html; charset=utf-8");
    expect(await type("/app.js")).toBe("text/javascript; charset=utf-8");
    const outside: string[] = [];
    r.page.on("request", (q) => {
      if (!q.url().startsWith(r.proxy.url)) outside.push(q.url());
    });
    await r.open("#/");
    expect(await r.page.title()).toBe("Schedules · Orbit");
    expect(await r.page.locator("nav[aria-label=Main] a").allInnerTexts()).toEqual([
      "Schedules",
      "Executions",
      "Workflows",
      "Workers",
    ]);
    expect(outside).toEqual([]);
  });

  it("lists schedules, searches and filters them on the server", async () => {
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "nightly-orders",
      workflow: "OrderProcessing",
      cron: "30 9 * * *",
      timezone: "Asia/Kolkata",
      input: { ...ORDER_INPUT, order_id: "N-1" },
      description: "Nightly reconciliation order",
    });
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "orders-every-10s",
      workflow: "OrderProcessing",
      interval: "10s",
      input: ORDER_INPUT,
    });
    await r.open("#/");
    const nightly = r.page.locator('tr[data-schedule-id="nightly-orders"]');
    const cells = await nightly.locator("th, td").allInnerTexts();
    expect(cells[0]).toBe("nightly-orders\nNightly reconciliation order");
    // The time zone under the expression, so that a long zone does not widen the list past its actions.
    expect(cells.slice(1, 4)).toEqual(["OrderProcessing", 'cron "30 9 * * *"\nAsia/Kolkata', "active"]);
    expect(cells[5]).toContain("2026-11-16T04:00:00Z");
    expect(await nightly.locator("time").getAttribute("title")).toMatch(/^local: .*05:00:00/);
    expect(await r.page.locator("#list-summary").innerText()).toMatch(
      /^2 schedules match: 2 active, 0 paused, 0 ended\./,
    );

    await r.page.fill("#search", "reconciliation");
    await r.page.locator("tr[data-schedule-id]").nth(1).waitFor({ state: "detached" });
    expect(await r.page.locator("tr[data-schedule-id]").count()).toBe(1);
    expect(r.page.url()).toContain("#/?q=reconciliation");
    await r.page.fill("#search", "");
    await r.page.selectOption("#filter-state", "paused");
    await r.page.locator(".empty:not([hidden])").waitFor();
    // The counts by state are before the state filter, and say so.
    expect(await r.page.locator("#list-summary").innerText()).toMatch(
      /^0 schedules match \(state paused\); without that filter: 2 active, 0 paused, 0 ended\./,
    );
    await r.page.selectOption("#filter-state", "");
    await r.page.selectOption("#sort", "next_fire");
    // The rows of the unsorted list are already there: wait for the sorted answer's first row (the
    // order is then asserted whole below).
    await r.page.waitForFunction(
      `document.querySelector("tr[data-schedule-id]")?.getAttribute("data-schedule-id") === "orders-every-10s"`,
    );
    expect(
      await r.page
        .locator("tr[data-schedule-id]")
        .evaluateAll((rows) => rows.map((x) => x.getAttribute("data-schedule-id"))),
    ).toEqual(["orders-every-10s", "nightly-orders"]);
    // A sort where more is what one looks for starts with the most: failing schedules first.
    await r.page.selectOption("#sort", "failures");
    await r.page.waitForFunction(`location.hash.includes("order=desc")`);
    expect(r.page.url()).toContain("#/?sort=failures&order=desc");
    expect(await r.page.locator("#order").innerText()).toBe("↓ desc");
    await r.page.selectOption("#sort", "workflow");
    await r.page.waitForFunction(`!location.hash.includes("order=desc")`);
    expect(await r.page.locator("#order").innerText()).toBe("↑ asc");
  });

  it("creates a schedule, describing the cron and previewing its fires as you type", async () => {
    await r.open("#/");
    await r.page.click("#create > summary");
    await r.page.fill("#f-id", "form-made");
    await r.page.fill("#f-workflow", "OrderProcessing");
    await r.page.fill("#f-timing", "30 9 * * MON-FRI");
    await r.page.fill("#f-timezone", "Asia/Kolkata");
    const preview = r.page.locator("#timing-preview");
    await preview.locator("text=Asia/Kolkata").waitFor();
    expect(await preview.locator(".preview-description").innerText()).toMatch(/09:30/);
    // UTC, the schedule's zone and the viewer's (Berlin), for each of the next five fires.
    const first = await preview.locator("tbody tr").first().locator("td").allInnerTexts();
    expect(first[0]).toBe("2026-11-16T04:00:00Z");
    expect(first[1]).toMatch(/09:30:00/);
    expect(first[2]).toMatch(/05:00:00/);
    expect(await preview.locator("tbody tr").count()).toBe(5);
    // A mistake shows as you type, in the server's words.
    await r.page.fill("#f-timing", "0 25 * * *");
    await preview.locator(".form-error").waitFor();
    expect(await preview.innerText()).toBe(
      "INVALID_SCHEDULE: cron `0 25 * * *`: `25` is out of range for the hour field (0-23)",
    );
    await r.page.click("#create-form button[type=submit]");
    await r.page.locator("#f-form-error").filter({ hasText: "INVALID_SCHEDULE" }).waitFor();
    expect((await r.call("GET", "/v1/schedules/form-made")).status).toBe(404);

    await r.page.fill("#f-timing", "30 9 * * MON-FRI");
    await r.page.selectOption("#f-overlap", "allow");
    await r.page.selectOption("#f-catchup", "catch_up");
    await r.page.fill("#f-max-catch-up", "3");
    // A key given twice: JSON.parse would keep the last; the form names it and sends nothing.
    await r.page.fill("#f-input", '{"order_id": "F-0", "nested": {"a": 1, "\\u0061": 2}}');
    await r.page.click("#create-form button[type=submit]");
    await r.page.locator("#f-form-error").filter({ hasText: "twice" }).waitFor();
    expect(await r.page.locator("#f-form-error").innerText()).toBe(
      'INVALID_ARGUMENT: the input gives the key "a" twice in one object; give each key once',
    );
    expect((await r.call("GET", "/v1/schedules/form-made")).status).toBe(404);
    await r.page.fill("#f-input", JSON.stringify({ ...ORDER_INPUT, order_id: "F-1" }));
    await r.page.fill("#f-description", "Made in the web UI");
    await r.page.click("#create-form button[type=submit]");
    await r.page.locator("#f-form-done").filter({ hasText: "created form-made" }).waitFor();
    expect(await r.ok("GET", "/v1/schedules/form-made")).toMatchObject({
      cron: "30 9 * * MON-FRI",
      timezone: "Asia/Kolkata",
      overlap: "allow",
      catchup: "catch_up",
      max_catch_up: 3,
      input: { ...ORDER_INPUT, order_id: "F-1" },
      description: "Made in the web UI",
    });
  });

  it("pauses with a note, resumes, triggers and deletes, sending JSON on every write", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "actions-demo", workflow: "OrderProcessing", interval: "1h" });
    const writes: { method: string; type: string | undefined }[] = [];
    const onRequest = (q: import("playwright-core").Request) => {
      if (q.method() !== "GET") writes.push({ method: q.method(), type: q.headers()["content-type"] });
    };
    r.page.on("request", onRequest);
    await r.open("#/?q=actions-demo");
    const row = r.page.locator('tr[data-schedule-id="actions-demo"]');
    await r.page.click('button[aria-label="Pause actions-demo"]');
    await r.page.fill("dialog #dialog-input", "maintenance window");
    await r.page.click("dialog button[value=ok]");
    await row.locator(".badge.state-paused").waitFor();
    expect(await row.locator(".note").innerText()).toBe("maintenance window");
    expect((await r.ok("GET", "/v1/schedules/actions-demo")).pause_note).toBe("maintenance window");
    await r.page.click('button[aria-label="Resume actions-demo"]');
    await r.page.click("dialog button[value=ok]");
    await row.locator(".badge.state-active").waitFor();
    await r.page.click('button[aria-label="Trigger actions-demo"]');
    const status = r.page.locator("#status");
    await status.filter({ hasText: "started execution" }).waitFor();
    const triggered = await r.ok("GET", "/v1/schedules/actions-demo");
    expect(await status.innerText()).toBe(`started execution ${triggered.last_execution_id}`);
    await r.page.click('button[aria-label="Trigger actions-demo"]');
    await status.filter({ hasText: "not started" }).waitFor();
    await r.page.click('button[aria-label="Delete actions-demo"]');
    await r.page.click("dialog button[value=cancel]");
    expect((await r.call("GET", "/v1/schedules/actions-demo")).status).toBe(200);
    await r.page.click('button[aria-label="Delete actions-demo"]');
    await r.page.click("dialog button[value=ok]");
    await row.waitFor({ state: "detached" });
    expect((await r.call("GET", "/v1/schedules/actions-demo")).status).toBe(404);
    r.page.off("request", onRequest);
    expect(writes.map((w) => w.method)).toEqual(["POST", "POST", "POST", "POST", "DELETE"]);
    expect(writes.every((w) => w.type === "application/json")).toBe(true);
  });

  /** Leases the tasks of `workflow` as a worker would (docs/api.md § Worker protocol). */
  async function lease(workflow: string): Promise<Json[]> {
    const body = await r.ok("POST", "/v1/worker/poll", {
      worker_id: "ui-test-worker",
      workflows: [{ name: workflow, version: "1.0.0", max_attempts: 2, backoff_ms: 0 }],
      max_tasks: 10,
      wait_ms: 0,
    });
    return body.tasks;
  }

  it("shows a schedule's outcomes, zones, ledger and grid with failed runs red; edits and backfills", async () => {
    await r.ok("POST", "/v1/workflows", { name: "Reports", version: "1.0.0" });
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "kolkata-report",
      workflow: "Reports",
      cron: "*/10 * * * *",
      timezone: "Asia/Kolkata",
      overlap: "allow",
      description: "Every ten minutes, in Kolkata",
    });
    const report = () => r.ok("GET", "/v1/schedules/kolkata-report");
    // Three fires; the worker completes the first, fails the second twice (no more attempts), the third runs.
    for (const t of ["2026-11-15T19:00:00Z", "2026-11-15T19:10:00Z", "2026-11-15T19:20:00Z"]) {
      const n = (await report()).fired;
      await r.setClock(t);
      await r.until(report, (s) => s.fired === n + 1, `the fire at ${t}`);
    }
    const tasks = await lease("Reports");
    const byOcc = (t: string) => tasks.find((x: Json) => x.execution_id.endsWith(t));
    const ok1 = byOcc("2026-11-15T19:00:00Z");
    await r.ok("POST", `/v1/worker/tasks/${ok1.task_id}/steps`, {
      worker_id: "ui-test-worker",
      step: "collect",
      seq: 1,
      result: { rows: 3 },
      compensable: false,
    });
    await r.ok("POST", `/v1/worker/tasks/${ok1.task_id}/complete`, {
      worker_id: "ui-test-worker",
      result: { sent: true },
    });
    const bad = byOcc("2026-11-15T19:10:00Z");
    await r.ok("POST", `/v1/worker/tasks/${bad.task_id}/fail`, {
      worker_id: "ui-test-worker",
      error: { message: "mail server refused" },
      retryable: true,
    });
    const again = (await lease("Reports")).find((x: Json) => x.execution_id === bad.execution_id);
    await r.ok("POST", `/v1/worker/tasks/${again.task_id}/fail`, {
      worker_id: "ui-test-worker",
      error: { message: "mail server refused" },
      retryable: true,
    });
    const failed = await r.ok("GET", `/v1/executions/${encodeURIComponent(bad.execution_id)}`);
    expect(failed.status).toBe("FAILED");

    await r.open("#/schedules/kolkata-report");
    // Next fire in UTC, in the schedule's zone and in the viewer's.
    const next = (await report()).next_fire_at;
    expect(await r.page.locator(".zone-list time").innerText()).toBe(next);
    expect(await r.page.locator('.zone-list [data-zone="schedule"]').innerText()).toMatch(/GMT\+5:30|IST/);
    expect(await r.page.locator('.zone-list [data-zone="viewer"]').innerText()).toMatch(/CET/);
    // The failed run is red in the ledger picture and in the grid; the grid links to the executions.
    const failedMark = r.page.locator("svg.ledger-chart g.mark.failed");
    expect(await failedMark.count()).toBe(1);
    expect(await failedMark.locator("title").textContent()).toContain(`execution ${bad.execution_id} FAILED`);
    const cells = r.page.locator(".occurrence-grid a.cell");
    expect(await cells.count()).toBe(3);
    expect(await r.page.locator(".occurrence-grid .cell.status-failed").count()).toBe(1);
    expect(await r.page.locator(".occurrence-grid .cell.status-completed").count()).toBe(1);
    expect(await r.page.locator(".occurrence-grid .cell.status-running").count()).toBe(1);
    expect(await r.page.locator(".occurrence-grid tr").getAttribute("data-day")).toBe("2026-11-15");
    expect(await r.page.locator(".occurrence-grid .cell.status-failed").getAttribute("href")).toBe(
      `#/executions/${encodeURIComponent(bad.execution_id)}`,
    );
    // Execution ids are links.
    expect(await r.page.locator("table.executions a").count()).toBe(3);
    const s = await report();
    // The last outcome is the third run, still running; the failed one counts as a failure.
    expect(s.last_failure_at).toEqual(expect.any(String));
    expect(await r.page.locator(".glance").innerText()).toContain(s.last_outcome.status);
    await shot("schedule-1280.png");
    // The list's last-outcome filter finds it, its row marked as failing.
    await r.open("#/?outcome=failed");
    expect(
      await r.page
        .locator("tr[data-schedule-id]")
        .evaluateAll((rows) => rows.map((x) => x.getAttribute("data-schedule-id"))),
    ).toEqual(["kolkata-report"]);
    expect(await r.page.locator('tr[data-schedule-id="kolkata-report"]').getAttribute("class")).toBe("failing");
    await r.open("#/schedules/kolkata-report");

    // Edit: the cron with its live description, saved as a PATCH fenced by the revision.
    await r.page.click('button[aria-label="Edit kolkata-report"]');
    await r.page.fill("#e-timing", "15 10 * * *");
    await r.page.locator("#timing-preview").filter({ hasText: "10:15" }).waitFor();
    await r.page.fill("#e-description", "Daily at 10:15 in Kolkata");
    // The outcome settings (issue 13) are in the form too: timeouts, pause on failure, a webhook.
    await r.page.click("#edit-form details.more-settings summary");
    await r.page.fill("#e-run-timeout", "30m");
    await r.page.fill("#e-pause-on-failure", "3");
    await r.page.fill("#e-max-runs", "500");
    await r.page.fill("#e-notify", '{"url": "https://hooks.example.test/orbit", "events": ["failure"]}');
    await r.page.click("#edit-form button[type=submit]");
    await r.page.locator("#status").filter({ hasText: "saved kolkata-report" }).waitFor();
    const edited = await report();
    expect(edited).toMatchObject({
      cron: "15 10 * * *",
      timezone: "Asia/Kolkata",
      description: "Daily at 10:15 in Kolkata",
      run_timeout: "30m",
      pause_on_failure: 3,
      max_runs: 500,
      notify: [{ url: "https://hooks.example.test/orbit", events: ["failure"] }],
    });
    expect(edited).not.toHaveProperty("start_timeout");
    expect(edited.revision).toBeGreaterThan(s.revision);
    await r.page.locator("dl.settings").filter({ hasText: "Pause on failure" }).waitFor();
    const shown = await r.page.locator("dl.settings").innerText();
    expect(shown).toContain("30m");
    expect(shown).toContain("https://hooks.example.test/orbit (failure)");
    // The occurrences it already started count (docs/outcomes.md § Run-count limit); nothing
    // triggered it so far, so `fired` is exactly those.
    expect(edited.remaining_runs).toBe(500 - edited.fired);
    expect(shown).toContain(`Runs left\n${edited.remaining_runs}`);
    // Editing again shows the stored values; a notify that is not JSON nor a URL is refused in the page.
    await r.page.click('button[aria-label="Edit kolkata-report"]');
    expect(await r.page.inputValue("#e-run-timeout")).toBe("30m");
    expect(await r.page.inputValue("#e-pause-on-failure")).toBe("3");
    expect(await r.page.inputValue("#e-max-runs")).toBe("500");
    await r.page.click("#edit-form details.more-settings summary");
    await r.page.fill("#e-notify", "{not json");
    await r.page.click("#edit-form button[type=submit]");
    await r.page.locator("#edit-form").filter({ hasText: "notify is neither a URL nor valid JSON" }).waitFor();
    expect((await report()).revision).toBe(edited.revision);

    // Backfill a past range: the occurrences that have not started start now.
    await r.page.click('button[aria-label="Backfill kolkata-report"]');
    await r.page.fill("#backfill-from", "2026-11-13T00:00:00Z");
    await r.page.fill("#backfill-to", "2026-11-14T23:59:59Z");
    await r.page.click("dialog button[value=ok]");
    await r.page.locator("#status").filter({ hasText: "backfill" }).waitFor();
    expect(await r.page.locator("#status").innerText()).toMatch(/2 occurrences, 2 started, 0 already existed/);
  });

  it("lists executions with filters and shows one execution's history, cancel and retry", async () => {
    await r.open("#/executions?workflow=Reports");
    expect(await r.page.inputValue("#x-workflow")).toBe("Reports");
    const rows = r.page.locator("tr[data-execution-id]");
    expect(await rows.count()).toBeGreaterThanOrEqual(5);
    await r.page.selectOption("#x-status", "FAILED");
    await r.page.locator('tr[data-status="RUNNING"]').first().waitFor({ state: "detached" });
    expect(await rows.count()).toBe(1);
    const failedId = await rows.first().getAttribute("data-execution-id");
    // A time range that ends before the first execution: nothing.
    await r.page.fill("#x-before", "2026-11-15T18:00:00");
    await r.page.click(".filters button[type=submit]");
    await r.page.locator(".empty:not([hidden])").waitFor();
    await r.page.fill("#x-before", "");
    await r.page.click(".filters button[type=submit]");
    await rows.first().waitFor();
    await shot("executions-1280.png");

    await rows.first().locator("a").first().click();
    await r.page.waitForSelector(".timeline");
    await r.page.waitForSelector("body[data-loaded=true]");
    const types = await r.page
      .locator(".timeline .event")
      .evaluateAll((els) => els.map((e) => e.getAttribute("data-type")));
    const events: Json[] = (await r.ok("GET", `/v1/executions/${encodeURIComponent(failedId as string)}/events`))
      .events;
    expect(types).toEqual(events.map((e) => e.type));
    expect(types).toContain("WorkflowFailed");
    expect(await r.page.locator(".timeline .event.tone-bad").count()).toBeGreaterThanOrEqual(1);
    expect(await r.page.locator("#x-error").innerText()).toContain("mail server refused");
    expect(await r.page.locator(".execution-view a[href='#/schedules/kolkata-report']").count()).toBe(1);
    expect(await r.page.locator(".execution-view a[href='#/workflows/Reports']").count()).toBe(1);
    await shot("execution-1280.png");
    // Retry: shown for a failed execution; it re-runs the same execution as run 2.
    expect(await r.page.locator('button[data-action="retry"]').count()).toBe(1);
    expect(await r.page.locator('button[data-action="cancel"]').count()).toBe(0);
    await r.page.click('button[data-action="retry"]');
    await r.page
      .locator("#status")
      .filter({ hasText: `retried ${failedId}` })
      .waitFor();
    const retried = await r.ok("GET", `/v1/executions/${encodeURIComponent(failedId as string)}`);
    expect(retried.status).not.toBe("FAILED");
    expect(retried.run).toBe(2);

    // A running one is cancelled from its page; the worker compensates its step, and the timeline
    // shows the cancel and the compensation in their own colours.
    const started = await r.ok("POST", "/v1/executions", {
      execution_id: "ui-cancel-me",
      workflow: "Reports",
      version: "1.0.0",
    });
    const task = (await lease("Reports")).find((x: Json) => x.execution_id === started.execution_id);
    const worker = { worker_id: "ui-test-worker" };
    await r.ok("POST", `/v1/worker/tasks/${task.task_id}/steps`, {
      ...worker,
      step: "reserve-slot",
      seq: 1,
      result: { slot: 7 },
      compensable: true,
    });
    await r.open("#/executions/ui-cancel-me");
    await r.page.click('button[data-action="cancel"]');
    await r.page.fill("dialog #dialog-input", "from the UI");
    await r.page.click("dialog button[value=ok]");
    await r.page.locator("#status").filter({ hasText: "cancel requested" }).waitFor();
    const after = await r.ok("GET", "/v1/executions/ui-cancel-me");
    expect(after.cancel_reason).toBe("from the UI");
    await r.ok("POST", `/v1/worker/tasks/${task.task_id}/compensating`, worker);
    await r.ok("POST", `/v1/worker/tasks/${task.task_id}/compensations`, { ...worker, step: "reserve-slot" });
    expect((await r.ok("POST", `/v1/worker/tasks/${task.task_id}/cancelled`, worker)).status).toBe("CANCELLED");
    await r.open("#/executions/ui-cancel-me");
    await r.page.waitForSelector("body[data-loaded=true]");
    const tone = (type: string) => r.page.locator(`.timeline .event[data-type="${type}"]`).getAttribute("class");
    expect(await tone("CompensationStarted")).toContain("tone-compensation");
    expect(await tone("CompensationCompleted")).toContain("tone-compensation");
    expect(await tone("WorkflowCancelled")).toContain("tone-cancel");
    expect(await r.page.locator(".timeline .event[data-type=CompensationCompleted]").innerText()).toContain(
      "reserve-slot",
    );
    expect(await r.page.locator('button[data-action="retry"]').count()).toBe(1);
  });

  it("shows workflows with their versions and schemas, and the workers page", async () => {
    // Its description, as `orbit workflow register --description` gives it, is text, not markup.
    const description = "Daily revenue report <img src=x onerror=\"document.title='PWNED'\"> for finance";
    await r.ok("POST", "/v1/workflows", {
      name: "Reports",
      version: "2.0.0",
      input_schema: { type: "object", required: ["day"] },
      description,
    });
    await r.open("#/workflows");
    const reports = r.page.locator('section[data-workflow="Reports"]');
    expect(
      await reports.locator("tr[data-version]").evaluateAll((els) => els.map((e) => e.getAttribute("data-version"))),
    ).toEqual(["2.0.0", "1.0.0"]);
    // The page showed no description, where `orbit workflow list` has a DESCRIPTION column.
    const described = (v: string) =>
      reports.locator(`tr[data-version="${v}"] td[data-label="Description"]`).innerText();
    expect(await described("2.0.0")).toBe(description);
    expect(await described("1.0.0")).toBe("-");
    expect(await reports.locator("img").count()).toBe(0);
    await r.open("#/workflows/Reports");
    expect(await described("2.0.0")).toBe(description);
    expect(await r.page.title()).not.toContain("PWNED");
    expect(await reports.locator('tr[data-version="2.0.0"] pre').textContent()).toContain('"required"');
    const workers = await r.call("GET", "/v1/workers");
    if (workers.status === 200) {
      // A version no worker polls carries the warning (the test's worker polled Reports@1.0.0 only).
      expect(await reports.locator('tr[data-version="2.0.0"]').innerText()).toContain("no worker polls this version");
    } else {
      expect(await r.page.locator(".workflows-view").innerText()).toContain("does not list workers");
    }
    await shot("workflows-1280.png");
    // A deprecated version is marked ("latest" skips it).
    await r.ok("POST", "/v1/workflows/Reports/versions/1.0.0/deprecate", {});
    await r.open("#/workflows");
    await reports.locator('tr[data-version="1.0.0"] .badge').waitFor();
    expect(await reports.locator('tr[data-version="1.0.0"] th').innerText()).toMatch(/^1\.0\.0\s+deprecated$/);
    expect(await reports.locator('tr[data-version="2.0.0"] th').innerText()).toBe("2.0.0");
    await r.open("#/workers");
    expect(await r.page.locator("h1").innerText()).toBe("Workers");
  });

  it("shows what an overlap buffer holds and the runs it takes from max_runs", async () => {
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "buffered-report",
      workflow: "OrderProcessing",
      input: ORDER_INPUT,
      interval: "1h",
      overlap: "buffer_one",
      max_runs: 2,
    });
    const get = () => r.ok("GET", "/v1/schedules/buffered-report");
    const first = (await get()).next_fire_times as string[];
    // Nothing runs the first execution: the second occurrence waits in the buffer, the last run.
    for (const [n, t] of [first[0], first[1]].entries()) {
      await r.setClock(t as string);
      await r.until(get, (s) => s.fired + s.buffered.length === n + 1, `the fire at ${t}`);
    }
    expect(await get()).toMatchObject({ fired: 1, buffered: [first[1]], remaining_runs: 0, state: "active" });
    await r.open("#/schedules/buffered-report");
    await r.page.locator("dl.settings").filter({ hasText: "Buffered" }).waitFor();
    const shown = await r.page.locator("dl.settings").innerText();
    expect(shown).toContain("Runs left\n0: the last is buffered, it starts when the running execution ends");
    expect(shown).toMatch(/Buffered\n.+ \(starts when the running execution ends\)/);
    // Paused, the buffer waits for the resume (docs/scheduling.md § Pause and the buffer).
    await r.ok("POST", "/v1/schedules/buffered-report/pause", {});
    await r.open("#/schedules/buffered-report");
    await r.page.locator("dl.settings").filter({ hasText: "held while paused" }).waitFor();
    const paused = await r.page.locator("dl.settings").innerText();
    expect(paused).toContain("Runs left\n0: the last is buffered, held while paused");
    expect(paused).toMatch(/Buffered\n.+ \(held while paused; starts after a resume once nothing runs\)/);
  });
});
