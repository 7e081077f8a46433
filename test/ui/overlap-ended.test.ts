/**
 * What a tester found: the list said "waiting: no live worker polls <workflow>" for a schedule
 * whose last execution differs from its last outcome's, which is also so when an earlier run ended
 * after the last one (overlap `allow`, `cancel_previous`, a backfill): every run had ended, nothing
 * waited, and the line stood under the real outcome. The list asks the server now whether the
 * last execution is still RUNNING.
 */

import { describe, expect, it } from "vitest";
import { haveChromium, type Json, type UiRig, useReportsRig } from "./browser.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!haveChromium)("web UI: the waiting line of a schedule whose runs all ended", () => {
  let r: UiRig;
  const pageErrors = useReportsRig((rig) => {
    r = rig;
  });

  it("says waiting while the last execution runs, and not once an earlier run ended after it", async () => {
    // Registered, and no worker ever polls it.
    await r.ok("POST", "/v1/workflows", { name: "Overlapping", version: "1.0.0" });
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "overlap-ended",
      workflow: "Overlapping",
      interval: "1h",
      overlap: "allow",
      paused: true,
    });
    const first = (await r.ok("POST", "/v1/schedules/overlap-ended/trigger", {})).execution_id as string;
    const second = (await r.ok("POST", "/v1/schedules/overlap-ended/trigger", {})).execution_id as string;
    expect(first).not.toBe(second);
    const sch = await r.ok("GET", "/v1/schedules/overlap-ended");
    expect(sch.last_execution_id).toBe(second);

    // Both wait for a worker: the line says so (asked of the server, so it may come a moment later).
    await r.open("#/?q=overlap-ended");
    const row = r.page.locator('tr[data-schedule-id="overlap-ended"]');
    const hint = row.locator(".no-worker");
    await hint.waitFor();
    expect(await hint.innerText()).toBe("waiting: no live worker polls Overlapping");

    // The newest cancelled first, the first after it: the last outcome names the first, the last
    // execution is the second, and both ended.
    const cancel = (id: string) => r.ok("POST", `/v1/executions/${encodeURIComponent(id)}/cancel`, { reason: "x" });
    await cancel(second);
    await cancel(first);
    const ended = (await r.ok("GET", "/v1/schedules/overlap-ended")) as Json;
    expect(ended.last_execution_id).toBe(second);
    expect(ended.last_outcome?.execution_id).toBe(first);
    expect(ended.last_outcome?.status).toBe("CANCELLED");
    for (const id of [first, second])
      expect((await r.ok("GET", `/v1/executions/${encodeURIComponent(id)}`)).status).toBe("CANCELLED");

    // After a reload and after the page's own refresh alike, no line, and the real outcome.
    await r.open("#/?q=overlap-ended");
    await row.locator(".outcome", { hasText: "CANCELLED" }).waitFor();
    expect(await hint.count()).toBe(0);
    for (let i = 0; i < 10; i++) {
      await sleep(100);
      expect(await hint.count()).toBe(0);
    }
    expect(pageErrors).toEqual([]);
  }, 60_000);

  it("keeps the line off when the rows redraw in place from the running state", async () => {
    await r.ok("POST", "/v1/workflows", { name: "Overlapping2", version: "1.0.0" });
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "overlap-live",
      workflow: "Overlapping2",
      interval: "1h",
      overlap: "allow",
      paused: true,
    });
    const first = (await r.ok("POST", "/v1/schedules/overlap-live/trigger", {})).execution_id as string;
    const second = (await r.ok("POST", "/v1/schedules/overlap-live/trigger", {})).execution_id as string;
    await r.open("#/?q=overlap-live");
    const row = r.page.locator('tr[data-schedule-id="overlap-live"]');
    const hint = row.locator(".no-worker");
    await hint.waitFor();
    // Cancelled while the page stays open: its refresh (every 5 s) redraws the row, at first with
    // the line it last confirmed, then asks the server and takes it off.
    const cancel = (id: string) => r.ok("POST", `/v1/executions/${encodeURIComponent(id)}/cancel`, { reason: "x" });
    await cancel(second);
    await cancel(first);
    await row.locator(".outcome", { hasText: "CANCELLED" }).waitFor({ timeout: 15_000 });
    await hint.waitFor({ state: "detached", timeout: 5_000 });
    for (let i = 0; i < 10; i++) {
      await sleep(100);
      expect(await hint.count()).toBe(0);
    }
    expect(pageErrors).toEqual([]);
  }, 60_000);

  it("says waiting for a run left on a version the live workers no longer poll", async () => {
    // A run started on 1.0.0; the workers moved to 2.0.0, which the schedule's starts take now: the
    // run waits for a 1.0.0 worker that will not come, and the row looked healthy.
    await r.ok("POST", "/v1/workflows", { name: "Moved", version: "1.0.0" });
    await r.ok("POST", "/v1/schedules", { schedule_id: "moved", workflow: "Moved", interval: "1h", paused: true });
    const left = (await r.ok("POST", "/v1/schedules/moved/trigger", {})).execution_id as string;
    await r.ok("POST", "/v1/workflows", { name: "Moved", version: "2.0.0" });
    const poll = (version: string, worker: string) => ({
      worker_id: worker,
      workflows: [{ name: "Moved", version, max_attempts: 1, backoff_ms: 0 }],
      wait_ms: 0,
    });
    expect((await r.ok("POST", "/v1/worker/poll", poll("2.0.0", "w-new"))).tasks).toEqual([]);
    expect((await r.ok("GET", `/v1/executions/${encodeURIComponent(left)}`)).version).toBe("1.0.0");
    await r.open("#/?q=moved");
    const hint = r.page.locator('tr[data-schedule-id="moved"] .no-worker');
    await hint.waitFor();
    expect(await hint.innerText()).toBe("waiting: no live worker polls Moved@1.0.0");
    // A 1.0.0 worker comes back and takes the run: no line after the next refresh.
    expect((await r.ok("POST", "/v1/worker/poll", poll("1.0.0", "w-old"))).tasks).toHaveLength(1);
    await hint.waitFor({ state: "detached", timeout: 15_000 });
    expect(pageErrors).toEqual([]);
  }, 60_000);
});
