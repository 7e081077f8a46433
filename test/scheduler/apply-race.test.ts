/**
 * Applies that race on a new id (docs/api.md § Applying): each entry is created or compared and
 * updated, so concurrent applies of one file all succeed, one creating and the rest updating or
 * finding it unchanged. On PostgreSQL the losers answered 409 ALREADY_EXISTS: a locking read of a
 * missing row locks nothing, and their inserts met the winner's row. Both dialects.
 */
import { expect, it } from "vitest";
import { applySchedules } from "../../src/scheduler/apply.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { makeHarness, ORDER_INPUT } from "./harness.js";

describeEachDialect("scheduler: applies racing on a new id", (dialect) => {
  const db = useStore(dialect);

  it("twelve concurrent applies of a new id, five times: one creates, every other updates or is unchanged", async () => {
    const h = await makeHarness(db.store);
    for (const id of ["x1", "x2", "x3", "x4", "x5"]) {
      const descriptions = Array.from({ length: 12 }, (_, i) => `a${i % 3}`);
      const results = await Promise.all(
        descriptions.map((description) =>
          applySchedules(h.scheduler.schedules, {
            schedules: [{ schedule_id: id, workflow: "OrderProcessing", interval: "1h", description }],
          }),
        ),
      );
      const actions = results.map((r) => r.steps[0]?.action);
      expect(actions.filter((a) => a === "create")).toHaveLength(1);
      expect(actions.every((a) => a === "create" || a === "update" || a === "unchanged")).toBe(true);
      const s = await h.scheduler.schedules.get(id);
      expect(descriptions).toContain(s.description);
      // Every update moved the revision once: a serial order of the twelve.
      expect(s.revision).toBe(1 + actions.filter((a) => a === "update").length);
    }
  });
});

describeEachDialect("scheduler: an apply racing a fire", (dialect) => {
  const db = useStore(dialect);

  it("reads the time once it holds the rows: an apply that began before a fire decides nothing that fire decided", async () => {
    // The apply read the time before its transaction: a fire that committed meanwhile decided an
    // occurrence after that instant, and the apply's new timing decided it again (a second
    // `started` row, or `skipped` beside `started`; a tester's apply at a second's boundary).
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00.500Z" });
    await h.scheduler.schedules.create({
      schedule_id: "s",
      workflow: "OrderProcessing",
      cron: "* * * * * *",
      overlap: "allow",
      input: ORDER_INPUT,
    });
    await h.fireAt("2026-11-15T00:00:00.600Z");
    // The apply begins at .6 (its time read, if it reads it now); the 00:00:01 fire runs and
    // commits before the apply gets the rows.
    const applying = applySchedules(h.scheduler.schedules, {
      schedules: [
        { schedule_id: "s", workflow: "OrderProcessing", cron: "*/1 * * * * *", overlap: "allow", input: ORDER_INPUT },
      ],
    });
    await h.fireAt("2026-11-15T00:00:01.050Z");
    expect((await applying).steps[0]?.action).toBe("update");
    await h.fireAt("2026-11-15T00:00:01.100Z");
    const ledger = (await h.scheduler.schedules.occurrences("s")).occurrences as { kind: string; occurrence: string }[];
    const at = ledger.filter((o) => o.occurrence === "2026-11-15T00:00:01Z").map((o) => o.kind);
    expect(at).toEqual(["started"]);
  });
});
