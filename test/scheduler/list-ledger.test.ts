/**
 * A page of the schedule list shows each schedule as its own read does, `last_tick` (with its
 * execution's status) and `dead_letters` included (docs/api.md § Schedules), on both dialects: the
 * page reads the ledger for all of its schedules at once.
 */
import { expect, it } from "vitest";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { makeHarness } from "./harness.js";

describeEachDialect("scheduler: the list's ledger fields", (dialect) => {
  const db = useStore(dialect);

  it("each listed schedule carries the last_tick and dead_letters its own read shows", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00.500Z", maxActiveExecutions: 1 });
    // "blocked" dead-letters every occurrence while "a-runs" holds the one active slot; "quiet"
    // never fires; "b-skips" skips its second occurrence behind its first (overlap skip).
    await h.scheduler.schedules.create({ schedule_id: "a-runs", workflow: "OrderProcessing", interval: "10s" });
    await h.scheduler.schedules.create({ schedule_id: "quiet", workflow: "OrderProcessing", cron: "0 0 1 1 *" });
    await h.fireAt("2026-11-15T00:00:10Z");
    await h.scheduler.schedules.create({ schedule_id: "blocked", workflow: "OrderProcessing", interval: "5s" });
    for (let s = 11; s <= 40; s++) await h.fireAt(`2026-11-15T00:00:${String(s).padStart(2, "0")}Z`);

    const page = await h.scheduler.schedules.list({ limit: 10 });
    const byId = new Map(page.schedules.map((s) => [s.schedule_id as string, s]));
    expect([...byId.keys()]).toEqual(["a-runs", "blocked", "quiet"]);
    for (const [id, listed] of byId) {
      const read = await h.scheduler.schedules.get(id);
      expect({ id, last_tick: listed.last_tick, dead_letters: listed.dead_letters }).toEqual({
        id,
        last_tick: read.last_tick,
        dead_letters: read.dead_letters,
      });
    }
    expect(byId.get("quiet")?.last_tick).toBeNull();
    expect(byId.get("a-runs")?.last_tick).toMatchObject({ kind: "skipped", reason: "overlap" });
    const blocked = byId.get("blocked") ?? {};
    expect(blocked.dead_letters).toHaveLength(5);
    expect(blocked.last_tick).toMatchObject({ kind: "dead_letter" });
    // Newest first, as the read shows them.
    const ids = (blocked.dead_letters as { id: number }[]).map((d) => d.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));

    // A search answers the same views.
    const found = await h.scheduler.schedules.list({ q: "blocked" });
    expect(found.schedules[0]?.dead_letters).toEqual(blocked.dead_letters);

    // A started last tick carries its execution's status, in the list as in the read.
    await h.scheduler.schedules.delete("blocked");
    await h.executions.complete("a-runs:2026-11-15T00:00:10Z", {});
    await h.fireAt("2026-11-15T00:00:50Z");
    const [first] = (await h.scheduler.schedules.list({ limit: 1 })).schedules;
    expect(first?.last_tick).toMatchObject({
      kind: "started",
      execution_id: "a-runs:2026-11-15T00:00:50Z",
      status: "RUNNING",
    });
  });
});
