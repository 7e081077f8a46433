import type { Clock } from "../domain/clock.js";

interface Sleeper {
  deadline: number;
  resolve: () => void;
}

/**
 * A clock that moves only when told to: `set`/`advance` move it (also backwards) and wake the
 * sleepers whose deadline passed, earliest first. For tests and simulations.
 */
export class ManualClock implements Clock {
  private sleepers: Sleeper[] = [];

  constructor(private current: number) {}

  now(): number {
    return this.current;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const sleeper: Sleeper = {
        deadline: this.current + ms,
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = (): void => {
        this.sleepers = this.sleepers.filter((s) => s !== sleeper);
        sleeper.resolve();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.sleepers.push(sleeper);
    });
  }

  /** Number of pending sleeps (lets a test wait until the loop is idle). */
  get pendingSleeps(): number {
    return this.sleepers.length;
  }

  /** Moves the clock to `t` (backwards too) and wakes every sleeper whose deadline is reached. */
  set(t: number): void {
    this.current = t;
    const due = this.sleepers.filter((s) => s.deadline <= t).sort((a, b) => a.deadline - b.deadline);
    this.sleepers = this.sleepers.filter((s) => s.deadline > t);
    for (const s of due) s.resolve();
  }

  advance(ms: number): void {
    this.set(this.current + ms);
  }
}
