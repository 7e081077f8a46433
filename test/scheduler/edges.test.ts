/**
 * The policies at their edges (issue 10, items 1-3), on both dialects with a manual clock: a
 * blocked start on a short interval, catch-up keeping the freshest missed occurrences, and missed
 * rows that describe exactly the occurrences they cover.
 */
import { expect, it } from "vitest";
import { isActiveStatus } from "../../src/domain/execution.js";
import { serializeJson } from "../../src/domain/json-text.js";
import type { Store } from "../../src/store/store.js";
import { formatInstant, parseInstant } from "../../src/time/format.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { accountsOf, settled } from "./audit.js";
import { type Harness, makeHarness } from "./harness.js";

const t = (s: string): number => parseInstant(s);

async function startedIds(store: Store, scheduleId: string): Promise<string[]> {
  const rows = await store.listExecutions({ scheduleId, limit: 1000 });
  return rows.map((e) => e.executionId.slice(scheduleId.length + 1)).sort();
}

/** Schedule "s" every 10 s with buffer_one: 00:00:10 started (it runs on), 00:00:20 buffered behind it. */
async function runningWithOneBuffered(store: Store): Promise<Harness> {
  const h = await makeHarness(store, { now: "2026-11-15T00:00:00.500Z" });
  await h.scheduler.schedules.create({
    schedule_id: "s",
    workflow: "OrderProcessing",
    interval: "10s",
    overlap: "buffer_one",
  });
  await h.fireAt("2026-11-15T00:00:10Z");
  await h.fireAt("2026-11-15T00:00:20Z");
  return h;
}

/** Moves the clock second by second from `from` to `to`, firing whatever is due. */
async function runSeconds(h: Harness, from: string, to: string): Promise<void> {
  for (let ms = t(from); ms <= t(to); ms += 1000) await h.fireAt(formatInstant(ms));
}

/** The occurrences of a 10 s schedule from `from` to `to`, inclusive, as instants. */
function every10s(from: string, to: string): string[] {
  const out: string[] = [];
  for (let ms = t(from); ms <= t(to); ms += 10_000) out.push(formatInstant(ms));
  return out;
}

