/**
 * Every page of the web UI with schedules in trouble — failed runs with a long unbroken error,
 * dead letters, a long pause note, a long id and description — at a desktop, a tablet and a phone
 * width: nothing runs off the page, no "NaN", "undefined", "[object Object]" or "Invalid Date" is
 * shown or drawn, and the browser logs no error (except the 404s of pages for missing objects).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium, type Json, startRig, type UiRig } from "./browser.js";

const LONG_ID = "failing-report-with-a-rather-long-identifier-to-see-how-the-page-copes-0123456789";
const WIDTHS = [1280, 800, 390];

/** Runs in the page (a string: the test is compiled without the DOM's types). */
const FINDINGS = `(() => {
  const out = [];
  for (const d of document.querySelectorAll("details")) d.open = true;
  const text = document.body.innerText; // what is shown, hidden text left out
  for (const bad of ["NaN", "undefined", "[object Object]", "Invalid Date"]) {
    const i = text.indexOf(bad);
    if (i >= 0) out.push('text "' + bad + '": …' + text.slice(Math.max(0, i - 50), i + 30) + '…');
  }
  const width = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > width + 1) {
    out.push("the page is " + document.documentElement.scrollWidth + " px wide in a " + width + " px window");
  }
  // An element past the window's right edge must be inside something that scrolls or clips it.
  const contained = (el) => {
    for (let p = el.parentElement; p !== null && p !== document.body; p = p.parentElement) {
      if (["auto", "scroll", "hidden"].includes(getComputedStyle(p).overflowX)) return true;
    }
    return false;
  };
  for (const el of document.querySelectorAll("body *")) {
    const rect = el.getBoundingClientRect();
    if (rect.width > 0 && rect.right > width + 1 && !contained(el)) {
      out.push("<" + el.tagName.toLowerCase() + ' class="' + (el.getAttribute("class") ?? "") + '"> ends at ' + rect.right);
      break;
    }
  }
  // A table wider than its box scrolls sideways there, its last columns (the actions, the
  // outcome) out of view with no sign of it: at 1280 px a troubled list's Trigger buttons were cut.
  for (const t of document.querySelectorAll("table")) {
    const box = t.parentElement;
    if (box !== null && t.getBoundingClientRect().width > box.clientWidth + 1) {
      out.push("a table is " + Math.round(t.getBoundingClientRect().width) + " px in its " + box.clientWidth + " px box");
      break;
    }
  }
  // In a card (below 1241 px) nothing is cut: a touch screen has no hover for the title.
  if (width <= 1240) {
    for (const el of document.querySelectorAll("table .clip")) {
      if (el.scrollWidth > el.clientWidth + 1) {
        out.push('cut in a card: "' + (el.textContent ?? "").slice(0, 40) + '"');
        break;
      }
    }
  }
  for (const el of document.querySelectorAll("svg *")) {
    for (const name of el.getAttributeNames()) {
      if (/NaN|undefined|Infinity/.test(el.getAttribute(name) ?? "")) out.push("svg " + name + "=" + el.getAttribute(name));
    }
    if (el.tagName === "title" && /NaN|undefined/.test(el.textContent ?? "")) out.push("svg title " + el.textContent);
  }
  for (const a of document.querySelectorAll("[href]")) {
    const href = a.getAttribute("href") ?? "";
    if (/undefined|NaN|null/.test(href)) out.push("href " + href);
  }
  return out;
})()`;

