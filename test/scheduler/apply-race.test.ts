/**
 * Applies that race on a new id (docs/api.md § Applying): each entry is created or compared and
 * updated, so concurrent applies of one file all succeed, one creating and the rest updating or
 * finding it unchanged. On PostgreSQL the losers answered 409 ALREADY_EXISTS: a locking read of a
 * missing row locks nothing, and their inserts met the winner's row. Both dialects.
 */
import { expect, it } from "vitest";
import { applySchedules } from "../../src/scheduler/apply.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { makeHarness } from "./harness.js";

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
