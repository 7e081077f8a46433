/**
 * The overdue rule (docs/design.md § Overdue), in SQL (orbit_schedules_overdue, `overdue=true`) and
 * in memory (isOverdue, the list's search), on both stores: a schedule due longer ago than the grace
 * is overdue, but not one woken for its oldest buffered occurrence, whose due time is that
 * occurrence's (minutes old when its slot was held that long) and says nothing of the loop. A
 * tester's `orbit doctor` failed six times in a row on a firing leader, naming buffer schedules
 * woken a moment before the loop's round as "770 s late".
 */
import { expect, it } from "vitest";
import { isOverdue } from "../../src/scheduler/schedule-search.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { schedule, T0 } from "./fixtures/records.js";

const GRACE = 60_000;
const NOW = T0 + 3_600_000;

describeEachDialect("overdue rule", (dialect) => {
  const db = useStore(dialect);

  it("counts a late due time, not a buffer woken at its oldest occurrence", async () => {
    const old = NOW - 770_000;
    const rows = [
      schedule("late", { dueMs: old }),
      schedule("woken", { dueMs: old, buffered: [old, old + 10_000] }),
      // Buffered, but due at its next occurrence long ago: the loop has not been round, overdue.
      schedule("late-buffered", { dueMs: old + 5_000, buffered: [old] }),
      schedule("on-time", { dueMs: NOW - 1_000, buffered: [NOW - 1_000] }),
      schedule("paused", { dueMs: old, paused: true }),
    ];
    for (const row of rows) await db.store.insertSchedule(row);
    const expected = ["late", "late-buffered"];
    expect(rows.filter((r) => isOverdue(r, NOW, GRACE)).map((r) => r.scheduleId)).toEqual(expected);
    expect(await db.store.countOverdueSchedules(NOW - GRACE)).toBe(expected.length);
  });
});
