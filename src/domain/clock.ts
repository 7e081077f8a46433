/**
 * The one way Orbit reads time. Only the firing loop and the worker protocol sleep; everything else
 * only asks `now()`. Production uses SystemClock; tests use ManualClock, which can jump forward and
 * backward and resolves sleeps in deadline order.
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Resolves after `ms` (or at once when `signal` aborts, without rejecting). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The part of {@link Clock} code that only reads the time needs (the engine): any Clock is one. */
export type NowClock = Pick<Clock, "now">;
