/**
 * Updates of a schedule that holds buffered occurrences, or whose latest workflow version no longer
 * takes its input (docs/scheduling.md § Decisions), on both dialects with a manual clock. Found by
 * trying the policies as a user: an unpause by PATCH or a switch to `allow` left the buffer waiting
 * for the next fire of the timing (a day for a daily cron), and a pause by PATCH was refused with
 * the input's error.
 */
import { expect, it } from "vitest";
import type { Store } from "../../src/store/store.js";
import { parseInstant } from "../../src/time/format.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { ORDER_INPUT } from "../helpers/seed.js";
import { type Harness, makeHarness } from "./harness.js";

const t = (s: string): number => parseInstant(s);

/** A harness at 00:00:00.5 with schedule "s" of OrderProcessing (the seed's input) and `settings`. */
async function harnessWith(store: Store, settings: Record<string, unknown>): Promise<Harness> {
  const h = await makeHarness(store, { now: "2026-11-15T00:00:00.500Z" });
  await h.scheduler.schedules.create({
    schedule_id: "s",
    workflow: "OrderProcessing",
    input: ORDER_INPUT,
    ...settings,
  });
  return h;
}

describeEachDialect("scheduler: updates and the buffer", (dialect) => {
  const db = useStore(dialect);

  it("an unpause by PATCH starts what the buffer holds at once, not at the new timing's next fire", async () => {
    const h = await harnessWith(db.store, { interval: "10s", overlap: "buffer_one" });
    await h.fireAt("2026-11-15T00:00:10Z");
    await h.fireAt("2026-11-15T00:00:20Z");
    await h.scheduler.schedules.update("s", { paused: true });
    await h.scheduler.schedules.update("s", { cron: "0 3 * * *" });
    // The running execution ends while paused: the buffer stays (a pause starts nothing).
    await h.executions.cancel("s:2026-11-15T00:00:10Z", { reason: "done" });
    await h.fireAt("2026-11-15T00:00:25Z");
    expect((await h.scheduler.schedules.get("s")).buffered).toEqual(["2026-11-15T00:00:20Z"]);
    h.clock.set(t("2026-11-15T00:00:30Z"));
    await h.scheduler.schedules.update("s", { paused: false });
    await h.fireAt("2026-11-15T00:00:30Z");
    expect((await h.executions.get("s:2026-11-15T00:00:20Z")).status).toBe("RUNNING");
    expect(await h.scheduler.schedules.get("s")).toMatchObject({
      buffered: [],
      next_fire_at: "2026-11-15T03:00:00Z",
      fired: 2,
    });
  });

  it("a switch from buffer_all to allow starts every buffered occurrence at once", async () => {
    const h = await harnessWith(db.store, { interval: "10s", overlap: "buffer_all" });
    for (const at of ["00:00:10", "00:00:20", "00:00:30"]) await h.fireAt(`2026-11-15T${at}Z`);
    expect((await h.scheduler.schedules.get("s")).buffered).toEqual(["2026-11-15T00:00:20Z", "2026-11-15T00:00:30Z"]);
    h.clock.set(t("2026-11-15T00:00:35Z"));
    await h.scheduler.schedules.update("s", { overlap: "allow" });
    await h.fireAt("2026-11-15T00:00:35Z");
    for (const o of ["00:00:10", "00:00:20", "00:00:30"]) {
      expect((await h.executions.get(`s:2026-11-15T${o}Z`)).status).toBe("RUNNING");
    }
    expect(await h.scheduler.schedules.get("s")).toMatchObject({ buffered: [], next_fire_at: "2026-11-15T00:00:40Z" });
  });

  it("a switch from buffer_all to cancel_previous settles the buffer oldest first, before newer occurrences", async () => {
    const h = await harnessWith(db.store, { interval: "10s", overlap: "buffer_all" });
    for (const at of ["00:00:10", "00:00:20", "00:00:30"]) await h.fireAt(`2026-11-15T${at}Z`);
    await h.scheduler.schedules.update("s", { overlap: "cancel_previous" });
    await h.fireAt("2026-11-15T00:00:40Z");
    const status = async (o: string) => (await h.executions.get(`s:2026-11-15T${o}Z`)).status;
    // Each cancelled by the next, in occurrence order: the newest survives.
    for (const o of ["00:00:10", "00:00:20", "00:00:30"]) expect(await status(o)).toBe("CANCELLED");
    expect(await status("00:00:40")).toBe("RUNNING");
    expect(await h.scheduler.schedules.get("s")).toMatchObject({ buffered: [], next_fire_at: "2026-11-15T00:00:50Z" });
  });

  it("a buffer still blocked after an update stays, and the schedule fires on at its timing", async () => {
    const h = await harnessWith(db.store, { interval: "10s", overlap: "buffer_one" });
    await h.fireAt("2026-11-15T00:00:10Z");
    await h.fireAt("2026-11-15T00:00:20Z");
    h.clock.set(t("2026-11-15T00:00:22Z"));
    await h.scheduler.schedules.update("s", { description: "still running" });
    expect(await h.fireAt("2026-11-15T00:00:22Z")).toBe(0);
    expect((await db.store.getSchedule("s"))?.dueMs).toBe(t("2026-11-15T00:00:30Z"));
    expect(await h.scheduler.schedules.get("s")).toMatchObject({ buffered: ["2026-11-15T00:00:20Z"], fired: 1 });
  });

  it("a pause or a description by PATCH is not refused because the latest workflow version no longer takes the input", async () => {
    const h = await harnessWith(db.store, { interval: "10s" });
    await h.workflows.register({
      name: "OrderProcessing",
      version: "2.0.0",
      input_schema: { type: "object", required: ["must"], properties: { must: { type: "string" } } },
    });
    await h.scheduler.schedules.update("s", { paused: true });
    await h.scheduler.schedules.update("s", { description: "waiting for the new input" });
    expect(await h.scheduler.schedules.get("s")).toMatchObject({
      paused: true,
      description: "waiting for the new input",
    });
    // An update that names the input (or the workflow) is still checked against the version.
    await expect(h.scheduler.schedules.update("s", { input: { order_id: "x" } })).rejects.toThrow(/must/);
    await h.scheduler.schedules.update("s", { input: { must: "yes" } });
  });

  it("lists no next fires once max_runs is reached, while the buffer still drains", async () => {
    const h = await harnessWith(db.store, { interval: "10s", overlap: "buffer_all", max_runs: 2 });
    await h.fireAt("2026-11-15T00:00:10Z");
    await h.fireAt("2026-11-15T00:00:20Z");
    expect(await h.scheduler.schedules.get("s")).toMatchObject({
      state: "active",
      remaining_runs: 0,
      buffered: ["2026-11-15T00:00:20Z"],
      next_fire_at: null,
      next_fire_times: [],
    });
  });

  it("a paused schedule whose max_runs is spent with an occurrence buffered stays paused through an update", async () => {
    // An unrelated PATCH turned it `state: active` while `paused: true` (a tester's reference model).
    const h = await harnessWith(db.store, { interval: "10s", overlap: "buffer_all", max_runs: 2 });
    await h.fireAt("2026-11-15T00:00:10Z");
    await h.fireAt("2026-11-15T00:00:20Z");
    await h.scheduler.actions.pause("s", {});
    for (const patch of [{ description: "x" }, { overlap: "skip" }, { pause_on_failure: 1 }]) {
      await h.scheduler.schedules.update("s", patch);
      expect(await h.scheduler.schedules.get("s")).toMatchObject({
        state: "paused",
        paused: true,
        buffered: ["2026-11-15T00:00:20Z"],
        next_fire_at: null,
      });
    }
    // The buffer waits while paused, and drains once resumed.
    await h.executions.cancel("s:2026-11-15T00:00:10Z", { reason: "done" });
    await h.fireAt("2026-11-15T00:00:25Z");
    expect((await h.scheduler.schedules.get("s")).buffered).toEqual(["2026-11-15T00:00:20Z"]);
    await h.scheduler.schedules.update("s", { paused: false });
    await h.fireAt("2026-11-15T00:00:25Z");
    expect((await h.executions.get("s:2026-11-15T00:00:20Z")).status).toBe("RUNNING");
    expect(await h.scheduler.schedules.get("s")).toMatchObject({ state: "ended", buffered: [] });
  });

  it("a buffered start refused more than the grace after its occurrence is a dead letter, and the schedule goes on", async () => {
    const h = await harnessWith(db.store, { interval: "10s", overlap: "buffer_one" });
    await h.fireAt("2026-11-15T00:00:10Z");
    await h.fireAt("2026-11-15T00:00:20Z");
    // The latest version no longer takes the input; the running execution ends 65 s later.
    await h.workflows.register({
      name: "OrderProcessing",
      version: "2.0.0",
      input_schema: { type: "object", required: ["must"], properties: { must: { type: "string" } } },
    });
    h.clock.set(t("2026-11-15T00:01:25Z"));
    await h.executions.cancel("s:2026-11-15T00:00:10Z", { reason: "done" });
    await h.fireAt("2026-11-15T00:01:25Z");
    // The dead letter's fire decides nothing else: the row is due again at once, and the loop's
    // next round decides the due occurrences against what really runs (nothing).
    expect((await db.store.getSchedule("s"))?.dueMs).toBe(t("2026-11-15T00:01:25Z"));
    await h.fireAt("2026-11-15T00:01:25Z");
    const ledger = await db.store.listOccurrences("s", { limit: 100 });
    const dead = ledger.filter((o) => o.kind === "dead_letter" && o.occurrenceMs === t("2026-11-15T00:00:20Z"));
    expect(dead.length).toBe(1);
    expect(dead[0]?.error).toMatch(/must/);
    const s = await h.scheduler.schedules.get("s");
    // Not buffered behind a start that never happened: tried (and refused, inside the grace).
    expect(s.buffered).toEqual([]);
    expect(s.last_error).toMatch(/must/);
    // Not stuck on it: the schedule's first undecided occurrence is within the grace of now.
    const next = (s.next_fire_times as string[])[0] as string;
    expect(t(next)).toBeGreaterThan(t("2026-11-15T00:01:00Z"));
  });

  it("concurrent triggers take their instants in the order the row lock serializes them", async () => {
    const h = await harnessWith(db.store, { interval: "1h", overlap: "allow" });
    // A clock that moves a millisecond at every read, as a real one moves between the requests.
    const base = h.clock.now();
    let reads = 0;
    h.clock.now = () => base + reads++;
    const answers = await Promise.all(Array.from({ length: 8 }, () => h.scheduler.actions.trigger("s", {})));
    expect(answers.every((a) => a.started)).toBe(true);
    const ledger = (await db.store.listOccurrences("s", { limit: 100 })).filter((o) => o.kind === "started").reverse();
    expect(ledger.length).toBe(8);
    const recorded = ledger.map((o) => o.recordedMs);
    expect(recorded).toEqual([...recorded].sort((a, b) => a - b));
    // Each trigger's id carries its instant: in ledger order, the ids increase too.
    const ids = ledger.map((o) => String(o.executionId));
    expect(ids).toEqual([...ids].sort());
  });

  it("a buffered start refused because the server is full stays buffered, however old, and is retried", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00.500Z", maxActiveExecutions: 1 });
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      input: ORDER_INPUT,
      interval: "10s",
      overlap: "buffer_one",
    });
    await h.fireAt("2026-11-15T00:00:10Z");
    await h.fireAt("2026-11-15T00:00:20Z");
    // Another execution takes the one slot as the schedule's ends, 65 s after the buffered occurrence.
    h.clock.set(t("2026-11-15T00:01:25Z"));
    await h.executions.cancel("s:2026-11-15T00:00:10Z", { reason: "done" });
    await h.executions.start({ executionId: "other", workflow: "OrderProcessing", input: ORDER_INPUT });
    await h.fireAt("2026-11-15T00:01:25Z");
    const s = await h.scheduler.schedules.get("s");
    expect(s.buffered).toEqual(["2026-11-15T00:00:20Z"]);
    expect(s.last_error).toMatch(/max-active-executions/);
    expect((await db.store.listOccurrences("s", { limit: 100 })).some((o) => o.kind === "dead_letter")).toBe(false);
    // Room again: it starts at its retry.
    await h.executions.cancel("other", { reason: "done" });
    await h.fireAt("2026-11-15T00:01:30Z");
    expect((await h.executions.get("s:2026-11-15T00:00:20Z")).status).toBe("RUNNING");
  });
});