describe.skipIf(!haveChromium)("web UI with troubled schedules", () => {
  let r: UiRig;
  const consoleErrors: string[] = [];
  beforeAll(async () => {
    r = await startRig();
    r.page.on("console", (m) => {
      if (m.type() === "error") consoleErrors.push(`${r.page.url()}: ${m.text()}`);
    });
  });
  afterAll(async () => {
    await r?.close();
  });

  /** What is wrong on the page as shown: overflow, bad words in text, SVG attributes and links. */
  const findings = () => r.page.evaluate(FINDINGS) as Promise<string[]>;

  it("shows every page whole, at 1280, 800 and 390 px", async () => {
    await r.ok("POST", "/v1/workflows", { name: "Reports", version: "1.0.0" });
    await r.ok("POST", "/v1/schedules", {
      ...{ schedule_id: LONG_ID, workflow: "Reports", cron: "*/10 * * * *", timezone: "Asia/Kolkata" },
      // A description of one unbroken word ran the schedule page to 2,600 px.
      ...{ overlap: "allow", description: `${"A very long description ".repeat(20)}${"x".repeat(320)}` },
    });
    await r.ok("POST", "/v1/schedules", { schedule_id: "dead", workflow: "Reports", interval: "1m", input: {} });
    await r.ok("POST", "/v1/schedules", {
      ...{ schedule_id: "paused-one", workflow: "Reports", interval: "1h", paused: true },
      pause_note: "Waiting for the mail server; ".repeat(10),
    });
    const report = () => r.ok("GET", `/v1/schedules/${LONG_ID}`);
    for (const t of ["2026-11-15T19:00:00Z", "2026-11-15T19:10:00Z"]) {
      const n = (await report()).fired;
      await r.setClock(t);
      await r.until(report, (s: Json) => s.fired === n + 1, `the fire at ${t}`);
    }
    // The worker fails every run for good, with an error message no line break can split.
    const tasks = (
      await r.ok("POST", "/v1/worker/poll", {
        worker_id: "w",
        workflows: [{ name: "Reports", version: "1.0.0", max_attempts: 1, backoff_ms: 0 }],
        max_tasks: 20,
        wait_ms: 0,
      })
    ).tasks;
    expect(tasks.length).toBeGreaterThan(2);
    for (const task of tasks) {
      await r.ok("POST", `/v1/worker/tasks/${task.task_id}/fail`, {
        worker_id: "w",
        error: { message: `mail server refused: ${"x".repeat(300)}`, type: "SMTPError" },
        retryable: false,
      });
    }
    // Dead letters: the latest version's schema refuses the schedule's input, past the misfire grace.
    await r.ok("POST", "/v1/workflows", {
      ...{ name: "Reports", version: "2.0.0" },
      input_schema: { type: "object", required: ["must"], properties: { must: { type: "string" } } },
    });
    const dead = () => r.ok("GET", "/v1/schedules/dead");
    await r.setClock(new Date(r.clock.now() + 60_000).toISOString());
    await r.until(dead, (s: Json) => s.last_error !== null, "the first refused start");
    for (const n of [1, 2]) {
      // Blocked past the misfire grace: the occurrence becomes a dead letter.
      await r.setClock(new Date(r.clock.now() + 120_000).toISOString());
      await r.until(dead, (s: Json) => s.dead_letters.length >= n, `dead letter ${n}`);
    }
    expect((await dead()).dead_letters.length).toBeGreaterThanOrEqual(2);
    const failed = (await r.ok("GET", `/v1/executions?schedule_id=${LONG_ID}&status=FAILED`)).executions;
    expect(failed.length).toBeGreaterThan(0);

    const pages = [
      "#/",
      `#/schedules/${LONG_ID}`,
      "#/schedules/dead",
      "#/schedules/paused-one",
      "#/executions",
      `#/executions/${encodeURIComponent(failed[0].execution_id)}`,
      "#/workflows",
      "#/workflows/Reports",
      "#/workers",
    ];
    const problems: string[] = [];
    for (const width of WIDTHS) {
      await r.page.setViewportSize({ width, height: 900 });
      for (const hash of pages) {
        await r.open(hash);
        for (const f of await findings()) problems.push(`${width} px ${hash.slice(0, 40)}: ${f}`);
      }
      // A long pause note is clipped in the list (its whole text is the tooltip), not a tall column.
      await r.open("#/");
      const row = r.page.locator('tr[data-schedule-id="paused-one"]');
      const note = row.locator(".note");
      expect(await note.getAttribute("title")).toBe("Waiting for the mail server; ".repeat(10));
      if (width > 800) expect((await row.boundingBox())?.height ?? 0).toBeLessThan(120);
    }
    // A schedule whose occurrences cannot start is marked in the list, not only on its own page.
    await r.open("#/");
    const deadRow = r.page.locator('tr[data-schedule-id="dead"]');
    expect(await deadRow.getAttribute("class")).toBe("failing");
    const refusal = (await dead()).last_error as string;
    expect(refusal).toContain("must");
    expect(await deadRow.locator(".start-error").getAttribute("title")).toBe(refusal);
    expect(await deadRow.locator(".start-error").innerText()).toMatch(/^not starting: /);
    expect(problems).toEqual([]);
    expect(consoleErrors).toEqual([]);
  }, 300_000);

  it("says why the last run waits: no worker runs its workflow", async () => {
    await r.ok("POST", "/v1/workflows", { name: "Lonely", version: "1.0.0" });
    await r.ok("POST", "/v1/schedules", { schedule_id: "lonely", workflow: "Lonely", interval: "1m" });
    const lonely = () => r.ok("GET", "/v1/schedules/lonely");
    await r.setClock(new Date(r.clock.now() + 60_000).toISOString());
    await r.until(lonely, (s: Json) => s.last_execution_id !== null, "the first fire");
    const run = (await lonely()).last_execution_id as string;
    const said = (await r.ok("GET", `/v1/executions/${encodeURIComponent(run)}`)).waiting.message as string;
    expect(said).toContain("no worker polls workflow Lonely");

    // In the list too: one request for the workers, not one per row.
    await r.open("#/");
    const hint = r.page.locator('tr[data-schedule-id="lonely"] .no-worker');
    expect(await hint.innerText()).toBe("waiting: no live worker polls Lonely");
    const others = await r.page.locator(".no-worker").count();
    expect(others).toBe(1);

    await r.open("#/schedules/lonely");
    const note = r.page.locator("p.waiting");
    expect(await note.innerText()).toBe(`Waiting: ${run} ${said}`);
    await r.open(`#/executions/${encodeURIComponent(run)}`);
    expect(await r.page.locator("span.waiting").innerText()).toBe(said);
    // A worker polls Lonely now: the list stops saying that none does.
    await r.ok("POST", "/v1/worker/poll", {
      worker_id: "lonely-worker",
      workflows: [{ name: "Lonely", version: "1.0.0", max_attempts: 1, backoff_ms: 0 }],
      max_tasks: 1,
      wait_ms: 0,
    });
    await r.open("#/");
    await r.page.locator('tr[data-schedule-id="lonely"]').waitFor();
    expect(await r.page.locator(".no-worker").count()).toBe(0);
    // 2.0.0 registered before any worker runs it: the schedule's starts take it and wait, though
    // a worker polls the workflow.
    await r.ok("POST", "/v1/workflows", { name: "Lonely", version: "2.0.0" });
    await r.open("#/");
    expect(await r.page.locator('tr[data-schedule-id="lonely"] .no-worker').innerText()).toBe(
      "waiting: no live worker polls Lonely@2.0.0",
    );
    await r.ok("POST", "/v1/worker/poll", {
      worker_id: "lonely-worker",
      workflows: [
        { name: "Lonely", version: "1.0.0", max_attempts: 1, backoff_ms: 0 },
        { name: "Lonely", version: "2.0.0", max_attempts: 1, backoff_ms: 0 },
      ],
      max_tasks: 1,
      wait_ms: 0,
    });
    await r.open("#/");
    await r.page.locator('tr[data-schedule-id="lonely"]').waitFor();
    expect(await r.page.locator(".no-worker").count()).toBe(0);
    expect(consoleErrors).toEqual([]);
  }, 120_000);
});
