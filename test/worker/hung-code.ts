/** Helpers for tests whose workflow code never returns (worker-log.test.ts, hung-after-cancel.test.ts). */
import type { ManualClock } from "../../src/clock/manual-clock.js";
import type { Worker } from "../../src/index.js";

/** One turn of the event loop. */
export const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Closes a worker whose run's code never returns: close() hands it back after closeTimeoutMs of `clock`. */
export async function closeWithHungCode(worker: Worker, clock: ManualClock, running: Promise<void>): Promise<void> {
  const closing = worker.close();
  for (let s = 0; s < 40; s++) {
    if (clock.pendingSleeps > 0) clock.advance(1000);
    await turn();
  }
  await closing;
  await running;
}
