/**
 * When a fire prunes its schedule's ledger (src/scheduler/fire-plan.ts prunesNow): once every 64
 * decisions, as before, but schedules that decide in step (created together, same cron) do not all
 * prune in the same fire: a herd's prunes are spread over 64 herds. A fire that decides several
 * occurrences at once prunes when it crosses the mark: it used to prune only when it landed on it,
 * so a schedule deciding in steps of 5 (missed ranges, dead letters) could go unpruned for good.
 */
import { describe, expect, it } from "vitest";
import { prunesNow } from "../../src/scheduler/fire-plan.js";
import type { ScheduleRow } from "../../src/store/rows.js";

const row = (scheduleId: string, fired: number, skipped = 0): ScheduleRow =>
  ({ scheduleId, fired, skipped }) as ScheduleRow;
const ids = Array.from({ length: 1000 }, (_, i) => `nightly-${i}`);

/** The fires at which a schedule deciding `step` occurrences per fire prunes, from `start` decisions on. */
function prunesOver(id: string, start: number, fires: number, step: number): number {
  let prunes = 0;
  for (let d = start; d < start + fires * step; d += step)
    if (prunesNow(row(id, d - 3, 3), row(id, d + step - 3, 3))) prunes++;
  return prunes;
}

describe("ledger pruning", () => {
  it("prunes each schedule once in every 64 decisions, never at its first fire", () => {
    for (const id of ids) {
      expect(prunesNow(row(id, 0), row(id, 1))).toBe(false);
      for (const start of [1, 65, 1000]) expect(prunesOver(id, start, 64, 1)).toBe(1);
    }
  });

  it("prunes a schedule deciding several occurrences per fire once it has decided 64 more, whatever its steps", () => {
    for (const id of ids) {
      for (const step of [2, 5, 7, 64, 200]) {
        // 64 × step decisions: a prune for every 64 of them (a step of 64 or more prunes every fire).
        expect(prunesOver(id, 10, 64, step)).toBe(Math.min(step, 64));
      }
    }
  });

  it("spreads the prunes of schedules that decide in step over the herds", () => {
    for (let d = 1; d <= 128; d++) {
      const pruning = ids.filter((id) => prunesNow(row(id, d), row(id, d + 1))).length;
      // 1000 / 64 ≈ 16 on average; all 1000 in one herd before.
      expect(pruning).toBeLessThan(40);
    }
  });
});
