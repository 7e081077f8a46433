/**
 * The lease reaper: sleeps until the earliest lease expiry, then puts every expired task back
 * (attempt + 1 after its back-off; see WorkerTasks.reap). Runs on every server; on PostgreSQL the
 * expired rows are read with SKIP LOCKED and each is settled under its execution's lock, so two
 * servers reaping at once settle each task once.
 */
import type { Clock } from "../domain/clock.js";
import type { Store } from "../store/store.js";
import type { WorkerTasks } from "./tasks.js";

export interface TaskReaperOptions {
  store: Store;
  clock: Clock;
  tasks: WorkerTasks;
  /** Longest sleep between looks (a new lease may expire sooner than any seen). Default: the lease length. */
  maxSleepMs?: number;
  /** Shortest sleep between looks, so a busy table is not scanned in a tight loop. Default 100 ms. */
  minSleepMs?: number;
  log?: { error(obj: object, msg: string): void };
}

const BATCH = 100;

export class TaskReaper {
  private readonly abort = new AbortController();
  private running: Promise<void> | null = null;

  constructor(private readonly o: TaskReaperOptions) {}

  start(): void {
    if (this.running !== null) return;
    this.running = this.run();
  }

  /** Stops the loop and waits for the current pass. Idempotent. */
  async close(): Promise<void> {
    this.abort.abort();
    await this.running;
  }

  /** One pass: every lease expired by now; returns how many tasks were put back. */
  async reapExpired(): Promise<number> {
    let requeued = 0;
    for (;;) {
      const now = this.o.clock.now();
      const expired = await this.o.store.listExpiredLeases(now, BATCH);
      for (const task of expired) if (await this.o.tasks.reap(task.taskId)) requeued++;
      if (expired.length < BATCH || this.abort.signal.aborted) return requeued;
    }
  }

  private async run(): Promise<void> {
    const maxSleep = this.o.maxSleepMs ?? this.o.tasks.leaseMs;
    const minSleep = this.o.minSleepMs ?? 100;
    while (!this.abort.signal.aborted) {
      let sleep = maxSleep;
      try {
        await this.reapExpired();
        const next = await this.o.store.nextLeaseExpiryMs();
        // +1: a lease is expired once now is past lease_until_ms.
        if (next !== null) sleep = Math.min(maxSleep, next + 1 - this.o.clock.now());
      } catch (err) {
        this.o.log?.error({ err }, "reaping expired worker leases failed; retrying");
        sleep = 1000;
      }
      await this.o.clock.sleep(Math.max(minSleep, sleep), this.abort.signal);
    }
  }
}
