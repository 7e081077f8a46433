/**
 * What a fifteenth tester met: a run a worker took 21.5 s late read "started on time"; a cancel the
 * worker had not carried out yet showed only RUNNING and a live Cancel button; a worker's token
 * signed in; the sign-in page gave CLI advice; a read-only identity's list said "0 schedules match:
 * 0 active, …" over the line saying it may see none; a missing schedule's page polled for good.
 */
import { describe, expect, it } from "vitest";
import { haveChromium, leaseReports, type UiRig, useReportsRig } from "./browser.js";

/** The value of one fact on an execution's page ("Started", "Status"). */
const fact = (r: UiRig, name: string) =>
  r.page.locator("dl.settings dt", { hasText: new RegExp(`^${name}$`) }).locator("xpath=following-sibling::dd[1]");

describe.skipIf(!haveChromium)("web UI: a tester's fifteenth report", () => {
  let r: UiRig;
  const pageErrors = useReportsRig((rig) => {
    r = rig;
  });

  it("says how late a worker took a scheduled run, not how late the server created it", async () => {
    // Created 84 ms after its scheduled time, taken by a worker 21.5 s after it.
    await r.setClock("2026-11-15T19:04:00.084Z");
    await r.ok("POST", "/v1/schedules", { schedule_id: "taken-late", workflow: "Reports", cron: "4 19 * * *" });
    const due = "2026-11-15T19:04:00Z";
    await r.ok("POST", "/v1/schedules/taken-late/backfill", { start_at: due, end_at: due });
    const [e] = (await r.ok("GET", "/v1/executions?schedule_id=taken-late")).executions;
    expect(e.started_at).toBe("2026-11-15T19:04:00.084Z");
    await r.setClock("2026-11-15T19:04:21.546Z");
    await leaseReports(r, "late-taker");
    await r.open(`#/executions/${encodeURIComponent(e.execution_id)}`);
    // It read "started on time (84ms after its scheduled time)" beside WorkflowTaskStarted +21.46 s.
    expect(await fact(r, "Started").locator(".late").innerText()).toBe(
      "created on time (84ms after its scheduled time); a worker took it at 2026-11-15T19:04:21.546Z, 21.5s after its scheduled time",
    );
    expect(pageErrors).toEqual([]);
  });
});
