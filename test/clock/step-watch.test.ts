/**
 * The host clock's steps, told from its drift against the monotonic clock (src/clock/step-watch.ts):
 * what a single server moves its deadlines and wakes its firing loop by.
 */
import { afterEach, expect, it, vi } from "vitest";
import { STEP_MS, watchClockSteps } from "../../src/clock/step-watch.js";

afterEach(() => {
  vi.useRealTimers();
});

it("says each step of the wall clock against the monotonic one, forward and back, and not a steady run", () => {
  vi.useFakeTimers();
  let wall = Date.UTC(2026, 11, 6, 17, 0, 0);
  let steady = 0;
  const steps: number[] = [];
  const stop = watchClockSteps(
    { now: () => wall },
    (ms) => steps.push(ms),
    () => steady,
  );
  const second = (wallMs = 1000) => {
    steady += 1000;
    wall += wallMs;
    vi.advanceTimersByTime(1000);
  };
  for (let i = 0; i < 5; i++) second();
  second(1000 + STEP_MS - 1); // drift within a tick under the threshold: not a step
  steady += 0.375; // the monotonic clock's fractions: a step is said in whole milliseconds
  second(41_000);
  second(1000 - 3_600_000);
  second();
  stop();
  second(50_000);
  expect(steps).toEqual([40_000, -3_600_000]);
});
