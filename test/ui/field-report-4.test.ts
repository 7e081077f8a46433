/**
 * What a newcomer met in Chromium (docs/ui.md) and these tests keep fixed: a version polled only
 * by gone workers still counted as polled; a refused create said twice, and kept under the button
 * once the field was fixed; "New schedule" twice;
 * "OrderProces / sing" and a next fire broken after its "T" in the list at 1280 px; a schedule's
 * input shown as `"amount": 120` where the server keeps `120.0`; "Updated <creation> (revision 69)"
 * on a schedule nobody had changed since.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium, SHOTS, startRig, type UiRig } from "./browser.js";

describe.skipIf(!haveChromium)("web UI: a newcomer's findings", () => {
  let r: UiRig;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    r = await startRig();
    r.page.on("pageerror", (err) => pageErrors.push(err.message));
    await r.ok("POST", "/v1/workflows", { name: "Greeter", version: "1.0.0" });
    await r.ok("POST", "/v1/workflows", { name: "Greeter", version: "2.0.0" });
  });
  afterAll(async () => {
    await r?.close();
  });

  const poll = (workerId: string, version: string) =>
    r.ok("POST", "/v1/worker/poll", {
      worker_id: workerId,
      workflows: [{ name: "Greeter", version, max_attempts: 1, backoff_ms: 0 }],
      max_tasks: 1,
      wait_ms: 0,
    });

  it("warns on a version that only gone workers polled, and lists only live ones as polling", async () => {
    await poll("stays", "1.0.0");
    await poll("left", "1.0.0");
    await poll("left-too", "2.0.0");
    await r.ok("POST", "/v1/worker/leave", { worker_id: "left" });
    await r.ok("POST", "/v1/worker/leave", { worker_id: "left-too" });
    const workers = (await r.ok("GET", "/v1/workers")).workers as { worker_id: string; status: string }[];
    expect(workers.map((w) => `${w.worker_id} ${w.status}`).sort()).toEqual([
      "left gone",
      "left-too gone",
      "stays live",
    ]);
    await r.open("#/workflows/Greeter");
    const cell = (v: string) => r.page.locator(`tr[data-version="${v}"] [data-label="Workers polling"]`);
    // 2.0.0: its only worker left, so nothing polls it (it listed "left-too", with no warning).
    expect((await cell("2.0.0").innerText()).trim()).toBe("⚠ no worker polls this version");
    // 1.0.0: the live worker, not the one that left.
    expect((await cell("1.0.0").innerText()).trim()).toBe("stays");
    expect(pageErrors).toEqual([]);
  });

  it("says a worker is stuck when it has no free slot yet holds no task, and why", async () => {
    // A worker whose every slot is held by code that did not return polls with no free slot and
    // holds no task: the page showed it live, running 0, like an idle worker.
    // Such a poll waits on the server's clock (this rig's is manual) until a cancel for the worker
    // or its wait ends: left waiting through the test, then let go.
    const sleeps = r.clock.pendingSleeps;
    const watching = r.ok("POST", "/v1/worker/poll", {
      worker_id: "full",
      workflows: [{ name: "Greeter", version: "1.0.0", max_attempts: 1, backoff_ms: 0 }],
      max_tasks: 0,
      wait_ms: 1000,
    });
    while (r.clock.pendingSleeps === sleeps) await new Promise((resolve) => setTimeout(resolve, 5));
    await r.open("#/workers");
    const status = r.page.locator('tr[data-worker="full"] [data-label="Status"]');
    expect((await status.locator(".badge").innerText()).trim()).toBe("stuck");
    expect(await status.innerText()).toContain("keeps its slots, so it takes no work");
    expect((await r.page.locator('tr[data-worker="stays"] [data-label="Status"]').innerText()).trim()).toBe("live");
    r.clock.advance(1000);
    expect(await watching).toEqual({ tasks: [] });
    expect(pageErrors).toEqual([]);
  });

  it("says a refused create once, under the button, and the preview again once it says something else", async () => {
    await r.open("#/");
    await r.page.click("#create > summary");
    await r.page.fill("#f-id", "ui-greet");
    await r.page.fill("#f-workflow", "Greeter");
    await r.page.fill("#f-timing", "0 9 * * 1-5");
    await r.page.fill("#f-timezone", "Europe/Pariss");
    const preview = r.page.locator("#timing-preview");
    await preview.locator(".form-error").waitFor();
    const said = (await preview.innerText()).trim();
    expect(said).toMatch(/^INVALID_SCHEDULE: timezone "Europe\/Pariss"/);
    await r.page.click("#create-form button[type=submit]");
    await r.page.locator("#f-form-error").filter({ hasText: "INVALID_SCHEDULE" }).waitFor();
    expect((await r.page.locator("#f-form-error").innerText()).trim()).toBe(said);
    // Once on the page (the preview above the button said it too).
    await r.until(
      () => r.page.getByText(said, { exact: true }).and(r.page.locator(":visible")).count(),
      (n) => n === 1,
      "the refusal said once",
    );
    expect(await preview.isVisible()).toBe(false);
    // The preview comes back with what it says next.
    await r.page.fill("#f-timezone", "Europe/Paris");
    await preview.locator("tbody tr").first().waitFor();
    expect(await preview.isVisible()).toBe(true);
    // And the refusal of the old timing is gone from under the button (it stayed until the next submit).
    expect((await r.page.locator("#f-form-error").innerText()).trim()).toBe("");
    expect((await r.call("GET", "/v1/schedules/ui-greet")).status).toBe(404);
    expect(pageErrors).toEqual([]);
  });

  it("titles the create form once", async () => {
    await r.open("#/");
    const title = r.page.getByText("New schedule", { exact: true });
    expect(await title.count()).toBe(1);
    await r.page.click("#create > summary");
    await r.page.locator("#create-form").waitFor();
    // The summary and an h2 under it both said "New schedule".
    expect(await title.count()).toBe(1);
    expect(await r.page.getByRole("form", { name: "New schedule" }).count()).toBe(1);
    // The edit form keeps its heading.
    await r.ok("POST", "/v1/schedules", { schedule_id: "titled", workflow: "Greeter", interval: "1h" });
    await r.open("#/schedules/titled");
    await r.page.click('button[aria-label="Edit titled"]');
    expect(await r.page.getByRole("form", { name: "Edit titled" }).count()).toBe(1);
    expect(pageErrors).toEqual([]);
  });

  it("keeps workflow names and next fires whole in the list at 1280 px, and the phone cards whole", async () => {
    await r.ok("POST", "/v1/workflows", { name: "OrderProcessing", version: "1.0.0" });
    await r.ok("POST", "/v1/workflows", { name: "Report", version: "1.0.0" });
    // The newcomer's four rows: a next fire with milliseconds, a zone, a description, a pause and
    // a "waiting" line.
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "hourly-check",
      workflow: "OrderProcessing",
      interval: "1h",
      start_at: "2026-11-15T18:00:02.143Z",
    });
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "nightly-orders",
      workflow: "OrderProcessing",
      cron: "0 2 * * *",
      timezone: "Europe/Berlin",
      description: "Nightly reconciliation order",
    });
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "orders-every-10s",
      workflow: "OrderProcessing",
      interval: "10s",
    });
    await r.ok("POST", "/v1/schedules", { schedule_id: "rep", workflow: "Report", cron: "0 3 * * *" });
    await r.ok("POST", "/v1/schedules/rep/trigger", {});
    await r.ok("POST", "/v1/schedules/rep/pause", {});
    await r.page.setViewportSize({ width: 1280, height: 900 });
    await r.open("#/");
    await r.page.locator("tr[data-schedule-id=rep] .no-worker").waitFor();
    /** How many lines each element's text takes (an inline element has one box per line). */
    const lines = (selector: string) =>
      r.page.locator(selector).evaluateAll((els) => els.map((e) => [e.textContent, e.getClientRects().length]));
    const names = await lines('table.schedules td[data-label="Workflow"] > span');
    expect(names.length).toBeGreaterThanOrEqual(4);
    for (const [text, n] of names) expect({ text, n }).toEqual({ text, n: 1 });
    const fires = await lines('table.schedules td[data-label="Next fire (UTC)"] time');
    expect(fires.map(([t]) => t)).toContain("2026-11-15T19:00:02.143Z");
    for (const [text, n] of fires) expect({ text, n }).toEqual({ text, n: 1 });
    const fit = (await r.page.evaluate(`(() => ({
      page: document.documentElement.scrollWidth,
      table: document.querySelector("table.schedules").getBoundingClientRect().width,
      wrap: document.querySelector(".list-view .table-wrap").getBoundingClientRect().width,
    }))()`)) as { page: number; table: number; wrap: number };
    expect(fit.table).toBeLessThanOrEqual(fit.wrap);
    expect(fit.page).toBeLessThanOrEqual(1280);
    await r.page.screenshot({ path: join(SHOTS, "newcomer-list-1280.png") });
    // At 390 px the rows are cards, and nothing runs past the phone's width.
    await r.page.setViewportSize({ width: 390, height: 900 });
    await r.open("#/");
    expect(await r.page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await r.page.setViewportSize({ width: 1280, height: 900 });
    expect(pageErrors).toEqual([]);
  });

  it("shows a schedule's input with its numbers as given, as the server keeps them", async () => {
    const input =
      '{"amount": 120.0, "big": 12345678901234567890, "e": 1e3, "plain": 7, "list": [1.50, -0, 2], "name": "x"}';
    const res = await fetch(`${r.server.url}/v1/schedules`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"schedule_id": "as-given", "workflow": "Greeter", "interval": "1h", "input": ${input}}`,
    });
    expect(res.status).toBe(201);
    // The API answers with the input's text (docs/cli.md § schedule show).
    expect(await (await fetch(`${r.server.url}/v1/schedules/as-given`)).text()).toContain('"amount":120.0');
    await r.open("#/schedules/as-given");
    const shown = await r.page.locator('dl.settings dt:text-is("Input") + dd pre').textContent();
    // JSON.stringify(…, null, 2)'s layout, each number as written (it read 120, 12345678901234567000, 1000, 1.5, 0).
    expect(shown).toBe(
      [
        "{",
        '  "amount": 120.0,',
        '  "big": 12345678901234567890,',
        '  "e": 1e3,',
        '  "plain": 7,',
        '  "list": [',
        "    1.50,",
        "    -0,",
        "    2",
        "  ],",
        '  "name": "x"',
        "}",
      ].join("\n"),
    );
    expect(pageErrors).toEqual([]);
  });

  it("edits a schedule's input with its numbers as given, and saves them so", async () => {
    const res = await fetch(`${r.server.url}/v1/schedules`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"schedule_id": "edit-as-given", "workflow": "Greeter", "interval": "1h", "input": {"amount": 120.0, "name": "x"}}',
    });
    expect(res.status).toBe(201);
    await r.open("#/schedules/edit-as-given");
    await r.page.click('button[aria-label="Edit edit-as-given"]');
    // The form shows the input as the server keeps it (it showed "amount": 120).
    const shown = await r.page.inputValue("#e-input");
    expect(shown).toContain('"amount": 120.0');
    // Saved with another change to the input, its numbers go back as written.
    await r.page.fill("#e-input", shown.replace('"x"', '"y"'));
    await r.page.click("#edit-form button[type=submit]");
    const stored = await r.until(
      async () => (await fetch(`${r.server.url}/v1/schedules/edit-as-given`)).text(),
      (text) => text.includes('"name":"y"'),
      "the save",
    );
    expect(stored).toContain('"amount":120.0');
    expect(pageErrors).toEqual([]);
  });

  it("says when a schedule last changed apart from its revision, which fires move too", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "fires-often", workflow: "Greeter", interval: "10s" });
    const created = await r.ok("GET", "/v1/schedules/fires-often");
    let fired = created;
    for (let i = 0; i < 3; i++) {
      const before = fired.revision;
      await r.setClock(new Date(r.clock.now() + 10_000).toISOString());
      fired = await r.until(
        () => r.ok("GET", "/v1/schedules/fires-often"),
        (s: { revision: number }) => s.revision > before,
        "a fire",
      );
    }
    // Fires move the revision, not updated_at.
    expect(fired.revision).toBeGreaterThan(created.revision);
    expect(fired.updated_at).toBe(created.updated_at);
    await r.open("#/schedules/fires-often");
    const setting = (name: string) => r.page.locator(`dl.settings dt:text-is("${name}") + dd`);
    expect(await setting("Updated").count()).toBe(0);
    expect(await setting("Last changed").locator("time").getAttribute("datetime")).toBe(created.updated_at);
    expect(await setting("Last changed").innerText()).not.toContain("revision");
    const revision = (await setting("Revision").innerText()).split("\n");
    expect(revision[0]).toBe(String((await r.ok("GET", "/v1/schedules/fires-often")).revision));
    expect(revision[1]).toBe("moves with every change and every fire (If-Match)");
    expect(pageErrors).toEqual([]);
  });
});
