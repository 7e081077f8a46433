/**
 * The firing loop's warning that a fire batch still waits for the database (a table lock, an
 * overloaded database): nothing fails meanwhile, so without it the firing stops in silence. One
 * timer per loop, made on the first batch, looks every `everyMs`; no timer is made per batch on the
 * firing path.
 */
import type { SchedulerLogger } from "./scheduler-log.js";

/** How long a fire batch may wait for the database before the loop says so. */
export const STALL_WARN_MS = 5000;

export class StallWatch {
  /** When the fire batch now waiting for the database began (performance.now()), or null. */
  private batchSince: number | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly o: { dialect: string; log?: SchedulerLogger | undefined; everyMs?: number | undefined },
  ) {}

  /** Marks a fire batch as waiting for the database from now until the returned function is called. */
  watch(): () => void {
    const every = this.o.everyMs ?? STALL_WARN_MS;
    const started = performance.now();
    this.batchSince = started;
    if (this.timer === null) {
      let ticked = started;
      const where =
        this.o.dialect === "postgres"
          ? "a lock held on an Orbit table, or an overloaded or unreachable database (pg_locks and pg_stat_activity show who holds what)"
          : "a lock held on the database file by another process, or an overloaded disk";
      this.timer = setInterval(() => {
        const now = performance.now();
        // This timer itself ran late: the process was stopped or starved (SIGSTOP, a paused VM, a
        // CPU-starved host), not waiting on the database; a batch that waited meanwhile says nothing.
        const paused = now - ticked > 2 * every;
        ticked = now;
        const since = this.batchSince;
        if (paused || since === null || now - since < every) return;
        this.o.log?.warn(
          { waited_ms: Math.round(now - since) },
          `a fire batch is still waiting for the database: ${where}`,
        );
      }, every).unref();
    }
    return () => {
      if (this.batchSince === started) this.batchSince = null;
    };
  }

  /**
   * `read` watched as a fire batch is: the round's read of the next due instant waits on a lock on
   * the schedules as a batch does, and a lock taken between the two went unseen by the gauge.
   */
  async during<T>(read: () => Promise<T>): Promise<T> {
    const done = this.watch();
    try {
      return await read();
    } finally {
      done();
    }
  }

  /** How long the fire batch now in progress has waited for the database, ms; 0 when none waits (/metrics). */
  waitingMs(): number {
    return this.batchSince === null ? 0 : performance.now() - this.batchSince;
  }

  close(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
