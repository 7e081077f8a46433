/**
 * The timeout sweeper (docs/outcomes.md § Timeouts): sleeps until the earliest deadline of a
 * running execution (at most a second, so a new, nearer deadline is not missed for long), then
 * applies timeOutExecution to every execution past one. Runs on every server; each transition
 * re-reads the deadline under the execution's lock, so two servers sweeping settle it once.
 */
import type { Clock } from "../domain/clock.js";
import type { Store } from "../store/store.js";
import type { Executions } from "./executions.js";
import { timeOutExecution } from "./timeouts.js";

const BATCH = 100;
const MAX_SLEEP_MS = 1000;

export class TimeoutSweeper {
  private readonly abort = new AbortController();
  private running: Promise<void> | null = null;

  constructor(
    private readonly o: {
      store: Store;
      clock: Clock;
      executions: Executions;
      /** Called after a sweep ended or changed executions (wake pollers: a cancel is for a worker). */
      onChanged?: () => void;
      log?: { error(obj: object, msg: string): void };
    },
  ) {}

  start(): void {
    this.running ??= this.run();
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.running;
  }

  /** One pass: every deadline passed by now; returns how many executions it looked at. */
  async sweep(): Promise<number> {
    let seen = 0;
    for (;;) {
      const expired = await this.o.store.listExpiredDeadlines(this.o.clock.now(), BATCH);
      for (const d of expired) {
        await this.o.executions.runTransition((t, now) => timeOutExecution(t, d.executionId, d.kind, now));
      }
      seen += expired.length;
      if (expired.length < BATCH || this.abort.signal.aborted) break;
    }
    if (seen > 0) this.o.onChanged?.();
    return seen;
  }

  private async run(): Promise<void> {
    while (!this.abort.signal.aborted) {
      let sleep = MAX_SLEEP_MS;
      try {
        await this.sweep();
        const next = await this.o.store.nextDeadlineMs();
        if (next !== null) sleep = Math.min(MAX_SLEEP_MS, next + 1 - this.o.clock.now());
      } catch (err) {
        this.o.log?.error({ err }, "applying execution timeouts failed; retrying");
      }
      await this.o.clock.sleep(Math.max(10, sleep), this.abort.signal);
    }
  }
}
