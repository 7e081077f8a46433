/**
 * The clock of a child process that must share one timeline with the processes before and after
 * it (restarts, SIGKILLs): it runs ORBIT_TEST_CLOCK_RATE times faster than real time from
 * ORBIT_TEST_CLOCK_BASE (simulated ms) at ORBIT_TEST_CLOCK_ANCHOR (real ms), so a second of real
 * time holds many occurrences.
 */
import { SystemClock } from "../../src/clock/system-clock.js";
import type { Clock } from "../../src/domain/clock.js";

export function ratedClockFromEnv(defaultRate: number, env: NodeJS.ProcessEnv = process.env): Clock {
  const rate = Number(env.ORBIT_TEST_CLOCK_RATE ?? defaultRate);
  const base = Number(env.ORBIT_TEST_CLOCK_BASE);
  const anchor = Number(env.ORBIT_TEST_CLOCK_ANCHOR);
  const real = new SystemClock();
  return {
    now: () => base + Math.floor((Date.now() - anchor) * rate),
    sleep: (ms, signal) => real.sleep(Math.ceil(ms / rate), signal),
  };
}
