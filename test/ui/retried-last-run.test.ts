/**
 * A schedule whose last run was retried (run 2 of the same execution id) and waits for a worker:
 * its page said the old outcome alone, CANCELLED or FAILED, and not that the retry waits (a tester
 * found it in the CLI; ui/no-worker.js lastRunPending reads it as the CLI does).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium, startRig, type UiRig } from "./browser.js";

describe.skipIf(!haveChromium)("web UI: a retried last run", () => {
  let r: UiRig;
  beforeAll(async () => {
    r = await startRig();
    await r.ok("POST", "/v1/workflows", { name: "Nightly", version: "1.0.0" });
  });
  afterAll(async () => {
    await r?.close();
  });

  it("says the retry waits for a worker on the schedule's page", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "n", workflow: "Nightly", cron: "0 3 * * *" });
    const started = await r.ok("POST", "/v1/schedules/n/trigger", {});
    const id = started.execution_id as string;
    // No worker has taken it: the cancel ends it at once.
    await r.ok("POST", `/v1/executions/${encodeURIComponent(id)}/cancel`, { reason: "not now" });
    expect((await r.ok("GET", "/v1/schedules/n")).last_outcome).toMatchObject({ status: "CANCELLED" });
    await r.ok("POST", `/v1/executions/${encodeURIComponent(id)}/retry`, {});
    await r.open("#/schedules/n");
    const waiting = r.page.locator(".note.waiting");
    await waiting.waitFor();
    expect(await waiting.innerText()).toContain("no worker polls workflow Nightly");
  });
});
