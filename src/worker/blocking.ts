/** The worker's watch on its own event loop (docs/workflows.md § Worker). */
import type { WorkflowLogger } from "./workflow.js";

/** An event loop blocked longer than this is said (a lease lasts 30 s after the last heartbeat). */
export const BLOCKED_WARN_MS = 5_000;

/**
 * Says when the worker's event loop was blocked (a step that does not yield: a busy loop, large
 * synchronous work): meanwhile no heartbeat goes out, the lease can end and the run be given to
 * another attempt, and the heartbeat that finally goes out times out as if the server were away.
 * A wall-clock timer, whatever clock the worker was given. Returns what stops it.
 */
export function watchBlocking(log: WorkflowLogger, everyMs = 1000, warnMs = BLOCKED_WARN_MS): () => void {
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    const blocked = now - last - everyMs;
    last = now;
    if (blocked >= warnMs) {
      log.warn(
        "the worker's event loop was blocked: no heartbeat went out meanwhile; a step must yield (await) within the lease (30 s), or its run is given to another attempt",
        { blocked_s: Math.round(blocked / 100) / 10 },
      );
    }
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
