/**
 * Watches the host's wall clock for steps: every second, how far `now()` moved against the
 * monotonic clock. A single server keeps its host's time (docs/cluster.md § One time for the
 * cluster), so a step of that clock (an NTP correction, a VM restored, someone's `date -s`) moves
 * every deadline the server holds in wall time: forward, each live lease looked lapsed and each
 * run_timeout closer by the step; and the firing loop, asleep on a monotonic timer, woke the step
 * late (a tester's faketime steps: a live worker's step ran again as attempt 2, a 10-minute
 * run_timeout fired after 34 s, an occurrence 1 s away was recorded missed).
 */
import type { NowClock } from "../domain/clock.js";

/** A move of the wall clock against the monotonic one larger than this, in one tick, is a step. */
export const STEP_MS = 2_000;
const TICK_MS = 1_000;

/**
 * Calls `onStep(ms)` (positive: forward) for each step of `clock` against `monotonic`. Returns what
 * stops it. The timer does not keep the process alive.
 */
export function watchClockSteps(
  clock: NowClock,
  onStep: (ms: number) => void,
  monotonic: () => number = () => performance.now(),
): () => void {
  let offset = clock.now() - monotonic();
  const timer = setInterval(() => {
    const next = clock.now() - monotonic();
    const moved = next - offset;
    offset = next;
    // Whole milliseconds: the monotonic clock's fractions made PostgreSQL refuse the step as a
    // bigint, and SQLite store fractional deadlines (a re-tester).
    if (Math.abs(moved) > STEP_MS) onStep(Math.round(moved));
  }, TICK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
