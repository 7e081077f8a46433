import type { Clock } from "../domain/clock.js";
import { abortableSleep } from "../domain/sleep.js";

/** Longest single timer: long sleeps wake up and let the caller re-check (clock jumps, suspend). */
const MAX_SLEEP_MS = 60_000;

export class SystemClock implements Clock {
  now(): number {
    return Date.now();
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return abortableSleep(Math.min(ms, MAX_SLEEP_MS), signal);
  }
}