describeEachDialect("scheduler: the policies at their edges", (dialect) => {
  const db = useStore(dialect);

  for (const overlap of ["skip", "allow"] as const) {
    it(`a start blocked by --max-active-executions on a 5 s interval (${overlap}) dead-letters each occurrence and keeps going`, async () => {
      const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00.500Z", maxActiveExecutions: 1 });
      await h.executions.start({ executionId: "blocker", workflow: "OrderProcessing", input: { order_id: "b" } });
      await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "5s", overlap });
      await runSeconds(h, "2026-11-15T00:00:01Z", "2026-11-15T00:03:00Z");
      const s = await h.scheduler.schedules.get("s");
      expect(s.fired).toBe(0);
      expect(s.last_error).toContain("--max-active-executions");
      // Never minutes behind: the first undecided occurrence is at most a retry (5 s) old.
      const next = t(String((s.next_fire_times as string[])[0]));
      expect(t("2026-11-15T00:03:00Z") - next).toBeLessThanOrEqual(5000);
      // Every occurrence before it is in the ledger exactly once: dead letters or missed.
      const accounts = settled(await accountsOf(db.store, "s"));
      const expected = [];
      for (let o = t("2026-11-15T00:00:05Z"); o < next; o += 5000) expected.push(o);
      expect([...accounts.keys()].sort((a, b) => a - b)).toEqual(expected);
      for (const a of accounts.values()) expect(["dead_letter", "skipped:missed"]).toContain(a);
      expect(s.skipped).toBe(expected.length);
      expect((s.dead_letters as unknown[]).length).toBeGreaterThan(0);
      // The overdue gauge's query sees it: due, and not starting.
      expect(await db.store.countOverdueSchedules(t("2026-11-15T00:03:00Z") - 60_000)).toBe(1);
      // Once the blocker ends, the schedule starts again at once; under allow its own execution
      // then holds the one slot, so the next start is refused again: overdue once nothing has
      // started for longer than the grace (docs/design.md § Overdue), not at its first refusal.
      await h.executions.complete("blocker", {});
      await runSeconds(h, "2026-11-15T00:03:01Z", "2026-11-15T00:03:10Z");
      expect((await h.scheduler.schedules.get("s")).fired).toBe(1);
      expect(await db.store.countOverdueSchedules(t("2026-11-15T00:03:10Z") - 60_000)).toBe(0);
      if (overlap !== "skip") {
        await runSeconds(h, "2026-11-15T00:03:11Z", "2026-11-15T00:04:15Z");
        expect((await h.scheduler.schedules.get("s")).fired).toBe(1);
        expect(await db.store.countOverdueSchedules(t("2026-11-15T00:04:15Z") - 60_000)).toBe(1);
      }
    });
  }

  it("a 3 s interval whose input the latest version refuses (catch_up) dead-letters past the grace and keeps going", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00.500Z" });
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      interval: "3s",
      catchup: "catch_up",
      max_catch_up: 5,
      overlap: "allow",
    });
    await h.workflows.register({
      name: "OrderProcessing",
      version: "2.0.0",
      input_schema: { type: "object", required: ["order_id"] },
    });
    await runSeconds(h, "2026-11-15T00:00:01Z", "2026-11-15T00:04:00Z");
    const s = await h.scheduler.schedules.get("s");
    expect(s.fired).toBe(0);
    expect(s.last_error).toContain("order_id");
    const next = t(String((s.next_fire_times as string[])[0]));
    // Catch-up retries an occurrence until it is past the grace, then dead-letters it.
    expect(t("2026-11-15T00:04:00Z") - next).toBeLessThanOrEqual(60_000 + 5000);
    const accounts = settled(await accountsOf(db.store, "s"));
    const expected = [];
    for (let o = t("2026-11-15T00:00:03Z"); o < next; o += 3000) expected.push(o);
    expect([...accounts.keys()].sort((a, b) => a - b)).toEqual(expected);
    expect(s.skipped).toBe(expected.length);
    expect(await db.store.countOverdueSchedules(t("2026-11-15T00:04:00Z") - 60_000)).toBe(1);
  });

  it("catch_up after an outage from 00:00:05 to 00:02:00 starts every missed occurrence, the freshest included", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00Z" });
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      interval: "10s",
      catchup: "catch_up",
      max_catch_up: 100,
      overlap: "allow",
    });
    await h.fireAt("2026-11-15T00:02:00Z");
    expect(await startedIds(db.store, "s")).toEqual(every10s("2026-11-15T00:00:10Z", "2026-11-15T00:02:00Z"));
    expect(await h.scheduler.schedules.get("s")).toMatchObject({ fired: 12, skipped: 0 });
  });

  it("resume {catch_up: true} over the same hole starts every paused occurrence", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00Z" });
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      interval: "10s",
      catchup: "catch_up",
      max_catch_up: 100,
      overlap: "allow",
    });
    await h.fireAt("2026-11-15T00:00:05Z");
    await h.scheduler.actions.pause("s", {});
    await h.fireAt("2026-11-15T00:02:00Z");
    await h.scheduler.actions.resume("s", { catch_up: true });
    await h.fireAt("2026-11-15T00:02:00Z");
    expect(await startedIds(db.store, "s")).toEqual(every10s("2026-11-15T00:00:10Z", "2026-11-15T00:02:00Z"));
  });

  it("catchup_window 50s starts exactly the occurrences of the last 50 s, the freshest included", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00Z" });
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      interval: "10s",
      catchup: "catch_up",
      max_catch_up: 100,
      catchup_window: "50s",
      overlap: "allow",
    });
    await h.fireAt("2026-11-15T00:02:00Z");
    expect(await startedIds(db.store, "s")).toEqual(every10s("2026-11-15T00:01:10Z", "2026-11-15T00:02:00Z"));
    const accounts = settled(await accountsOf(db.store, "s"));
    for (const o of every10s("2026-11-15T00:00:10Z", "2026-11-15T00:01:00Z")) {
      expect(accounts.get(t(o))).toBe("skipped:missed");
    }
  });

  it("max_catch_up 3 over a 2-minute hole: the missed row covers exactly the occurrences that did not start", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00Z" });
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      interval: "10s",
      catchup: "catch_up",
      max_catch_up: 3,
      overlap: "allow",
    });
    await h.fireAt("2026-11-15T00:02:00Z");
    const started = await startedIds(db.store, "s");
    expect(started).toEqual(every10s("2026-11-15T00:01:30Z", "2026-11-15T00:02:00Z"));
    const accounts = settled(await accountsOf(db.store, "s"));
    for (const o of every10s("2026-11-15T00:00:10Z", "2026-11-15T00:02:00Z")) {
      expect(accounts.get(t(o))).toBe(started.includes(o) ? "started" : "skipped:missed");
    }
    expect(await h.scheduler.schedules.get("s")).toMatchObject({ fired: 4, skipped: 8 });
  });

  it("an update between a buffer's wake-up and its fire keeps the buffered occurrence due", async () => {
    // Found reading a race run's buffers: the update set the row's due time to the new timing's next fire, so a
    // buffer woken by its blocker's end waited for that fire (an hour here; a day for a daily one).
    const h = await runningWithOneBuffered(db.store);
    // The running execution ends (no worker took it, so a cancel ends it at once): the buffer wakes.
    await h.executions.cancel("s:2026-11-15T00:00:10Z", { reason: "ended" });
    expect((await db.store.getSchedule("s"))?.dueMs).toBe(t("2026-11-15T00:00:20Z"));
    h.clock.set(t("2026-11-15T00:00:21Z"));
    await h.scheduler.schedules.update("s", { interval: "1h" });
    // A new timing decides first what came due under the old one (docs/scheduling.md § Updates):
    // the woken buffer starts in the update itself.
    expect((await h.executions.get("s:2026-11-15T00:00:20Z")).status).toBe("RUNNING");
    await h.fireAt("2026-11-15T00:00:21Z");
    expect((await h.executions.get("s:2026-11-15T00:00:20Z")).status).toBe("RUNNING");
    expect(await h.scheduler.schedules.get("s")).toMatchObject({ buffered: [], next_fire_at: "2026-11-15T01:00:00Z" });
  });

  it("cancel_previous on a schedule that still holds a buffer (switched from buffer_one) fires and triggers, never stalls", async () => {
    // Found by the model-based test: the cancel's execution-ended hook woke the row's own buffer,
    // which moved its revision and made the fire's (and the trigger's) compare-and-set fail forever.
    const h = await runningWithOneBuffered(db.store);
    expect((await db.store.getSchedule("s"))?.buffered).toEqual([t("2026-11-15T00:00:20Z")]);
    await h.scheduler.schedules.update("s", { overlap: "cancel_previous" });
    await h.fireAt("2026-11-15T00:00:30Z");
    // The buffer is settled by the new policy first, oldest first: 00:20 cancels 00:10, 00:30 cancels 00:20.
    expect((await h.executions.get("s:2026-11-15T00:00:10Z")).status).toBe("CANCELLED");
    expect((await h.executions.get("s:2026-11-15T00:00:20Z")).status).toBe("CANCELLED");
    expect((await h.executions.get("s:2026-11-15T00:00:30Z")).status).not.toBe("CANCELLED");
    const triggered = await h.scheduler.actions.trigger("s", {});
    expect(triggered.started).toBe(true);
    expect((await h.executions.get("s:2026-11-15T00:00:30Z")).status).toBe("CANCELLED");
    // The loop finds nothing more to do at 00:30; the row moves on.
    await h.fireAt("2026-11-15T00:00:30Z");
    expect(await h.scheduler.schedules.get("s")).toMatchObject({
      fired: 4,
      buffered: [],
      next_fire_at: "2026-11-15T00:00:40Z",
    });
  });

  it("shows the input with its keys in the order given, on both stores (jsonb orders them its own way)", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00.500Z" });
    const input = { order_id: "R-1", customer_id: "cust-1", amount: 120, items: [{ sku: "BOOK-1", quantity: 1 }] };
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "10s", input });
    const order = '{"order_id":"R-1","customer_id":"cust-1","amount":120,"items":[{"sku":"BOOK-1","quantity":1}]}';
    expect(serializeJson((await h.scheduler.schedules.get("s")).input)).toBe(order);
    const listed = (await h.scheduler.schedules.list({})).schedules[0];
    expect(serializeJson(listed?.input)).toBe(order);
    // An update of something else keeps it; a new input is shown as given too.
    await h.scheduler.schedules.update("s", { description: "d" });
    expect(serializeJson((await h.scheduler.schedules.get("s")).input)).toBe(order);
    await h.scheduler.schedules.update("s", { input: { zeta: 1, alpha: { y: 2, b: 3 } } });
    expect(serializeJson((await h.scheduler.schedules.get("s")).input)).toBe('{"zeta":1,"alpha":{"y":2,"b":3}}');
  });

  it("keeps the keys in the order given in what an execution carries: input, trigger, result, events, steps", async () => {
    // PostgreSQL stores these as JSON, not JSONB, which would reorder them shortest first (docs/storage.md § JSON columns).
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00.500Z" });
    const input = { zeta: 1, alpha: { yy: 2, b: 3 }, mid: [{ q: 1, aa: 2 }] };
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", interval: "10s", input });
    await h.fireAt("2026-11-15T00:00:10Z");
    const id = "s:2026-11-15T00:00:10Z";
    const given = '{"zeta":1,"alpha":{"yy":2,"b":3},"mid":[{"q":1,"aa":2}]}';
    const started = await h.executions.get(id);
    expect(serializeJson(started.input)).toBe(given);
    expect(Object.keys(started.trigger ?? {})).toEqual([
      "type",
      "schedule_id",
      "occurrence_id",
      "scheduled_for",
      "started_at",
      "timezone",
      "attempt",
    ]);
    await db.store.insertStepResult({
      executionId: id,
      run: 1,
      step: "charge",
      seq: 1,
      result: { zz: 1, a: [{ y: 1, b: 2 }] },
      hasCompensation: false,
      compensatedMs: null,
      completedMs: h.clock.now(),
    });
    const steps = await db.store.listStepResultsOf([id]);
    expect(serializeJson(steps[0]?.result)).toBe('{"zz":1,"a":[{"y":1,"b":2}]}');
    await h.executions.complete(id, { zz: 1, a: [{ y: 1, b: 2 }], mm: null });
    expect(serializeJson((await h.executions.get(id)).result)).toBe('{"zz":1,"a":[{"y":1,"b":2}],"mm":null}');
    const events = await db.store.listEvents(id);
    const created = events.find((e) => e.type === "WorkflowCreated")?.data ?? {};
    expect(Object.keys(created)).toEqual(["workflow", "version", "input", "schedule_id", "trigger"]);
    expect(serializeJson(created.input)).toBe(given);
    const completed = events.find((e) => e.type === "WorkflowCompleted")?.data;
    expect(serializeJson(completed)).toBe('{"result":{"zz":1,"a":[{"y":1,"b":2}],"mm":null}}');
  });

  it("a pause holds what is buffered, shown on the schedule; after the resume it starts", async () => {
    // Decided before the pause (a `buffered` ledger row): kept, not dropped, but nothing starts while
    // the schedule is paused (docs/scheduling.md § Pause and the buffer).
    const h = await runningWithOneBuffered(db.store);
    await h.scheduler.actions.pause("s", { note: "maintenance" });
    h.clock.set(t("2026-11-15T00:00:25Z"));
    await h.executions.complete("s:2026-11-15T00:00:10Z", {});
    await h.scheduler.loop.fireDue();
    expect(await h.scheduler.schedules.get("s")).toMatchObject({ state: "paused", buffered: ["2026-11-15T00:00:20Z"] });
    expect(await h.fireAt("2026-11-15T00:01:00Z")).toBe(0);
    expect(await startedIds(db.store, "s")).toEqual(["2026-11-15T00:00:10Z"]);
    await h.scheduler.actions.resume("s", {});
    await h.scheduler.loop.fireDue();
    expect(await startedIds(db.store, "s")).toEqual(["2026-11-15T00:00:10Z", "2026-11-15T00:00:20Z"]);
    expect(await h.scheduler.schedules.get("s")).toMatchObject({ state: "active", buffered: [], fired: 2 });
  });

  it("item 10: three buffer_one schedules on one concurrency key are served in the order of their occurrences", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00.500Z" });
    for (const id of ["a", "b", "c"]) {
      await h.scheduler.schedules.create({
        schedule_id: id,
        workflow: "OrderProcessing",
        interval: "10s",
        overlap: "buffer_one",
        concurrency_key: "k",
      });
    }
    // Each round: the occurrences fire, then whoever holds the key finishes.
    for (let round = 1; round <= 12; round++) {
      const at = formatInstant(t("2026-11-15T00:00:00Z") + round * 10_000);
      await h.fireAt(at);
      const holders = await db.store.listExecutions({ limit: 1000 });
      for (const e of holders) if (isActiveStatus(e.status)) await h.executions.complete(e.executionId, {});
      await h.fireAt(at);
    }
    const counts = await Promise.all(["a", "b", "c"].map(async (id) => (await startedIds(db.store, id)).length));
    // The key is shared evenly (by schedule id, "c" used to get one turn in twelve rounds).
    expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
    expect(Math.min(...counts)).toBeGreaterThanOrEqual(4);
  });
});
