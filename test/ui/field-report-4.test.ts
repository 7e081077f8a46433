/**
 * What a newcomer met in Chromium (docs/ui.md) and these tests keep fixed: a version polled only
 * by gone workers still counted as polled.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium, startRig, type UiRig } from "./browser.js";

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
});
