/**
 * The engine's view of time: it only needs "now". The full Clock (with sleep) that the scheduler's
 * loop uses satisfies this interface; tests pass a manual clock.
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}
