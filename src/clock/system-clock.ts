import type { Clock } from "../domain/clock.js";

/** Longest single timer: long sleeps wake up and let the caller re-check (clock jumps, suspend). */
const MAX_SLEEP_MS = 60_000;

export class SystemClock implements Clock {
  now(): number {
    return Date.now();
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, Math.min(ms, MAX_SLEEP_MS));
      signal?.addEventListener("abort", done, { once: true });
    });
  }
}
