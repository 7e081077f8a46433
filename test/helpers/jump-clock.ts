/**
 * The clock of a server child whose leases a test must be able to end at will: real time, plus an
 * offset the test moves forward (`jump`). A sleep ends after its real time, or at once when a jump
 * carries the clock past its deadline, so the lease reaper and parked polls see the jump at once.
 * With it a test gives the server a lease far longer than any stall of a loaded machine, and
 * expires a lease only when it means to (test/worker/durable.test.ts).
 */
import type { Clock } from "../../src/domain/clock.js";

interface Sleeper {
  deadline: number;
  wake: () => void;
}

export class JumpClock implements Clock {
  private offset = 0;
  private readonly sleepers = new Set<Sleeper>();

  now(): number {
    return Date.now() + this.offset;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const sleeper: Sleeper = {
        deadline: this.now() + ms,
        wake: () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", sleeper.wake);
          this.sleepers.delete(sleeper);
          resolve();
        },
      };
      const timer = setTimeout(sleeper.wake, ms);
      signal?.addEventListener("abort", sleeper.wake, { once: true });
      this.sleepers.add(sleeper);
    });
  }

  /** Moves the clock `ms` forward and wakes every sleep whose deadline it reached. */
  jump(ms: number): void {
    this.offset += ms;
    const now = this.now();
    for (const s of [...this.sleepers]) if (s.deadline <= now) s.wake();
  }
}
