/**
 * A due occurrence whose start is refused past the grace is a dead letter, and what the same fire
 * decided after it assumed it would run: under `skip` the later ones were recorded as skipped for
 * overlap, under `buffer_one` one was buffered behind it, with nothing running. The fire stops at
 * the dead letter and the row is due again at once, so what comes after it is decided against what
 * really runs (docs/scheduling.md § Decisions), as a buffered dead letter's fire already did.
 */
import { expect, it } from "vitest";
import { parseInstant } from "../../src/time/format.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { accountsOf, settled } from "./audit.js";
import { makeHarness } from "./harness.js";

const t = (s: string): number => parseInstant(s);

describeEachDialect("scheduler: a dead letter stops its fire", (dialect) => {
  const db = useStore(dialect);

  for (const overlap of ["skip", "buffer_one", "buffer_all", "cancel_previous"] as const) {
    it(`after an outage, occurrences caught up behind a refused start are not decided as if it ran (${overlap})`, async () => {
      const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00Z" });
      await h.scheduler.schedules.create({
        schedule_id: "s",
        workflow: "OrderProcessing",
        interval: "1m",
        catchup: "catch_up",
        max_catch_up: 5,
        overlap,
      });
      // A new version whose input schema refuses the schedule's input: every start is refused.
      await h.workflows.register({
        name: "OrderProcessing",
        version: "2.0.0",
        input_schema: { type: "object", required: ["order_id"] },
      });
      // The server was down until 00:10:00; then it fires each second for a while.
      for (let ms = t("2026-11-15T00:10:00Z"); ms <= t("2026-11-15T00:10:10Z"); ms += 1000)
        await h.fireAt(new Date(ms).toISOString());
      const accounts = settled(await accountsOf(db.store, "s"));
      const s = await h.scheduler.schedules.get("s");
      expect(s.fired).toBe(0);
      // Nothing ever ran, so nothing was skipped for overlap or a full buffer, and nothing waits
      // in the buffer behind a start that never happened.
      for (const [o, a] of accounts)
        expect([new Date(o).toISOString(), a]).toEqual([
          new Date(o).toISOString(),
          expect.stringMatching(/^(dead_letter|skipped:missed)$/),
        ]);
      expect(s.buffered ?? []).toEqual([]);
      // The five caught-up occurrences past the grace are dead letters, the older ones missed.
      const dead = [...accounts].filter(([, a]) => a === "dead_letter").map(([o]) => o);
      expect(dead.length).toBeGreaterThanOrEqual(4);
      expect(s.skipped).toBe(accounts.size);
    });
  }

  it("a sparse schedule whose refused start is left behind as a dead letter still shows why its starts fail", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00Z", graceMs: 15_000 });
    await h.scheduler.schedules.create({ schedule_id: "s", workflow: "OrderProcessing", cron: "0 * * * *" });
    await h.workflows.register({
      name: "OrderProcessing",
      version: "2.0.0",
      input_schema: { type: "object", required: ["order_id"] },
    });
    await h.fireAt("2026-11-15T01:00:00.500Z");
    expect((await h.scheduler.schedules.get("s")).last_error).toContain("order_id");
    // Retried every 5 s until the grace is past: then the occurrence is a dead letter and the
    // schedule waits for 02:00, whose start will be refused for the same reason.
    for (const at of ["01:00:05.5", "01:00:10.5", "01:00:15.5", "01:00:20.5"]) await h.fireAt(`2026-11-15T${at}Z`);
    const s = await h.scheduler.schedules.get("s");
    expect(s.next_fire_at).toBe("2026-11-15T02:00:00Z");
    expect(settled(await accountsOf(db.store, "s")).get(t("2026-11-15T01:00:00Z"))).toBe("dead_letter");
    expect(s.last_error).toContain("order_id");
  });
});
