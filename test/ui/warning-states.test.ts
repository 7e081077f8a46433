/**
 * What a tester (h4) saw with a real server and worker: a schedule whose every occurrence is
 * refused at start kept its green COMPLETED badge in the list (its last run, long before); a
 * schedule whose last run waits for a worker that died had amber words and no edge in the list, and
 * grey italics in a plain box on its page; a `cancel_previous` schedule whose runs are replaced read
 * a grey CANCELLED with no edge. Each state keeps its words: colour is never the only sign.
 */
import { describe, expect, it } from "vitest";
import { haveChromium, type Json, SHOTS, type UiRig, useReportsRig } from "./browser.js";

// The functions handed to the page run there, with the browser's globals; this file is compiled
// without the DOM's types (tsconfig.json types Node), so the one it uses is declared here.
// biome-ignore lint/suspicious/noExplicitAny: a browser global, typed by the browser
declare const getComputedStyle: any;

/** Runs in the page: the computed value of a CSS variable of the root, as `rgb(…)`. */
const VAR_RGB = `((name) => {
  const probe = document.createElement("span");
  probe.style.color = "var(" + name + ")";
  document.body.append(probe);
  const rgb = getComputedStyle(probe).color;
  probe.remove();
  return rgb;
})`;

describe.skipIf(!haveChromium)("web UI: warning states read as warnings", () => {
  let r: UiRig;
  const pageErrors = useReportsRig((rig) => {
    r = rig;
  });
  const color = (name: string): Promise<string> => r.page.evaluate(`${VAR_RGB}(${JSON.stringify(name)})`);
  /** Polls `name@version` as worker `worker` and hands back the tasks it was given. */
  const poll = async (worker: string, name: string, version = "1.0.0"): Promise<Json[]> =>
    (
      await r.ok("POST", "/v1/worker/poll", {
        worker_id: worker,
        workflows: [{ name, version, max_attempts: 1, backoff_ms: 0 }],
        max_tasks: 10,
        wait_ms: 0,
      })
    ).tasks;
  const edgeOf = (id: string) =>
    r.page.locator(`tr[data-schedule-id="${id}"] > th[scope="row"]`).evaluate((th) => getComputedStyle(th).boxShadow);

  it("badges a schedule that cannot start START FAILED, its old COMPLETED greyed", async () => {
    await r.ok("POST", "/v1/workflows", { name: "Typed", version: "1.0.0" });
    await r.ok("POST", "/v1/schedules", { schedule_id: "refused", workflow: "Typed", interval: "1m", input: {} });
    const started = (await r.ok("POST", "/v1/schedules/refused/trigger", {})).execution_id as string;
    const [task] = await poll("w-typed", "Typed");
    expect(task.execution_id).toBe(started);
    await r.ok("POST", `/v1/worker/tasks/${task.task_id}/complete`, { worker_id: "w-typed", result: {} });
    // The latest version refuses the schedule's input: every occurrence from now on is refused.
    await r.ok("POST", "/v1/workflows", {
      ...{ name: "Typed", version: "2.0.0" },
      input_schema: { type: "object", required: ["n"], properties: { n: { type: "string" } } },
    });
    const get = () => r.ok("GET", "/v1/schedules/refused");
    await r.setClock(new Date(r.clock.now() + 60_000).toISOString());
    const sch = await r.until(get, (s: Json) => typeof s.last_error === "string", "the refused start");
    expect(sch.last_outcome.status).toBe("COMPLETED");
    expect(sch.consecutive_failures).toBe(0);

    await r.open("#/?q=refused");
    const row = r.page.locator('tr[data-schedule-id="refused"]');
    expect(await row.getAttribute("class")).toBe("failing");
    // The row's badge is the state it is in, red, in words; the old outcome is greyed under it.
    const cell = row.locator('td[data-label="Last outcome"]');
    const badge = cell.locator(".start-failed > .badge");
    expect(await badge.innerText()).toBe("START FAILED");
    expect(await badge.evaluate((b) => getComputedStyle(b).color)).toBe(await color("--error"));
    const old = cell.locator(".start-failed .last-run");
    expect((await old.innerText()).replace(/\s+/g, " ").trim()).toBe("last run COMPLETED");
    const oldColor = await old.locator(".badge").evaluate((b) => getComputedStyle(b).color);
    expect(oldColor).toBe(await color("--muted"));
    expect(oldColor).not.toBe(await color("--ok"));
    // No green badge anywhere in the cell, and the refusal still said in red.
    for (const b of await cell.locator(".badge").all())
      expect(await b.evaluate((e) => getComputedStyle(e).color)).not.toBe(await color("--ok"));
    expect(await cell.locator(".start-error").innerText()).toMatch(/^not starting: /);
    await row.screenshot({ path: `${SHOTS}/start-failed-row.png` });
    expect(pageErrors).toEqual([]);
  }, 60_000);

  it("gives a row whose last run waits for a dead worker the amber edge, and its page an amber warning", async () => {
    await r.ok("POST", "/v1/workflows", { name: "Die", version: "1.0.0" });
    await r.ok("POST", "/v1/schedules", { schedule_id: "dies", workflow: "Die", interval: "1h", paused: true });
    // A worker polled Die once, then died: two minutes later it is gone, and the run waits.
    expect(await poll("w-dies", "Die")).toEqual([]);
    await r.setClock(new Date(r.clock.now() + 120_000).toISOString());
    const run = (await r.ok("POST", "/v1/schedules/dies/trigger", {})).execution_id as string;
    const exec = await r.ok("GET", `/v1/executions/${encodeURIComponent(run)}`);
    expect(exec.status).toBe("RUNNING");
    expect(exec.waiting.message).toMatch(/^no worker polls workflow Die/);

    await r.open("#/?q=dies");
    const row = r.page.locator('tr[data-schedule-id="dies"]');
    const line = row.locator(".no-worker");
    await line.waitFor();
    expect(await line.innerText()).toBe("waiting: no live worker polls Die");
    await r.until(
      () => row.getAttribute("class"),
      (c) => c === "no-worker-row",
      "the row's waiting class",
    );
    expect(await edgeOf("dies")).toContain(await color("--warn"));

    await r.open("#/schedules/dies");
    const waiting = r.page.locator(".note.waiting");
    await waiting.waitFor();
    expect(await waiting.innerText()).toContain("Waiting:");
    const look = await waiting.evaluate((p) => {
      const s = getComputedStyle(p);
      const label = getComputedStyle(p.querySelector("strong"));
      return { italic: s.fontStyle, edge: s.borderLeftColor, edgeWidth: s.borderLeftWidth, label: label.color };
    });
    expect(look.italic).toBe("normal");
    expect(look.edge).toBe(await color("--warn"));
    expect(look.edgeWidth).toBe("4px");
    expect(look.label).toBe(await color("--warn"));
    const glance = r.page.locator(".glance");
    expect(await glance.getAttribute("class")).toContain("waiting-last");
    expect(await glance.evaluate((g) => getComputedStyle(g).borderLeftColor)).toBe(await color("--warn"));
    await r.page.screenshot({ path: `${SHOTS}/waiting-dead-worker.png` });
    expect(pageErrors).toEqual([]);
  }, 60_000);

  it("marks a cancel_previous schedule whose last run was replaced: amber edge and its words", async () => {
    await r.ok("POST", "/v1/workflows", { name: "Long", version: "1.0.0" });
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "replaced",
      workflow: "Long",
      interval: "1h",
      overlap: "cancel_previous",
      paused: true,
    });
    // A live worker polls Long (so no run waits for want of one); each start replaces the one before.
    expect(await poll("w-long", "Long")).toEqual([]);
    const first = (await r.ok("POST", "/v1/schedules/replaced/trigger", {})).execution_id as string;
    await r.ok("POST", "/v1/schedules/replaced/trigger", {});
    const sch = await r.ok("GET", "/v1/schedules/replaced");
    expect(sch.last_outcome).toMatchObject({ execution_id: first, status: "CANCELLED" });
    expect(sch.last_outcome.error).toBe(
      "schedule `replaced`: replaced by the next occurrence (overlap cancel_previous)",
    );

    await r.open("#/?q=replaced");
    const row = r.page.locator('tr[data-schedule-id="replaced"]');
    expect(await row.getAttribute("class")).toBe("replaced-last");
    expect(await edgeOf("replaced")).toContain(await color("--warn"));
    const note = row.locator(".replaced-note");
    expect(await note.innerText()).toBe("replaced before it finished");
    expect(await note.getAttribute("title")).toContain("overlap cancel_previous");
    await row.screenshot({ path: `${SHOTS}/replaced-row.png` });
    // Someone's cancel is not a replacement: no edge, no note.
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "cancelled-by-hand",
      workflow: "Long",
      interval: "1h",
      paused: true,
    });
    const run = (await r.ok("POST", "/v1/schedules/cancelled-by-hand/trigger", {})).execution_id as string;
    await r.ok("POST", `/v1/executions/${encodeURIComponent(run)}/cancel`, { reason: "not today" });
    await r.open("#/?q=cancelled-by-hand");
    const other = r.page.locator('tr[data-schedule-id="cancelled-by-hand"]');
    await other.locator(".outcome", { hasText: "CANCELLED" }).waitFor();
    expect(await other.getAttribute("class")).toBe("");
    expect(await other.locator(".replaced-note").count()).toBe(0);
    expect(pageErrors).toEqual([]);
  }, 60_000);
});
