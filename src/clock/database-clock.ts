/**
 * The clock of a server in a cluster (`--cluster active-standby | shared`): the host's clock moved
 * by its measured offset from the database's, so that every server of the cluster stamps and judges
 * time alike (docs/cluster.md § One time for the cluster). A task a server makes available "now", a
 * lease it grants until "now + 30 s" and a deadline it sets are read by the other servers' polls,
 * reapers and sweepers; with each host's own clock, a server 40 s behind had its workers' leases
 * taken by another server's reaper mid-step.
 *
 * The offset is measured the way NTP does over one round trip: the database's time against the
 * middle of the host's before and after, the sample with the shortest round trip of a few kept
 * (its error is at most half that round trip). It is measured against the process's monotonic
 * clock, not the host's wall clock, so a step of the host's clock (NTP, a VM resumed) does not move
 * this server's time: measured against the wall clock, a server whose host stepped 70 s ahead took
 * the other servers' live leases at once. It is measured again every minute, which follows the
 * drift between the two clocks. An injected clock (tests) is used as it is.
 */
import type { Clock } from "../domain/clock.js";
import { SystemClock } from "./system-clock.js";

/** Round trips per measurement; the shortest is kept. */
const SAMPLES = 3;
/** How often the offset is measured again. */
export const REALIGN_MS = 60_000;
/** A measurement whose best round trip is longer than this is not used (the old offset stays). */
const MAX_ROUND_TRIP_MS = 1_000;

export class DatabaseClock implements Clock {
  /** Database time − steady time, as last measured (0 before: the steady clock starts at the host's time). */
  private offset = 0;
  /** Database time − the host's wall clock, as last measured (what doctor and the log tell). */
  private hostOffset = 0;
  private aligned = false;
  /** Epoch-like milliseconds that never step: the monotonic clock for the host's, else the injected clock. */
  private readonly steady: () => number;
  private timer: NodeJS.Timeout | null = null;
  /** The measurement under way: during a database outage one may take longer than a minute. */
  private measuring: Promise<boolean> | null = null;

  constructor(
    /** The host's clock (a ManualClock in tests). */
    readonly host: Clock,
    /** The database's time in epoch ms (`Store.databaseNow`). */
    private readonly databaseNow: () => Promise<number>,
  ) {
    this.steady = host instanceof SystemClock ? () => performance.timeOrigin + performance.now() : () => host.now();
  }

  now(): number {
    return Math.round(this.steady() + this.offset);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.host.sleep(ms, signal);
  }

  /** Database time − the host's clock, as last measured (0 before the first measurement). */
  get offsetMs(): number {
    return this.hostOffset;
  }

  /**
   * Measures the offset now. False when the database did not answer or answered too slowly to
   * trust (the previous offset stays).
   */
  async align(): Promise<boolean> {
    let best: { roundTrip: number; offset: number; hostOffset: number } | null = null;
    for (let i = 0; i < SAMPLES; i++) {
      try {
        const host = this.host.now();
        const before = this.steady();
        const t0 = performance.now();
        const db = await this.databaseNow();
        const roundTrip = performance.now() - t0;
        if (best === null || roundTrip < best.roundTrip) {
          best = {
            roundTrip,
            offset: Math.round(db - (before + roundTrip / 2)),
            hostOffset: Math.round(db - (host + roundTrip / 2)),
          };
        }
      } catch {
        return false;
      }
    }
    if (best === null || best.roundTrip > MAX_ROUND_TRIP_MS) return false;
    this.hostOffset = best.hostOffset;
    // Within the measurement's own error of the offset in force: keep it, so that now() does not
    // step back and forth by a millisecond each minute.
    if (!this.aligned || Math.abs(best.offset - this.offset) > Math.max(2, best.roundTrip)) this.offset = best.offset;
    this.aligned = true;
    return true;
  }

  /** Measured at least once since start? */
  get isAligned(): boolean {
    return this.aligned;
  }

  /** Measures again every {@link REALIGN_MS} (wall time) until {@link close}. */
  start(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => {
      if (this.measuring !== null) return;
      this.measuring = this.align().finally(() => {
        this.measuring = null;
      });
    }, REALIGN_MS);
    this.timer.unref();
  }

  close(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
