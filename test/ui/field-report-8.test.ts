/**
 * What an eighth tester met: a double click on Trigger (or Retry) started two executions; the day
 * grid skipped today after a backfill of old ranges; the backfill dialog let Backfill be clicked
 * under the previous range's count; the status line scrolled out of view; right-to-left text
 * clipped at its start; a phone's sort not counted as set; an execution no worker had taken read
 * as started.
 */

import { describe, expect, it } from "vitest";
import { haveChromium, type Json, type UiRig, useReportsRig } from "./browser.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Registers `workflow`@1.0.0 (once) and leases its pending tasks as `workerId`: each test that
 * leases has a workflow of its own, as the backfills of the others leave hundreds of Reports tasks.
 */
async function lease(r: UiRig, workflow: string, workerId: string): Promise<Json[]> {
  await r.call("POST", "/v1/workflows", { name: workflow, version: "1.0.0" });
  const body = {
    worker_id: workerId,
    workflows: [{ name: workflow, version: "1.0.0", max_attempts: 1, backoff_ms: 0 }],
    max_tasks: 100,
    wait_ms: 0,
  };
  return (await r.ok("POST", "/v1/worker/poll", body)).tasks;
}

describe.skipIf(!haveChromium)("web UI: a tester's eighth report", () => {
  let r: UiRig;
  const pageErrors = useReportsRig((rig) => {
    r = rig;
  });

  for (const slow of [false, true]) {
    it(`starts one execution for a double click and a double Enter on Trigger${slow ? " over a slow network" : ""}`, async () => {
      const tag = slow ? "slow" : "fast";
      if (slow) {
        await r.page.route("**/v1/schedules/*/trigger", async (route) => {
          await sleep(600);
          await route.continue();
        });
      }
      const keys: string[] = [];
      const onRequest = (req: { method(): string; url(): string; headers(): Record<string, string> }) => {
        if (req.method() === "POST" && req.url().includes("/trigger"))
          keys.push(req.headers()["idempotency-key"] ?? "");
      };
      r.page.on("request", onRequest);
      const executions = async (id: string): Promise<Json[]> =>
        (await r.ok("GET", `/v1/executions?schedule_id=${id}`)).executions;
      for (const how of ["click", "enter", "slow-double-click"]) {
        const id = `twice-${tag}-${how}`;
        await r.ok("POST", "/v1/schedules", { schedule_id: id, workflow: "Reports", interval: "1h", overlap: "allow" });
        await r.open(`#/?q=${id}`);
        const button = r.page.locator(`button[aria-label="Trigger ${id}"]`);
        if (how === "click") await button.dblclick();
        else if (how === "slow-double-click") {
          // A person's double click: the second click 300 ms after the first, after a fast answer.
          // Both clicks are made by the page on its own timer: two mouse clicks from the test 300 ms
          // apart reached the page more than the button's 500 ms hold apart under CI's load, a
          // second action by then (one run in three at load 10).
          await button.evaluate(
            (el) =>
              new Promise<void>((resolve) => {
                (el as unknown as { click(): void }).click();
                setTimeout(() => {
                  (el as unknown as { click(): void }).click();
                  resolve();
                }, 300);
              }),
          );
        } else {
          await button.focus();
          await r.page.keyboard.press("Enter");
          await r.page.keyboard.press("Enter");
        }
        await r.page.locator("#status p", { hasText: "started execution" }).waitFor();
        // Whatever a second request would have done has had time to be done.
        await sleep(slow ? 900 : 300);
        const started = await executions(id);
        expect(started).toHaveLength(1);
        expect(await r.page.locator("#status").innerText()).toContain(started[0].execution_id);
      }
      r.page.off("request", onRequest);
      if (slow) await r.page.unroute("**/v1/schedules/*/trigger");
      // Each action sends its own key.
      expect(keys).toHaveLength(3);
      expect(keys.every((k) => k.length >= 16)).toBe(true);
      expect(new Set(keys).size).toBe(3);
      expect(pageErrors).toEqual([]);
    });
  }

  it("draws the day grid's newest days by occurrence, today included, after a backfill of an old range", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "grid-today", workflow: "Reports", cron: "0 * * * *" });
    const fired = () => r.ok("GET", "/v1/schedules/grid-today");
    await r.setClock("2026-11-15T19:00:00Z");
    await r.until(fired, (s) => s.fired === 1, "today's fire");
    // 600 hourly occurrences of 25 October days, recorded after today's fire: the newest 500
    // recorded rows held no today.
    const bf = await r.ok("POST", "/v1/schedules/grid-today/backfill", {
      start_at: "2026-10-01T00:00:00Z",
      end_at: "2026-10-25T23:00:00Z",
    });
    expect(bf.started).toBe(600);
    await r.open("#/schedules/grid-today");
    const days = await r.page
      .locator(".occurrence-grid tr")
      .evaluateAll((trs) => trs.map((tr) => (tr as unknown as { dataset: { day: string } }).dataset.day));
    expect(days).toHaveLength(14);
    expect(days[0]).toBe("2026-11-15");
    expect(days[1]).toBe("2026-10-25");
    expect(days[13]).toBe("2026-10-13");
    expect(await r.page.locator(".grid-heading").innerText()).toBe(
      "By day (UTC), one square per occurrence: the newest 14 days with occurrences (12 older days are not shown)",
    );
    expect(await r.page.locator('.occurrence-grid tr[data-day="2026-11-15"] .cell').count()).toBe(1);
    // A grid that could not read far enough says which rows it drew from; one day is "1 day".
    const heading = await r.page.evaluate(`import("/grid.js").then((m) => m.occurrenceGridHeading({
      rows: [{ kind: "started", occurrence: "2026-10-01T00:00:00Z", recorded_at: "2026-11-15T19:00:01Z" }],
      pages: [], whole: false, covered: false, since: "2026-11-15T19:00:01Z" }))`);
    expect(heading).toBe(
      "By day (UTC), one square per occurrence, from the one most recently recorded ledger row (recorded since 2026-11-15T19:00:01Z): 1 day with occurrences. Occurrences recorded before then are not read, so a day may be missing or incomplete.",
    );
    expect(pageErrors).toEqual([]);
  });

  it("keeps Backfill disabled while the range is recounted, and counts again after the server comes back", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "recount", workflow: "Reports", cron: "0 * * * *" });
    await r.open("#/schedules/recount");
    await r.page.click('button[aria-label="Backfill recount"]');
    const count = r.page.locator("#backfill-count");
    const backfill = r.page.locator("dialog button[value=ok]");
    await r.page.locator("#backfill-count", { hasText: "The range holds" }).waitFor();
    expect(await backfill.isDisabled()).toBe(false);
    // A slow link: the recount takes a while, and the last count must not stand meanwhile.
    await r.page.route("**/v1/preview*", async (route) => {
      await sleep(800);
      await route.continue().catch(() => {});
    });
    await r.page.fill("#backfill-to", "2026-11-15T18:00:00Z");
    await r.page.locator("#backfill-count", { hasText: "The range holds" }).waitFor();
    await r.page.fill("#backfill-from", "2026-11-15T16:00:00Z");
    expect(await count.innerText()).toBe("Counting…");
    expect(await backfill.isDisabled()).toBe(true);
    await r.page.locator("#backfill-count", { hasText: /^The range holds 3 occurrences\.$/ }).waitFor();
    expect(await backfill.isDisabled()).toBe(false);
    expect(await r.ok("GET", "/v1/executions?schedule_id=recount")).toMatchObject({ executions: [] });
    // The server goes away: the count says so, Backfill may be clicked (to be refused), and once
    // the server is back the count comes on its own.
    await r.page.unroute("**/v1/preview*");
    await r.page.route("**/v1/preview*", (route) => route.abort("connectionrefused"));
    await r.page.fill("#backfill-from", "2026-11-15T17:00:00Z");
    await r.page.locator("#backfill-count", { hasText: /^UNAVAILABLE/ }).waitFor();
    await r.page.unroute("**/v1/preview*");
    await r.page.locator("#backfill-count", { hasText: /^The range holds 2 occurrences\.$/ }).waitFor();
    // A backfill refused while the range typed meanwhile is counted does not enable Backfill early.
    await r.page.route("**/v1/schedules/recount/backfill", async (route) => {
      await sleep(500);
      await route.abort("connectionrefused");
    });
    await r.page.route("**/v1/preview*", async (route) => {
      await sleep(1500);
      await route.continue().catch(() => {});
    });
    await r.page.click("dialog button[value=ok]");
    await r.page.fill("#backfill-from", "2026-11-15T16:00:00Z");
    await r.page.locator("#dialog-error", { hasText: "UNAVAILABLE" }).waitFor();
    expect(await count.innerText()).toBe("Counting…");
    expect(await backfill.isDisabled()).toBe(true);
    await r.page.locator("#backfill-count", { hasText: /^The range holds 3 occurrences\.$/ }).waitFor();
    expect(await backfill.isDisabled()).toBe(false);
    await r.page.unroute("**/v1/preview*");
    await r.page.unroute("**/v1/schedules/recount/backfill");
    await r.page.fill("#backfill-from", "2026-11-15T17:00:00Z");
    await r.page.locator("#backfill-count", { hasText: /^The range holds 2 occurrences\.$/ }).waitFor();
    await r.page.click("dialog button[value=ok]");
    await r.page.locator("#status p", { hasText: "backfill" }).waitFor();
    expect((await r.ok("GET", "/v1/executions?schedule_id=recount")).executions).toHaveLength(2);
    expect(pageErrors).toEqual([]);
  });

  it("shows an action's status in the window wherever it was taken, without moving the rows", async () => {
    const ids = Array.from({ length: 45 }, (_, i) => `far-${String(i).padStart(2, "0")}`);
    await r.ok("POST", "/v1/schedules/batch", {
      schedules: ids.map((id) => ({ schedule_id: id, workflow: "Reports", interval: "1h", overlap: "allow" })),
    });
    const inWindow = () =>
      r.page
        .locator("#status p")
        .first()
        .evaluate((p) => {
          const el = p as unknown as { getBoundingClientRect(): { top: number; bottom: number } };
          const box = el.getBoundingClientRect();
          return box.top >= 0 && box.bottom <= (globalThis as unknown as { innerHeight: number }).innerHeight;
        });
    for (const [width, height, id] of [
      [1280, 900, "far-41"],
      [390, 800, "far-01"],
    ] as const) {
      await r.page.setViewportSize({ width, height });
      await r.open("#/?q=far-&sort=id");
      const row = r.page.locator(`tr[data-schedule-id="${id}"]`);
      await row.evaluate((tr) =>
        (tr as unknown as { scrollIntoView(o: object): void }).scrollIntoView({ block: "center" }),
      );
      // The status line's own place is out of the window.
      expect(await r.page.evaluate("window.scrollY")).toBeGreaterThan(150);
      const before = await row.boundingBox();
      await row.locator(`button[aria-label="Trigger ${id}"]`).click();
      await r.page.locator("#status p", { hasText: "started execution" }).waitFor();
      expect(await inWindow()).toBe(true);
      // The list's refresh after the trigger may be putting the row back in place: wait for it.
      await row.waitFor();
      const after = await row.boundingBox();
      expect(after?.y).toBe(before?.y);
      // The keyboard reaches the message, and focused it shows its whole text.
      const message = r.page.locator("#status p").first();
      expect(await message.getAttribute("tabindex")).toBe("0");
      expect(await r.page.locator("#status").getAttribute("aria-live")).toBe("polite");
      await message.focus();
      expect(
        await message.evaluate(
          (p) =>
            (p as unknown as { scrollWidth: number; clientWidth: number }).scrollWidth <=
            (p as unknown as { clientWidth: number }).clientWidth,
        ),
      ).toBe(true);
      expect(await message.getAttribute("title")).toMatch(/^started execution far-/);
    }
    await r.page.setViewportSize({ width: 1280, height: 900 });
    expect(pageErrors).toEqual([]);
  });

  it("shows the start of a clipped right-to-left description and pause note", async () => {
    const hebrew = "תיאור ארוך מאוד של לוח הזמנים הזה שנחתך בסוף השורה";
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "rtl-clip",
      workflow: "Reports",
      interval: "1h",
      description: hebrew,
    });
    await r.ok("POST", "/v1/schedules/rtl-clip/pause", { note: `הערה: ${hebrew}` });
    await r.page.setViewportSize({ width: 1280, height: 900 });
    await r.open("#/?q=rtl-clip");
    // Whether the text's first letter lies inside the clipped box: its start is on the right.
    const startShown = (selector: string) =>
      r.page.evaluate(`(() => {
        const el = document.querySelector(${JSON.stringify(selector)});
        const range = document.createRange();
        range.setStart(el.firstChild, 0);
        range.setEnd(el.firstChild, 1);
        const first = range.getBoundingClientRect();
        const box = el.getBoundingClientRect();
        return { clipped: el.scrollWidth > el.clientWidth, shown: first.left >= box.left - 1 && first.right <= box.right + 1 };
      })()`);
    for (const selector of ['tr[data-schedule-id="rtl-clip"] th .clip', 'tr[data-schedule-id="rtl-clip"] .note.clip']) {
      expect(await startShown(selector)).toEqual({ clipped: true, shown: true });
    }
    expect(pageErrors).toEqual([]);
  });

  it("counts a sort other than the default in the phone's 'Filters and sort (N set)'", async () => {
    await r.page.setViewportSize({ width: 390, height: 800 });
    const toggle = r.page.locator("button", { hasText: "Filters and sort" });
    await r.open("#/");
    expect(await toggle.innerText()).toBe("Filters and sort");
    await r.open("#/?sort=failures&order=desc");
    expect(await toggle.innerText()).toBe("Filters and sort (1 set)");
    await r.open("#/?order=desc");
    expect(await toggle.innerText()).toBe("Filters and sort (1 set)");
    await toggle.click();
    await r.page.locator("#sort + button, #sort ~ button").first().click();
    await r.until(
      () => toggle.innerText(),
      (t) => t === "Filters and sort",
      "the order back to the default",
    );
    await r.page.selectOption("#sort", "fired");
    await r.until(
      () => toggle.innerText(),
      (t) => t === "Filters and sort (1 set)",
      "the sort counted",
    );
    await r.page.setViewportSize({ width: 1280, height: 900 });
    expect(pageErrors).toEqual([]);
  });

  it("says an execution no worker has taken is queued, not started, and that a jittered delay includes the jitter", async () => {
    await lease(r, "Queue", "nobody-yet");
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "queued-jitter",
      workflow: "Queue",
      cron: "0 * * * *",
      jitter: "30s",
    });
    const due = "2026-11-15T17:00:00Z";
    await r.ok("POST", "/v1/schedules/queued-jitter/backfill", { start_at: due, end_at: due });
    const [e] = (await r.ok("GET", "/v1/executions?schedule_id=queued-jitter")).executions;
    expect(e.status).toBe("RUNNING");
    await r.open(`#/executions/${encodeURIComponent(e.execution_id)}`);
    const fact = (name: string) =>
      r.page.locator("dl.settings dt", { hasText: new RegExp(`^${name}$`) }).locator("xpath=following-sibling::dd[1]");
    expect(await r.page.locator("dl.settings dt", { hasText: /^Started$/ }).count()).toBe(0);
    expect(await fact("Queued").locator(".late").innerText()).toMatch(
      /^queued \S+ after its scheduled time \(includes the schedule's jitter of up to 30s\); no worker has taken it yet$/,
    );
    expect(await fact("Elapsed").innerText()).toMatch(/^- \(waiting for a worker for \S+\)$/);
    // A worker takes it: now it has started.
    await lease(r, "Queue", "queued-worker");
    await r.page.locator("dl.settings dt", { hasText: /^Started$/ }).waitFor();
    expect(await fact("Started").locator(".late").innerText()).toMatch(
      /^started \S+ after its scheduled time \(includes the schedule's jitter of up to 30s\)$/,
    );
    expect(await fact("Elapsed").innerText()).toMatch(/so far \(running\)$/);
    expect(pageErrors).toEqual([]);
  });

  it("caps the upcoming strip at the 50 fires its note names, a pending jittered fire included", async () => {
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "jitter-strip",
      workflow: "Reports",
      cron: "* * * * *",
      jitter: "50s",
    });
    const sch = await r.ok("GET", "/v1/schedules/jitter-strip");
    expect(sch.next_fire_at).not.toBe(sch.next_fire_times[0]);
    // The browser is past the occurrence, the jittered fire still to come.
    await r.open("#/schedules/jitter-strip");
    await r.page.clock.setFixedTime(new Date(Date.parse(sch.next_fire_times[0]) + 1));
    await r.page.getByRole("button", { name: "24 h" }).click();
    const note = r.page.locator(".window-capped");
    expect(await note.innerText()).toMatch(/^The first 50 fires are shown/);
    await r.page.clock.setFixedTime(new Date(r.clock.now()));
    expect(pageErrors).toEqual([]);
  });

  it("keeps a refused pause's dialog and note, and shows eight lines of an error at a glance", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "pause-down", workflow: "Reports", interval: "1h" });
    await r.open("#/schedules/pause-down");
    await r.page.route("**/v1/schedules/pause-down/pause", (route) => route.abort("connectionrefused"));
    await r.page.click('button[aria-label="Pause pause-down"]');
    await r.page.fill("#dialog-input", "disk full, back at 3");
    await r.page.click("dialog button[value=ok]");
    await r.page.locator("#dialog-error", { hasText: "could not pause pause-down: UNAVAILABLE" }).waitFor();
    expect(await r.page.locator("dialog[open]").count()).toBe(1);
    expect(await r.page.inputValue("#dialog-input")).toBe("disk full, back at 3");
    await r.page.unroute("**/v1/schedules/pause-down/pause");
    await r.page.click("dialog button[value=ok]");
    await r.page.locator("#status p", { hasText: "paused pause-down" }).waitFor();
    expect(await r.ok("GET", "/v1/schedules/pause-down")).toMatchObject({
      paused: true,
      pause_note: "disk full, back at 3",
    });

    // A failed run's 20-line error shows eight of them, then scrolls.
    await lease(r, "Erring", "error-worker");
    await r.ok("POST", "/v1/schedules", { schedule_id: "long-error", workflow: "Erring", cron: "0 * * * *" });
    await r.ok("POST", "/v1/schedules/long-error/trigger", {});
    const [task] = await lease(r, "Erring", "error-worker");
    const lines = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join("\n");
    await r.ok("POST", `/v1/worker/tasks/${task.task_id}/fail`, {
      worker_id: "error-worker",
      error: { message: lines },
      retryable: false,
    });
    await r.open("#/schedules/long-error");
    const shown = await r.page.locator(".glance-error").evaluate((el) => {
      const style = (
        globalThis as unknown as { getComputedStyle(e: unknown): { lineHeight: string } }
      ).getComputedStyle(el);
      return (el as unknown as { clientHeight: number }).clientHeight / Number.parseFloat(style.lineHeight);
    });
    expect(Math.round(shown)).toBe(8);
    expect(pageErrors).toEqual([]);
  });

  it("writes a backfill's numbers with thousands separators", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "thousands", workflow: "Reports", cron: "* * * * *" });
    await r.open("#/schedules/thousands");
    await r.page.click('button[aria-label="Backfill thousands"]');
    await r.page.fill("#backfill-from", "2026-11-01T00:00:00Z");
    await r.page.fill("#backfill-to", "2026-11-01T19:59:00Z");
    await r.page.locator("#backfill-count", { hasText: "The range holds more than 1,000" }).waitFor();
    await r.page.click("dialog button[value=ok]");
    const line = r.page.locator("#status p", { hasText: "backfill" });
    await line.waitFor();
    expect(await line.getAttribute("title")).toBe(
      "backfill 2026-11-01T00:00:00Z … 2026-11-01T19:59:00Z: 1,200 occurrences, 1,200 started, 0 already existed",
    );
    expect(pageErrors).toEqual([]);
  });

  it("retries a failed execution once for a double click", async () => {
    await r.page.route("**/v1/executions/*/retry", async (route) => {
      await sleep(600);
      await route.continue();
    });
    await lease(r, "Retried", "retry-worker");
    const { execution_id: id } = await r.ok("POST", "/v1/executions", {
      execution_id: "retry-twice",
      workflow: "Retried",
      version: "1.0.0",
    });
    const [task] = await lease(r, "Retried", "retry-worker");
    await r.ok("POST", `/v1/worker/tasks/${task.task_id}/fail`, {
      worker_id: "retry-worker",
      error: { message: "boom" },
      retryable: false,
    });
    expect((await r.ok("GET", `/v1/executions/${id}`)).status).toBe("FAILED");
    await r.open(`#/executions/${id}`);
    await r.page.locator('button[data-action="retry"]').dblclick();
    await r.page.locator("#status p", { hasText: `retried ${id}` }).waitFor();
    await sleep(900);
    expect((await r.ok("GET", `/v1/executions/${id}`)).run).toBe(2);
    expect(await r.page.locator("#status").innerText()).not.toContain("could not");
    await r.page.unroute("**/v1/executions/*/retry");
    expect(pageErrors).toEqual([]);
  });
});
