/**
 * The shape of the engine's background passes (lease reaper, timeout sweeper, webhook notifier):
 * run a pass, then sleep until the next deadline the store knows of — at most `maxSleepMs`, so a
 * nearer deadline added meanwhile is not missed for long, and at least `minSleepMs`, so a busy
 * table is not scanned in a tight loop. A failed pass is reported and retried after `errorSleepMs`
 * (callers tell the failures as a spell, src/domain/failure-spell.ts: once, then every 30 s).
 */
import type { Clock } from "../domain/clock.js";

export interface DeadlineLoopOptions {
  clock: Clock;
  /** One pass over everything due by now. */
  pass(): Promise<unknown>;
  /** When the next pass is due (epoch ms), or null when nothing is pending. */
  nextDueMs(): Promise<number | null>;
  maxSleepMs: number;
  minSleepMs: number;
  /** Sleep after a failed pass. Default: `maxSleepMs`. */
  errorSleepMs?: number;
  /** A failed pass; `startedMs`: when it began on the loop's clock (a spell counts from then). */
  onError(err: unknown, startedMs: number): void;
  /** After a pass that did not fail (ends a spell of failures in the log). */
  onSuccess?(): void;
}

export class DeadlineLoop {
  private readonly abort = new AbortController();
  private running: Promise<void> | null = null;

  constructor(private readonly o: DeadlineLoopOptions) {}

  /** Aborted once close() is called: long passes check it between batches. */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  start(): void {
    this.running ??= this.run();
  }

  /** Stops the loop and waits for the current pass. Idempotent. */
  async close(): Promise<void> {
    this.abort.abort();
    await this.running;
  }

  private async run(): Promise<void> {
    const { clock, maxSleepMs, minSleepMs } = this.o;
    while (!this.abort.signal.aborted) {
      let sleep = maxSleepMs;
      const startedMs = clock.now();
      try {
        await this.o.pass();
        const next = await this.o.nextDueMs();
        this.o.onSuccess?.();
        if (next !== null) sleep = Math.min(maxSleepMs, next - clock.now());
      } catch (err) {
        this.o.onError(err, startedMs);
        sleep = this.o.errorSleepMs ?? maxSleepMs;
      }
      await clock.sleep(Math.max(minSleepMs, sleep), this.abort.signal);
    }
  }
}
