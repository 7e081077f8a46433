/**
 * A fire transaction's commit rule (src/scheduler/loop.ts): its outcomes commit unless one lost its
 * compare-and-set, which rolls the whole transaction back.
 */
import type { FireOutcome } from "./fire.js";

/** Rolls a fire transaction back (the store rolls back on a throw), carrying its outcomes. */
export class RolledBack extends Error {
  constructor(readonly outcomes: readonly FireOutcome[]) {
    super("a schedule changed while it was firing; the fire transaction was rolled back");
  }
}

/** The outcomes, when they may commit: a lost compare-and-set leaves starts without their row. */
export function committable(outcomes: FireOutcome[]): FireOutcome[] {
  if (outcomes.some((o) => o.kind === "lost_cas")) throw new RolledBack(outcomes);
  return outcomes;
}
