/**
 * What an eighteenth tester met: Trigger pressed again after the page said "the server did not
 * answer in 10 s: the change may or may not have been applied" started a second run (a new
 * Idempotency-Key per click), and a paused schedule's page kept the fires it would make if resumed
 * "now" long after they had passed (its revision does not move, and the page redrew on a new
 * revision only). Both move the page's clock on past the server's, so the paused page comes first.
 */
import type { Page, Route } from "playwright-core";
import { describe, expect, it } from "vitest";
import { haveChromium, leaseReports, type UiRig, useReportsRig } from "./browser.js";

/** Holds every request whose URL matches `glob` until the test lets it through. */
async function holdAll(page: Page, glob: string) {
  const held: Route[] = [];
  await page.route(glob, (route) => {
    held.push(route);
  });
  return held;
}

/** The Idempotency-Key a held request carries. */
const keyOf = (route: Route | undefined) => route?.request().headers()["idempotency-key"];

describe.skipIf(!haveChromium)("web UI: a tester's eighteenth report", () => {
  let r: UiRig;
  const pageErrors = useReportsRig((rig) => {
    r = rig;
  });

  it("redraws a paused schedule's fires as they pass, though its revision stands still", async () => {
    await r.ok("POST", "/v1/schedules", {
      ...{ schedule_id: "paused-fires", workflow: "Reports", interval: "20s", paused: true },
    });
    await r.open("#/schedules/paused-fires");
    const firstFire = () =>
      r.page.locator("table.fire-list tbody tr time").first().getAttribute("datetime") as Promise<string>;
    const before = await firstFire();
    expect(Date.parse(before)).toBeGreaterThanOrEqual(r.clock.now());
    const revision = (await r.ok("GET", "/v1/schedules/paused-fires")).revision;
    // A minute on, on both clocks; the page's auto-refresh comes 5 s later.
    const later = r.clock.now() + 65_000;
    r.clock.set(later);
    await r.page.clock.setFixedTime(new Date(later - 5_000));
    await r.page.clock.fastForward(5_000);
    const after = await r.until(firstFire, (t) => t !== before, "the fires redrawn from the refresh's answer");
    expect(Date.parse(after)).toBeGreaterThanOrEqual(later);
    const fromNow = await r.page.locator("table.fire-list tbody tr td").last().innerText();
    expect(fromNow).not.toContain("ago");
    expect((await r.ok("GET", "/v1/schedules/paused-fires")).revision).toBe(revision);
    expect(pageErrors).toEqual([]);
  });

  it("sends an unanswered trigger's key again when Trigger is pressed again, so one run starts", async () => {
    await r.ok("POST", "/v1/schedules", {
      ...{ schedule_id: "twice", workflow: "Reports", cron: "0 0 1 1 *", overlap: "allow" },
    });
    await r.open("#/schedules/twice");
    await r.page.uncheck("#auto-refresh");
    const held = await holdAll(r.page, "**/v1/schedules/twice/trigger");
    const button = r.page.locator('button[aria-label="Trigger twice"]');
    await button.click();
    await r.until(
      async () => held.length,
      (n) => n === 1,
      "the first trigger",
    );
    await r.page.clock.fastForward(10_000);
    await r.page.locator("#status p.warn", { hasText: "may or may not have been applied" }).waitFor();
    // The button is pressable again, as it was: a user who tries again is not stopped.
    await r.until(
      () => button.getAttribute("aria-disabled"),
      (v) => v === null,
      "Trigger pressable again",
    );
    await button.click();
    await r.until(
      async () => held.length,
      (n) => n === 2,
      "the second trigger",
    );
    // What the status line says from now on, each message once.
    await r.page.evaluate(`(() => {
      window.said = [];
      const status = document.getElementById("status");
      new MutationObserver(() => {
        for (const p of status.querySelectorAll("p")) if (!window.said.includes(p.title)) window.said.push(p.title);
      }).observe(status, { childList: true });
    })()`);
    await (held[0] as Route).continue();
    await held[0]?.request().response();
    // The second reaches the server a second later, when a new key would start another run.
    r.clock.advance(1_000);
    await (held[1] as Route).continue();
    await held[1]?.request().response();
    const runs = async () => (await r.ok("GET", "/v1/executions?schedule_id=twice")).executions;
    const [run] = await runs();
    expect((await runs()).length).toBe(1);
    // The same key: the server answered the second with the first's run.
    expect(keyOf(held[1])).toBe(keyOf(held[0]));
    // The first's answer is said when it comes, and the second's names the same run.
    const started = `started execution ${run.execution_id}`;
    await r.page.locator("#status p", { hasText: started }).waitFor();
    expect(await r.page.evaluate("window.said")).toEqual([`trigger twice, answered late: ${started}`, started]);

    // Once an answer said what happened, Trigger is a new action again.
    await r.page.clock.fastForward(1_000);
    await button.click();
    await r.until(
      async () => held.length,
      (n) => n === 3,
      "the third trigger",
    );
    expect(keyOf(held[2])).not.toBe(keyOf(held[0]));
    await (held[2] as Route).continue();
    await r.until(runs, (all) => all.length === 2, "the third trigger's run");
    await r.page.unroute("**/v1/schedules/twice/trigger");
    expect(pageErrors).toEqual([]);
  });

  it("sends an unanswered retry's key again when Retry is pressed again", async () => {
    const { execution_id: id } = await r.ok("POST", "/v1/executions", {
      ...{ execution_id: "retry-unanswered", workflow: "Reports", version: "1.0.0" },
    });
    // The runs the trigger test started are pending too: this execution's task.
    const task = (await leaseReports(r, "retry-worker")).find((t: { execution_id: string }) => t.execution_id === id);
    await r.ok("POST", `/v1/worker/tasks/${task.task_id}/fail`, {
      ...{ worker_id: "retry-worker", error: { message: "boom" }, retryable: false },
    });
    await r.open(`#/executions/${id}`);
    await r.page.uncheck("#auto-refresh");
    const held = await holdAll(r.page, "**/v1/executions/*/retry");
    const button = r.page.locator('button[data-action="retry"]');
    await button.click();
    await r.until(
      async () => held.length,
      (n) => n === 1,
      "the first retry",
    );
    await r.page.clock.fastForward(10_000);
    await r.page.locator("#status p.warn", { hasText: "may or may not have been applied" }).waitFor();
    await r.until(
      () => button.getAttribute("aria-disabled"),
      (v) => v === null,
      "Retry pressable again",
    );
    await button.click();
    await r.until(
      async () => held.length,
      (n) => n === 2,
      "the second retry",
    );
    expect(keyOf(held[1])).toBe(keyOf(held[0]));
    await (held[0] as Route).continue();
    await (held[1] as Route).continue();
    await r.page.locator("#status p", { hasText: `retried ${id}: RUNNING (run 2)` }).waitFor();
    expect((await r.ok("GET", `/v1/executions/${id}`)).run).toBe(2);
    await r.page.unroute("**/v1/executions/*/retry");
    expect(pageErrors).toEqual([]);
  });
});
