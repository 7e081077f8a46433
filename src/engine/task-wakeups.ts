/**
 * Wakes long-polling workers when a task may have become claimable: Executions.start (its
 * `onTaskQueued` hook), a requeue, a release, or a PostgreSQL NOTIFY from another server. A poll
 * arms itself *before* it looks for work, so a task queued between the look and the wait still
 * wakes it.
 */
import type { Clock } from "../domain/clock.js";
import { withLinkedSignal } from "../domain/linked-signal.js";

export interface ArmedWakeup {
  /** Resolves at the first wake since arming, after `ms`, or when `signal` aborts; never rejects. */
  wait(ms: number, signal?: AbortSignal): Promise<void>;
  /** Stops listening (when work was found without waiting). */
  disarm(): void;
}

export class TaskWakeups {
  private readonly waiters = new Set<() => void>();

  constructor(private readonly clock: Clock) {}

  /** Something may be claimable: every armed poll looks again. */
  wake(): void {
    const woken = [...this.waiters];
    this.waiters.clear();
    for (const fire of woken) fire();
  }

  /** How many polls are armed (tests and metrics). */
  get waiting(): number {
    return this.waiters.size;
  }

  arm(): ArmedWakeup {
    let woken = false;
    let onWake: (() => void) | null = null;
    const fire = (): void => {
      woken = true;
      onWake?.();
    };
    this.waiters.add(fire);
    return {
      wait: async (ms, signal) => {
        if (woken || signal?.aborted) return;
        const stop = new AbortController();
        onWake = () => stop.abort();
        await withLinkedSignal([stop.signal, signal], (s) => this.clock.sleep(ms, s));
        if (!stop.signal.aborted) stop.abort(); // when the sleep ended first
        this.waiters.delete(fire);
      },
      disarm: () => {
        this.waiters.delete(fire);
      },
    };
  }
}
