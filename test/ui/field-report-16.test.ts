/**
 * What a sixteenth round of testers met: a single missed occurrence vanished from the day grid (it
 * counted itself as run later) and was a grey diamond in the ledger picture that the legend keys
 * nowhere; a schedule whose only occurrence was missed looked healthy (outcome "-", nothing said);
 * bidirectional controls in user text still reordered it (a worker id `w…\u202eevil` read "…live"
 * beside a real "live" badge).
 */
import { describe, expect, it } from "vitest";
import { haveChromium, type Json, leaseReports, SHOTS, type UiRig, useReportsRig } from "./browser.js";

describe.skipIf(!haveChromium)("web UI: the sixteenth testers' findings", () => {
  let r: UiRig;
  const pageErrors = useReportsRig((rig) => {
    r = rig;
  });

  /** A schedule whose one occurrence so far was missed: the clock passes it by 30 minutes. */
  async function missedOnce(id: string): Promise<string> {
    await r.ok("POST", "/v1/schedules", { schedule_id: id, workflow: "Reports", interval: "1h" });
    const get = () => r.ok("GET", `/v1/schedules/${id}`);
    const [first] = (await get()).next_fire_times as string[];
    await r.setClock(new Date(Date.parse(first as string) + 30 * 60_000).toISOString());
    await r.until(get, (s: Json) => s.skipped === 1, "the missed occurrence");
    return first as string;
  }

  it("draws a single missed occurrence as one dashed square, and as a bar the legend keys", async () => {
    const first = await missedOnce("missed-once");
    const [row] = (await r.ok("GET", "/v1/schedules/missed-once/occurrences")).occurrences as Json[];
    expect(row).toMatchObject({ kind: "skipped", reason: "missed", count: 1, occurrence: first });
    await r.open("#/schedules/missed-once");
    // It was dropped: "all 0 days with occurrences" over "No occurrences yet."
    expect(await r.page.locator(".grid-heading").innerText()).toBe(
      "By day (UTC), one square per occurrence: the one day with occurrences",
    );
    const square = r.page.locator(".occurrence-grid .cell");
    expect(await square.count()).toBe(1);
    expect(await square.getAttribute("class")).toBe("cell skipped reason-missed");
    expect(await square.getAttribute("title")).toBe(`${first}: skipped (missed)`);
    expect(await r.page.locator(".occurrence-grid").getAttribute("aria-label")).toBe("Occurrences by day (UTC)");
    // The picture draws it as the legend keys missed: a bar, not a diamond.
    const mark = r.page.locator("svg.ledger-chart g.mark.reason-missed");
    expect(await mark.count()).toBe(1);
    expect(await mark.locator("rect.range").count()).toBe(1);
    expect(await mark.locator("path").count()).toBe(0);
    const legend = r.page.locator('.legend li[data-legend="missed"]');
    expect(await legend.locator("svg rect.range").count()).toBe(1);
    expect(((await legend.textContent()) ?? "").replace(/\s+/g, " ").trim()).toBe(
      "skipped: missed (a bar across the range) (1)",
    );
    await r.page.locator(".glance").screenshot({ path: `${SHOTS}/missed-once-glance.png` });
    await r.page.locator(".grid-wrap").screenshot({ path: `${SHOTS}/missed-once-grid.png` });
    await r.page.locator("svg.ledger-chart").screenshot({ path: `${SHOTS}/missed-once-ledger.png` });
    expect(pageErrors).toEqual([]);
  });

  it("says the last occurrence was missed on the schedule's page and marks it in the list", async () => {
    const first = await missedOnce("missed-quietly");
    await r.open("#/schedules/missed-quietly");
    const item = r.page.locator(".glance .glance-last-tick");
    expect(await item.locator(".badge.ledger-skipped").innerText()).toBe("skipped: missed");
    expect(await item.locator("time").getAttribute("datetime")).toBe(first);
    expect(await item.locator(".muted").innerText()).toMatch(/^not started: it was not fired in time/);
    expect(await r.page.locator(".glance").getAttribute("class")).toContain("skipped-last");
    await r.open("#/?q=missed-quietly");
    const row = r.page.locator("tr[data-schedule-id=missed-quietly]");
    expect(await row.getAttribute("class")).toBe("skipped-last");
    const line = row.locator(".last-tick");
    expect((await line.innerText()).replace(/\s+/g, " ")).toBe("last occurrence skipped: missed");
    expect(await line.getAttribute("title")).toBe(
      `The last occurrence, ${first}, did not start: skipped (missed): it was not fired in time (the server was down or behind) and its catch-up policy did not start it`,
    );
    await row.screenshot({ path: `${SHOTS}/missed-once-row.png` });
    // A schedule whose last occurrence started says nothing of the kind.
    await r.ok("POST", "/v1/schedules", { schedule_id: "started-fine", workflow: "Reports", interval: "1h" });
    const get = () => r.ok("GET", "/v1/schedules/started-fine");
    const [next] = (await get()).next_fire_times as string[];
    await r.setClock(next as string);
    await r.until(get, (s: Json) => s.fired === 1, "the fire");
    // Nor does a manual trigger not started (its run still going): no occurrence of the schedule,
    // and the status line says it.
    expect((await r.ok("POST", "/v1/schedules/started-fine/trigger", {})).started).toBe(false);
    expect((await get()).last_tick).toMatchObject({ kind: "skipped", reason: "overlap", occurrence: null });
    await r.open("#/?q=started-fine");
    expect(await r.page.locator("tr[data-schedule-id=started-fine] .last-tick").count()).toBe(0);
    expect(pageErrors).toEqual([]);
  });

  it("shows bidirectional controls in user text as muted escapes, and an edit keeps them", async () => {
    const worker = "w-bidi\u202eevil";
    await r.ok("POST", "/v1/schedules", { schedule_id: "bidi-fail", workflow: "Reports", interval: "1h" });
    await r.ok("POST", "/v1/schedules/bidi-fail/trigger", {});
    const task = (await leaseReports(r, worker)).find((t: Json) => t.execution_id.startsWith("bidi-fail"));
    expect(task).toBeDefined();
    await r.ok("POST", `/v1/worker/tasks/${task.task_id}/fail`, {
      worker_id: worker,
      error: { message: "disk full \u202eRTL", type: "IOError" },
      retryable: false,
    });
    await r.open("#/workers");
    const id = r.page.locator(".control-escape").first();
    expect(await id.innerText()).toBe("\\u202e");
    const body = await r.page.evaluate("document.body.innerText");
    expect(body).toContain("w-bidi\\u202eevil");
    for (const c of ["\u202e", "\u2066", "\u2069"]) expect(body).not.toContain(c);
    await r.page.locator("main").screenshot({ path: `${SHOTS}/bidi-workers.png` });

    // The error, on the schedule's page and in the executions list.
    await r.open("#/schedules/bidi-fail");
    expect(await r.page.locator(".glance-error").innerText()).toBe("disk full \\u202eRTL");
    expect(await r.page.evaluate("document.body.innerText")).not.toContain("\u202e");
    await r.page.locator(".glance").screenshot({ path: `${SHOTS}/bidi-error.png` });
    await r.open("#/executions?schedule_id=bidi-fail");
    expect(await r.page.evaluate("document.body.innerText")).toContain("disk full \\u202eRTL");
    expect(await r.page.evaluate("document.body.innerText")).not.toContain("\u202e");

    // A description and a pause note: escaped where shown, in the title too; the edit form's field
    // holds the text as stored, so a save sends back what was there.
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "bidi-note",
      workflow: "Reports",
      interval: "1h",
      description: "invoice\u202e gnp.exe \u2066x\u2069",
    });
    await r.ok("POST", "/v1/schedules/bidi-note/pause", { note: "held\u200f by \u061cops" });
    await r.open("#/?q=bidi-note");
    const row = r.page.locator("tr[data-schedule-id=bidi-note]");
    expect(await row.locator(".clip").first().innerText()).toBe("invoice\\u202e gnp.exe \\u2066x\\u2069");
    expect(await row.locator(".clip").first().getAttribute("title")).toBe("invoice\\u202e gnp.exe \\u2066x\\u2069");
    expect(await row.locator(".note").innerText()).toBe("held\\u200f by \\u061cops");
    await r.open("#/schedules/bidi-note");
    expect(await r.page.locator("p.description").innerText()).toBe("invoice\\u202e gnp.exe \\u2066x\\u2069");
    await r.page.click('button[aria-label="Edit bidi-note"]');
    expect(await r.page.inputValue("#e-description")).toBe("invoice\u202e gnp.exe \u2066x\u2069");
    expect(pageErrors).toEqual([]);
  });
});
