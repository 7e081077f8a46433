/**
 * The lease reaper: sleeps until the earliest lease expiry, then puts every expired task back
 * (attempt + 1 after its back-off; see WorkerTasks.reap). Runs on every server; on PostgreSQL the
 * expired rows are read with SKIP LOCKED and each is settled under its execution's lock, so two
 * servers reaping at once settle each task once.
 */
import type { Clock } from "../domain/clock.js";
import type { Store } from "../store/store.js";
import { DeadlineLoop } from "./deadline-loop.js";
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
  private readonly loop: DeadlineLoop;

  constructor(private readonly o: TaskReaperOptions) {
    this.loop = new DeadlineLoop({
      clock: o.clock,
      pass: () => this.reapExpired(),
      // +1: a lease is expired once now is past lease_until_ms.
      nextDueMs: async () => {
        const next = await o.store.nextLeaseExpiryMs();
        return next === null ? null : next + 1;
      },
      maxSleepMs: o.maxSleepMs ?? o.tasks.leaseMs,
      minSleepMs: o.minSleepMs ?? 100,
      errorSleepMs: 1000,
      onError: (err) => o.log?.error({ err }, "reaping expired worker leases failed; retrying"),
    });
  }

  start(): void {
    this.loop.start();
  }

  /** Stops the loop and waits for the current pass. Idempotent. */
  async close(): Promise<void> {
    await this.loop.close();
  }

  /** One pass: every lease expired by now; returns how many tasks were put back. */
  async reapExpired(): Promise<number> {
    let requeued = 0;
    for (;;) {
      const now = this.o.clock.now();
      const expired = await this.o.store.listExpiredLeases(now, BATCH);
      for (const task of expired) if (await this.o.tasks.reap(task.taskId)) requeued++;
      if (expired.length < BATCH || this.loop.signal.aborted) return requeued;
    }
  }
}
