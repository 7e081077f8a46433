/**
 * The timeout sweeper (docs/outcomes.md § Timeouts): sleeps until the earliest deadline of a
 * running execution (at most a second, so a new, nearer deadline is not missed for long), then
 * applies timeOutExecution to every execution past one. Runs on every server; each transition
 * re-reads the deadline under the execution's lock, so two servers sweeping settle it once.
 */
import type { Clock } from "../domain/clock.js";
import { LoggedFailures, passLines } from "../domain/failure-spell.js";
import type { Store } from "../store/store.js";
import { DeadlineLoop } from "./deadline-loop.js";
import { type Executions, leftToWorker } from "./executions.js";
import { timeOutExecution } from "./timeouts.js";

const BATCH = 100;
const MAX_SLEEP_MS = 1000;

export class TimeoutSweeper {
  private readonly loop: DeadlineLoop;

  constructor(
    private readonly o: {
      store: Store;
      clock: Clock;
      executions: Executions;
      /** Called after a sweep ended or changed executions (wake pollers: a cancel is for a worker). */
      onChanged?: () => void;
      log?: { error(obj: object, msg: string): void; info?(obj: object, msg: string): void };
    },
  ) {
    const failures = new LoggedFailures(
      o.log,
      () => o.clock.now(),
      passLines("applying execution timeouts", "retrying"),
    );
    this.loop = new DeadlineLoop({
      clock: o.clock,
      pass: () => this.sweep(),
      // +1: a deadline has passed once now is beyond it.
      nextDueMs: async () => {
        const next = await o.store.nextDeadlineMs();
        return next === null ? null : next + 1;
      },
      maxSleepMs: MAX_SLEEP_MS,
      minSleepMs: 10,
      onError: (err, startedMs) => failures.failed(err, startedMs),
      onSuccess: () => failures.succeeded(),
    });
  }

  start(): void {
    this.loop.start();
  }

  async close(): Promise<void> {
    await this.loop.close();
  }

  /** One pass: every deadline passed by now; returns how many executions it looked at. */
  async sweep(): Promise<number> {
    let seen = 0;
    for (;;) {
      const expired = await this.o.store.listExpiredDeadlines(this.o.clock.now(), BATCH);
      for (const d of expired) {
        await this.o.executions.runTransition(async (t, now) => {
          const e = await timeOutExecution(t, d.executionId, d.kind, now);
          // A timeout left to the worker as a cancel: the other servers' parked polls hear it too.
          if (leftToWorker(e)) await t.notifyCancelRequested();
          return e;
        });
      }
      seen += expired.length;
      if (expired.length < BATCH || this.loop.signal.aborted) break;
    }
    if (seen > 0) this.o.onChanged?.();
    return seen;
  }
}
