/**
 * What a tester met driving the UI in Chromium, kept fixed: an open server's sign-in page took any
 * token and the header read "signed in as ?"; 212 buffered occurrences made a cell 3,066 px tall;
 * right-to-left overrides in user text turned the text around it; the edit form and the backfill
 * dialog put the caret before their text; an ended schedule offered windows of fires it will not
 * make; a phone was told to hover; dead letters hid behind "0 failed"; a failed run's error was not
 * in the executions list.
 */
import { describe, expect, it } from "vitest";
import { haveChromium, type Json, leaseReports, type UiRig, useReportsRig } from "./browser.js";

describe.skipIf(!haveChromium)("web UI: a tester's sixth report", () => {
  let r: UiRig;
  const pageErrors = useReportsRig((rig) => {
    r = rig;
  });
  const later = (ms: number) => new Date(r.clock.now() + ms).toISOString();

  it("says an open server needs no token, keeps none, and names nobody in the header", async () => {
    await r.open("#/signin");
    await r.page.locator("#signin-open").waitFor();
    expect(await r.page.locator("main").innerText()).toContain("no access control");
    expect(await r.page.locator("#signin-token").count()).toBe(0);
    // A token kept from before (or typed) is not kept, and the header does not read "signed in as ?".
    await r.page.evaluate(`sessionStorage.setItem("orbit.token", "anything")`);
    await r.open("#/");
    expect(await r.page.locator("#identity").innerText()).not.toContain("signed in as");
    await r.open("#/signin");
    await r.page.locator("#signin-open").waitFor();
    expect(await r.page.evaluate(`sessionStorage.getItem("orbit.token")`)).toBeNull();
    expect(pageErrors).toEqual([]);
  });

  it("shows a long overlap buffer as its count, the oldest five and the newest, the rest folded", async () => {
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "backlog",
      workflow: "Reports",
      interval: "1h",
      overlap: "buffer_all",
    });
    const get = () => r.ok("GET", "/v1/schedules/backlog");
    // Nothing runs the first execution: every occurrence after it waits in the buffer.
    for (let n = 1; n <= 10; n++) {
      const next = (await get()).next_fire_at as string;
      await r.setClock(next);
      await r.until(get, (s: Json) => s.fired + s.buffered.length === n, `fire ${n}`);
    }
    const buffered = (await get()).buffered as string[];
    expect(buffered.length).toBe(9);
    await r.open("#/schedules/backlog");
    const short = r.page.locator("dl.settings .buffered-short");
    expect(await short.innerText()).toContain("9: ");
    expect(await short.innerText()).toContain("… 3 more");
    expect(await short.locator("time").count()).toBe(6);
    expect(await short.locator("time").last().getAttribute("datetime")).toBe(buffered.at(-1));
    // The whole list is one click away.
    const all = r.page.locator("dl.settings details.buffered-all");
    await all.locator("summary").click();
    expect(await all.locator("time").count()).toBe(9);
    expect(await all.locator("time").first().isVisible()).toBe(true);
  });

  it("writes bidi controls in JSON as escapes and keeps a right-to-left string from taking the punctuation", async () => {
    await r.ok("POST", "/v1/schedules", {
      schedule_id: "rtl",
      workflow: "Reports",
      interval: "1h",
      input: { s: "\u202eשלום", שלום: 1 },
      description: "invoice\u202e gnp.exe",
    });
    await r.open("#/schedules/rtl");
    const input = r.page.locator("dl.settings pre.json");
    const text = await input.innerText();
    expect(text).toContain('"s": "\\u202eשלום"');
    expect(text).not.toContain("\u202e");
    // `"שלום": 1`: unisolated, the number took the key's direction and was drawn left of it.
    const order = await r.page.evaluate(`(() => {
      const pre = document.querySelector("dl.settings pre.json");
      const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
      const nodes = [];
      for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node);
      // The last place a text node holds \`want\`, as drawn.
      const at = (want) => {
        for (const node of nodes.reverse()) {
          const i = node.data.lastIndexOf(want);
          if (i < 0) continue;
          const range = document.createRange();
          range.setStart(node, i);
          range.setEnd(node, i + want.length);
          return range.getBoundingClientRect();
        }
        return null;
      };
      const key = at("שלום");
      const one = at("1");
      return { keyRight: key.right, oneLeft: one.left };
    })()`);
    const { keyRight, oneLeft } = order as { keyRight: number; oneLeft: number };
    expect(oneLeft).toBeGreaterThanOrEqual(keyRight - 1);
    // User text is an isolate of its own: its direction stays in it.
    for (const selector of [".detail-view h1 bdi", "p.description"]) {
      const bidi = await r.page
        .locator(selector)
        .first()
        .evaluate(
          // Runs in the page, which has the DOM's globals; this project's types do not.
          (el) =>
            (globalThis as unknown as { getComputedStyle(e: unknown): { unicodeBidi: string } }).getComputedStyle(el)
              .unicodeBidi,
        );
      expect(bidi, selector).toBe("isolate");
    }
    await r.ok("POST", "/v1/schedules/rtl/pause", { note: "\u202eheld by ops" });
    await r.open("#/schedules/rtl");
    const note = r.page.locator("p.note bdi");
    expect(await note.innerText()).toBe("\\u202eheld by ops");
    await r.page.click('button[aria-label="Resume rtl"]');
    await r.page.click("dialog button[value=ok]");
    await r.page.locator("#status", { hasText: "resumed rtl" }).waitFor();
  });

  it("opens the edit form and the backfill dialog with the caret after the text", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "caret", workflow: "Reports", interval: "2h" });
    await r.open("#/schedules/caret");
    await r.page.click('button[aria-label="Edit caret"]');
    await r.page.locator("#e-timing").waitFor();
    await r.page.keyboard.type("0");
    expect(await r.page.inputValue("#e-timing")).toBe("2h0");
    await r.page.keyboard.press("Escape");
    await r.open("#/schedules/caret");
    await r.page.click('button[aria-label="Backfill caret"]');
    await r.page.locator("#backfill-from").waitFor();
    const before = await r.page.inputValue("#backfill-from");
    await r.page.keyboard.type("x");
    expect(await r.page.inputValue("#backfill-from")).toBe(`${before}x`);
    await r.page.click("dialog button[value=cancel]");
  });

  it("offers no window of fires for an ended schedule", async () => {
    await r.ok("POST", "/v1/schedules", { schedule_id: "once", workflow: "Reports", interval: "1h", max_runs: 1 });
    const get = () => r.ok("GET", "/v1/schedules/once");
    await r.setClock((await get()).next_fire_at);
    await r.until(get, (s: Json) => s.state === "ended", "the end of the schedule");
    await r.open("#/schedules/once");
    await r.page.locator(".upcoming-note", { hasText: "The schedule has ended" }).waitFor();
    expect(await r.page.locator('[role=group][aria-label="Time window"]').count()).toBe(0);
  });

  it("tells no phone to hover", async () => {
    await r.open("#/");
    const hint = r.page.locator("#list-summary .hover-hint");
    expect(await hint.isVisible()).toBe(true);
    const cdp = await r.context.newCDPSession(r.page);
    await cdp.send("Emulation.setTouchEmulationEnabled", { enabled: true, maxTouchPoints: 1 });
    // A touch screen, as a phone's: Chromium then matches (hover: none).
    expect(await r.page.evaluate(`matchMedia("(hover: none)").matches`)).toBe(true);
    try {
      expect(await hint.isVisible()).toBe(false);
      expect(await r.page.locator("#list-summary").innerText()).not.toContain("Hover");
    } finally {
      await cdp.send("Emulation.setTouchEmulationEnabled", { enabled: false });
      await cdp.detach();
    }
  });

  it("counts dead letters at a glance, where failures read 0", async () => {
    await r.ok("POST", "/v1/workflows", { name: "Strict", version: "1.0.0" });
    await r.ok("POST", "/v1/schedules", { schedule_id: "undeliverable", workflow: "Strict", interval: "1m" });
    // The latest version's schema refuses the schedule's input: every start is refused.
    await r.ok("POST", "/v1/workflows", {
      ...{ name: "Strict", version: "2.0.0" },
      input_schema: { type: "object", required: ["must"] },
    });
    const get = () => r.ok("GET", "/v1/schedules/undeliverable");
    await r.setClock(later(60_000));
    await r.until(get, (s: Json) => s.last_error !== null, "the first refused start");
    for (const n of [1, 2]) {
      // Blocked past the misfire grace: the occurrence becomes a dead letter.
      await r.setClock(later(120_000));
      await r.until(get, (s: Json) => s.dead_letters.length >= n, `dead letter ${n}`);
    }
    const sch = await get();
    expect(sch.consecutive_failures).toBe(0);
    await r.open("#/schedules/undeliverable");
    const glance = r.page.locator("section.glance");
    const item = glance.locator(".glance-dead-letters");
    expect(await item.textContent()).toContain("Dead letters");
    expect(Number(await item.locator("strong").innerText())).toBeGreaterThanOrEqual(sch.dead_letters.length);
    expect(await glance.getAttribute("class")).toContain("failing");
  });

  it("says a failed run's error in the executions list, cut short", async () => {
    await r.ok("POST", "/v1/executions", { execution_id: "broke", workflow: "Reports", version: "1.0.0" });
    const tasks = await leaseReports(r, "w6");
    const task = tasks.find((t: Json) => t.execution_id === "broke");
    expect(task).toBeDefined();
    const message = `mail server refused: ${"x".repeat(200)}`;
    await r.ok("POST", `/v1/worker/tasks/${task.task_id}/fail`, {
      worker_id: "w6",
      error: { message, type: "SMTPError" },
      retryable: false,
    });
    await r.open("#/executions?status=FAILED");
    const line = r.page.locator('tr[data-execution-id="broke"] .run-error');
    const shown = await line.innerText();
    expect(shown.startsWith("mail server refused: xxx")).toBe(true);
    expect(shown.length).toBeLessThan(100);
    expect(await line.getAttribute("title")).toBe(message);
    // `throw new Error("")`: the list showed a red FAILED and no text (a tester); the type says what was thrown.
    await r.ok("POST", "/v1/executions", { execution_id: "broke-quietly", workflow: "Reports", version: "1.0.0" });
    const quiet = (await leaseReports(r, "w6")).find((t: Json) => t.execution_id === "broke-quietly");
    await r.ok("POST", `/v1/worker/tasks/${quiet.task_id}/fail`, {
      worker_id: "w6",
      error: { message: "", type: "RangeError" },
      retryable: false,
    });
    await r.open("#/executions?status=FAILED");
    const quietLine = r.page.locator('tr[data-execution-id="broke-quietly"] .run-error');
    expect(await quietLine.innerText()).toBe("RangeError (thrown without a message)");
    expect(pageErrors).toEqual([]);
  });
});
