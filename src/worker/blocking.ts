/** The worker's watch on its own event loop (docs/workflows.md § Worker). */
import { ServerUnreachableError } from "../client/unreachable.js";
import type { WorkflowLogger } from "./workflow.js";

/** The last block the watch saw: when it ended (performance.now()) and how long it lasted. */
let lastBlock: { endedAt: number; ms: number } | null = null;

/**
 * `err` as said of a request sent at `sentAt` (performance.now()): a request left unanswered while
 * this process did not run (SIGSTOP, a suspended machine, a step that blocked the event loop) timed
 * out on this process's clock, not the server's, and says so. A worker resumed from a 45 s SIGSTOP
 * logged "polling failed … the Orbit server … did not answer in time (busy, or waiting for its
 * database …)" of a server that was healthy throughout (a tester).
 */
export function pausedMeanwhile(err: unknown, sentAt: number): unknown {
  if (!(err instanceof ServerUnreachableError) || !err.unanswered) return err;
  if (lastBlock === null || lastBlock.endedAt < sentAt) return err;
  const seconds = Math.round(lastBlock.ms / 100) / 10;
  err.message = `${err.message}; but this worker's own process did not run for ${seconds} s meanwhile (paused, or a step blocked its event loop), so the server may not be at fault`;
  return err;
}

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
  let cpu = process.cpuUsage();
  const timer = setInterval(() => {
    const now = performance.now();
    const blocked = now - last - everyMs;
    const used = process.cpuUsage(cpu);
    cpu = process.cpuUsage();
    last = now;
    if (blocked < warnMs) return;
    lastBlock = { endedAt: now, ms: blocked };
    const fields = { blocked_s: Math.round(blocked / 100) / 10 };
    const heartbeat = "no heartbeat went out meanwhile";
    const lease = "within the lease (30 s), or its run is given to another attempt";
    // A busy step spends the gap on the CPU; a stopped process (SIGSTOP, a suspended machine) or a
    // synchronous wait does not, and "a step must yield" misled after a SIGSTOP (a tester).
    if ((used.user + used.system) / 1000 < blocked / 10) {
      log.warn(
        `the worker's event loop did not run, using little CPU: the process was paused (SIGSTOP, a suspended machine) or a step waited synchronously (execSync, Atomics.wait); ${heartbeat}; a step must not block ${lease}`,
        fields,
      );
    } else {
      log.warn(`the worker's event loop was blocked: ${heartbeat}; a step must yield (await) ${lease}`, fields);
    }
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
