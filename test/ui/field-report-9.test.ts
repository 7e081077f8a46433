/**
 * What a tester found in Chromium, kept fixed: a schedule whose two runs failed and whose next was
 * cancelled showed a grey CANCELLED beside a red "2× in a row", which read as two cancels (a
 * cancelled run counts neither way: the schedule is failing, as the CLI says `FAILED x2`); and the
 * form's notify field kept the last of a key given twice (`{"url": a, "url": b}` was sent as b),
 * where its input field refuses it.
 */
import { describe, expect, it } from "vitest";
import { haveChromium, type Json, leaseReports, type UiRig, useReportsRig } from "./browser.js";

describe.skipIf(!haveChromium)("web UI: a tester's ninth report", () => {
  let r: UiRig;
  const pageErrors = useReportsRig((rig) => {
    r = rig;
  });
  const later = (ms: number) => new Date(r.clock.now() + ms).toISOString();

  it("shows two failures and a later cancel as FAILED 2× in a row, and says the last run was cancelled", async () => {
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "streak",
      workflow: "Reports",
      interval: "1h",
      overlap: "allow",
    });
    const started: string[] = [];
    for (let n = 0; n < 2; n++) started.push((await r.ok("POST", "/v1/schedules/streak/trigger", {})).execution_id);
    const tasks = await leaseReports(r, "w9");
    for (const id of started) {
      const task = tasks.find((t: Json) => t.execution_id === id);
      expect(task, id).toBeDefined();
      await r.setClock(later(1000));
      await r.ok("POST", `/v1/worker/tasks/${task.task_id}/fail`, {
        worker_id: "w9",
        error: { message: "card declined", type: "PaymentError" },
        retryable: false,
      });
    }
    // A third run no worker holds: cancelled, it ends CANCELLED at once, after the two failures.
    const third = (await r.ok("POST", "/v1/schedules/streak/trigger", {})).execution_id as string;
    await r.setClock(later(1000));
    await r.ok("POST", `/v1/executions/${third}/cancel`, {});
    const get = () => r.ok("GET", "/v1/schedules/streak");
    const sch = await r.until(get, (s: Json) => s.last_outcome?.status === "CANCELLED", "the cancelled outcome");
    expect(sch.last_outcome.execution_id).toBe(third);
    expect(sch.consecutive_failures).toBe(2);

    await r.open("#/");
    const row = r.page.locator('tr[data-schedule-id="streak"]');
    const cell = row.locator('td[data-label="Last outcome"]');
    await cell.locator(".badge").waitFor();
    expect(await cell.locator(".badge").innerText()).toBe("FAILED");
    expect(await cell.locator(".badge").getAttribute("class")).toContain("status-failed");
    const text = await cell.innerText();
    expect(text).toContain("2× in a row");
    expect(text).toContain("last run cancelled");
    expect(text).not.toContain("CANCELLED");
    expect(await cell.locator(".outcome").getAttribute("title")).toContain("cancelled");
    expect(await row.getAttribute("class")).toContain("failing");

    // The schedule's page says it alike.
    await r.open("#/schedules/streak");
    const item = r.page.locator("section.glance .glance-item").first();
    expect(await item.locator(".badge").innerText()).toBe("FAILED");
    const glanceText = await item.innerText();
    expect(glanceText).toContain("2× in a row");
    expect(glanceText).toContain("last run cancelled");
    expect(glanceText).toContain(third);
    expect(glanceText).not.toContain("CANCELLED");
    expect(pageErrors).toEqual([]);
  });

  it("refuses a notify value that gives a key twice, naming the key, and sends nothing", async () => {
    const writes: string[] = [];
    r.page.on("request", (q) => {
      if (q.method() !== "GET") writes.push(`${q.method()} ${q.url()}`);
    });
    await r.open("#/");
    await r.page.click("#create > summary");
    await r.page.fill("#f-id", "twice");
    await r.page.fill("#f-workflow", "Reports");
    await r.page.fill("#f-timing", "0 * * * *");
    await r.page.click("#create-form details.more-settings summary");
    const cases: [string, string][] = [
      ['{"url":"https://a.example/h","url":"https://b.example/h"}', "url"],
      ['[{"url": "https://a.example/h", "events": ["failure"], "events": ["paused"]}]', "events"],
    ];
    for (const [notify, key] of cases) {
      await r.page.fill("#f-notify", notify);
      await r.page.click("#create-form button[type=submit]");
      await r.page.locator("#f-form-error").filter({ hasText: "INVALID_ARGUMENT" }).waitFor();
      expect(await r.page.locator("#f-form-error").innerText()).toBe(
        `INVALID_ARGUMENT: notify gives the key "${key}" twice in one object; give each key once`,
      );
    }
    expect(writes).toEqual([]);
    expect((await r.call("GET", "/v1/schedules/twice")).status).toBe(404);
    // Each key once: created.
    await r.page.fill("#f-notify", '{"url":"https://b.example/h"}');
    await r.page.click("#create-form button[type=submit]");
    await r.page.locator("#f-form-done").filter({ hasText: "created twice" }).waitFor();
    expect((await r.ok("GET", "/v1/schedules/twice")).notify).toEqual([{ url: "https://b.example/h" }]);
    expect(pageErrors).toEqual([]);
  });
});
