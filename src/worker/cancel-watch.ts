/**
 * A busy worker's watch for cancels (docs/workflows.md § Worker). While every slot is busy the
 * worker polls for no task (`max_tasks: 0`); each poll is answered when a cancel is committed
 * (`heartbeat: true`: heartbeat now) or at its timeout. Without it a full worker heard a cancel only
 * at its next heartbeat (5 s): a run past its run_timeout on a worker of concurrency 1 ended
 * COMPLETED or FAILED by where the heartbeat fell (6 of 10 COMPLETED, a tester).
 */
import type { Clock } from "../domain/clock.js";
import { OrbitError } from "../domain/errors.js";
import { withLinkedSignal } from "../domain/linked-signal.js";
import type { WorkflowOfferJson } from "../domain/worker-protocol.js";
import type { ProtocolClient } from "./protocol-client.js";

export interface CancelWatch {
  api: ProtocolClient;
  offers: WorkflowOfferJson[];
  clock: Clock;
  /** Wakes the heartbeat loop: a cancel was committed for one of this worker's tasks. */
  heartbeatNow(): void;
}

/**
 * Watches until any of `stops` aborts (a slot freed, the worker closing). A server that refuses
 * such a poll (an older one) ends the watch. Not AbortSignal.any: on Node 20 it left an entry in
 * the worker's closing signal per watch (src/domain/linked-signal.ts).
 */
export function watchForCancels(o: CancelWatch, stops: readonly AbortSignal[]): Promise<void> {
  return withLinkedSignal(stops, async (ended) => {
    while (!ended.aborted) {
      try {
        const answer = await o.api.poll({ workflows: o.offers, max_tasks: 0 }, ended);
        if (answer.heartbeat === true) o.heartbeatNow();
      } catch (err) {
        if (ended.aborted || (err instanceof OrbitError && err.code === "INVALID_ARGUMENT")) return;
        await o.clock.sleep(1000, ended); // the polls' own spell says the outage
      }
    }
  });
}
