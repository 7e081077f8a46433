/**
 * When a fire prunes its schedule's ledger (src/scheduler/fire-plan.ts prunesNow): once every 64
 * decisions, as before, but schedules that decide in step (created together, same cron) do not all
 * prune in the same fire: a herd's prunes are spread over 64 herds.
 */
import { describe, expect, it } from "vitest";
import { prunesNow } from "../../src/scheduler/fire-plan.js";
import type { ScheduleRow } from "../../src/store/rows.js";

const row = (scheduleId: string, fired: number, skipped = 0): ScheduleRow =>
  ({ scheduleId, fired, skipped }) as ScheduleRow;
const ids = Array.from({ length: 1000 }, (_, i) => `nightly-${i}`);

describe("ledger pruning", () => {
  it("prunes each schedule once in every 64 decisions, never before the first", () => {
    for (const id of ids) {
      expect(prunesNow(row(id, 0))).toBe(false);
      for (const start of [1, 65, 1000]) {
        let prunes = 0;
        for (let d = start; d < start + 64; d++) if (prunesNow(row(id, d - 3, 3))) prunes++;
        expect(prunes).toBe(1);
      }
    }
  });

  it("spreads the prunes of schedules that decide in step over the herds", () => {
    for (let d = 1; d <= 128; d++) {
      const pruning = ids.filter((id) => prunesNow(row(id, d))).length;
      // 1000 / 64 ≈ 16 on average; all 1000 in one herd before.
      expect(pruning).toBeLessThan(40);
    }
  });
});
