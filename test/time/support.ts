/** Shared helpers for the time-engine tests. */
import { expect } from "vitest";
import { OrbitError } from "../../src/domain/errors.js";
import { formatInstant } from "../../src/time/format.js";
import { compileTiming, type TimingSettings } from "../../src/time/schedule-timing.js";
import { nextOccurrences } from "../../src/time/timing.js";

/** Epoch ms of an RFC 3339 literal (the tests write every expected instant this way). */
export const at = (rfc3339: string): number => {
  const ms = Date.parse(rfc3339);
  if (Number.isNaN(ms)) throw new Error(`bad test instant ${rfc3339}`);
  return ms;
};

/** The next `n` occurrences strictly after `from`, as RFC 3339 strings. */
export function next(settings: TimingSettings, from: string, n: number): string[] {
  return nextOccurrences(compileTiming(settings).timing, at(from), n).map(formatInstant);
}

/** Asserts that `fn` throws an OrbitError with `code` and exactly `message`. */
export function expectOrbitError(fn: () => unknown, message: string, code = "INVALID_SCHEDULE"): void {
  let thrown: unknown;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  expect(thrown, `expected an OrbitError "${message}"`).toBeInstanceOf(OrbitError);
  const err = thrown as OrbitError;
  expect(err.message).toBe(message);
  expect(err.code).toBe(code);
}
