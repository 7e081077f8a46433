/**
 * A single server's time (docs/cluster.md § One time for the cluster): its host's wall clock, read
 * through the monotonic clock, so that it moves only where this clock says. Each second it looks at
 * the wall clock: a drift of up to STEP_MS (NTP's slew) is followed at once; a step is handed to
 * `onStep`, which moves what the database holds in wall time (the executions' deadlines, the
 * leases), and the time moves by the step only once that is done. Read straight from the wall
 * clock, the step was in effect up to a second before it was noticed, and whatever was stamped
 * meanwhile (a heartbeat's lease, a start's deadline) was moved a second time: a live worker's lease
 * ended in the past and its run started again beside it, and starts timed out at once (a re-tester).
 */
import type { Clock } from "../domain/clock.js";
import { SystemClock } from "./system-clock.js";

/** A move of the wall clock against the monotonic one larger than this, between two looks, is a step. */
export const STEP_MS = 2_000;

export class HostClock implements Clock {
  private base: number;
  private readonly timers = new SystemClock();
  private stepping = false;

  constructor(
    private readonly wall: () => number = () => Date.now(),
    private readonly monotonic: () => number = () => performance.now(),
  ) {
    this.base = wall() - monotonic();
  }

  now(): number {
    return Math.round(this.base + this.monotonic());
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.timers.sleep(ms, signal);
  }

  /**
   * Looks at the wall clock every `everyMs`: `onStep(ms)` for a step (positive: forward), then the
   * time moves by it and `stepped(ms)` runs. A step whose `onStep` fails is tried again at the next
   * look; meanwhile the time stays as it was. Returns what stops it; the timer keeps no process alive.
   */
  watch(onStep: (ms: number) => Promise<void>, stepped: (ms: number) => void, everyMs = 1000): () => void {
    const timer = setInterval(() => void this.look(onStep, stepped), everyMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** One look (watch()); exported for tests, which drive it with their own clocks. */
  async look(onStep: (ms: number) => Promise<void>, stepped: (ms: number) => void): Promise<void> {
    if (this.stepping) return;
    const drift = this.wall() - (this.base + this.monotonic());
    if (Math.abs(drift) <= STEP_MS) {
      this.base += drift;
      return;
    }
    const ms = Math.round(drift);
    this.stepping = true;
    try {
      await onStep(ms);
      this.base += ms;
    } catch {
      return; // tried again at the next look
    } finally {
      this.stepping = false;
    }
    stepped(ms);
  }
}
