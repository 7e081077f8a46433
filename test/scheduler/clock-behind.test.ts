/**
 * A server whose clock is set back (an NTP step, a VM restored) recomputes a next occurrence only
 * past what the schedule already decided (docs/design.md § Exactly once): a resume or a new timing
 * computed it from the earlier "now", and the fires decided the same occurrences again (duplicate
 * `started` rows, counters off the ledger, run_once catching up several at once; a tester's
 * faketime step of 120 s).
 */
import { expect, it } from "vitest";
import type { OccurrenceRow } from "../../src/store/rows.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { makeHarness, ORDER_INPUT } from "./harness.js";

describeEachDialect("a clock set back", (dialect) => {
  const db = useStore(dialect);

  it("a resume and an interval change decide nothing twice", async () => {
    const h = await makeHarness(db.store, { now: "2026-12-06T16:00:00Z" });
    for (const id of ["resumed", "retimed"]) {
      await h.scheduler.schedules.create({
        schedule_id: id,
        workflow: "OrderProcessing",
        input: ORDER_INPUT,
        interval: "10s",
        catchup: "run_once",
      });
    }
    // Created, paused before its first fire: neither goes before its creation.
    await h.scheduler.schedules.create({
      schedule_id: "young",
      workflow: "OrderProcessing",
      input: ORDER_INPUT,
      interval: "10s",
      paused: true,
    });
    for (const t of ["16:00:10", "16:00:20", "16:00:30"]) await h.fireAt(`2026-12-06T${t}Z`);
    await h.scheduler.actions.pause("resumed", {});
    // The clock goes back two minutes.
    h.clock.set(Date.parse("2026-12-06T15:58:30Z"));
    const resumed = await h.scheduler.actions.resume("resumed", {});
    expect(resumed.next_fire_at).toBe("2026-12-06T16:00:40Z");
    const retimed = await h.scheduler.schedules.update("retimed", { interval: "20s" });
    expect(retimed.next_fire_at).toBe("2026-12-06T16:00:40Z");
    expect((await h.scheduler.actions.resume("young", {})).next_fire_at).toBe("2026-12-06T16:00:10Z");
    // Time goes on from there, past the decided occurrences, and past the grace: a catch-up.
    for (const t of ["15:59:00", "16:00:00", "16:00:30", "16:00:40", "16:03:00"]) await h.fireAt(`2026-12-06T${t}Z`);
    for (const id of ["resumed", "retimed"]) {
      const rows = (await db.store.listOccurrences(id, { limit: 1000 })).filter((r) => r.occurrenceMs !== null);
      const at = (r: OccurrenceRow) => new Date(r.occurrenceMs ?? 0).toISOString();
      const seen = rows.map(at);
      expect({ id, twice: seen.filter((o, i) => seen.indexOf(o) !== i) }).toEqual({ id, twice: [] });
      // Nothing before the schedule's creation, and the three fired before the step once each.
      expect(seen.filter((o) => o < "2026-12-06T16:00:10.000Z")).toEqual([]);
      const view = await h.scheduler.schedules.get(id);
      const started = rows.filter((r) => r.kind === "started").length;
      expect({ id, fired: view.fired }).toEqual({ id, fired: started });
    }
  });
});
