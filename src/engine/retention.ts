/**
 * Retention (docs/operations.md § Retention): ended executions older than the retention (per
 * workflow where one is set), or beyond the newest `maxCount`, are deleted with their events, step
 * results and worker tasks. Off the fire path: its own loop, small batches of one short transaction
 * each, each started only when no fire is running or due within its length (the firing loop says,
 * {@link FireWindow}), resting between batches so fires and requests interleave. A pass walks the
 * executions once, oldest first, each batch starting after the last one the previous batch read (a
 * keyset cursor). Never a running execution, never a schedule's last execution (overlap and
 * outcomes read it); the ledger keeps its own per-schedule cap and is not touched here.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Clock } from "../domain/clock.js";
import type { PruneCursor, PruneQuery, Store } from "../store/store.js";

/**
 * What retention asks the firing loop before each batch (SchedulerLoop is one). A batch holds the
 * store (all of it on SQLite, whose driver also blocks the event loop), so a fire that comes due
 * during one waits for it.
 */
export interface FireWindow {
  /**
   * Resolves once a store transaction of about `ms` can start without delaying a fire: none running
   * or waiting for the store, and the next due instant the loop knows more than `ms` away (else it
   * waits until that fire is done). Resolves at once when `signal` aborts.
   */
  clearFor(ms: number, signal: AbortSignal): Promise<void>;
}

export interface RetentionPolicy {
  /** Ended executions older than this (ms since they ended) are deleted. Default: kept forever. */
  maxAgeMs?: number;
  /** Per workflow name, a retention that replaces `maxAgeMs` for that workflow's executions. */
  byWorkflow?: Readonly<Record<string, number>>;
  /**
   * Only the newest this many ended executions are kept (the oldest go first; executions that ended
   * in the same millisecond as the last one kept stay too). Default: no limit.
   */
  maxCount?: number;
  /** Executions per transaction. Default 500. */
  batchSize?: number;
  /** How often a pass runs. Default 60 000 ms (the first pass runs at start). */
  intervalMs?: number;
}

export interface RetentionOptions extends RetentionPolicy {
  store: Store;
  clock: Clock;
  /** The firing loop: a batch starts only when no fire is running or due within it. Default: not asked. */
  fires?: FireWindow;
  /**
   * After each batch retention rests this many times as long as the batch took (at most 100 ms
   * times this), so it holds the store at most 1 / (1 + restFactor) of the time. Default 1.
   */
  restFactor?: number;
  log?: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

export const DEFAULT_RETENTION_BATCH = 500;
export const DEFAULT_RETENTION_INTERVAL_MS = 60_000;

/** The time a batch should hold the store: a request (or a fire the loop did not see coming) waits about this long. */
export const TARGET_BATCH_MS = 10;
/** The smallest batch: below it, the per-transaction cost (a commit, an fsync) dominates. */
const MIN_BATCH = 20;
/**
 * The window asked of the firing loop before a batch, in multiples of the batch's expected length
 * (the target, or the last batch's time when that was longer): room for the batch, its commit, and
 * a timer that fires late because a synchronous driver held the event loop.
 */
const WINDOW_FACTOR = 2;
/**
 * The longest expected length a window is asked for. A batch that took long (a cold cache, a WAL
 * checkpoint) would otherwise ask for a window longer than the gaps between fires, and the pass
 * would wait forever (seen at 1M on SQLite: the pass stopped at 600k).
 */
const MAX_EXPECTED_MS = 4 * TARGET_BATCH_MS;

export class Retention {
  private readonly stop = new AbortController();
  private running: Promise<void> | null = null;
  /** The batch size the last batches settled on (see drain). */
  private size = MIN_BATCH * 5;

  constructor(private readonly o: RetentionOptions) {}

  /** True when the policy deletes anything at all. */
  get enabled(): boolean {
    const o = this.o;
    return o.maxAgeMs !== undefined || o.maxCount !== undefined || Object.keys(o.byWorkflow ?? {}).length > 0;
  }

  /** One pass: deletes everything the policy allows now, batch by batch. Returns how many executions. */
  async runOnce(): Promise<number> {
    const { store, clock } = this.o;
    const limit = this.o.batchSize ?? DEFAULT_RETENTION_BATCH;
    const now = clock.now();
    const overrides = Object.entries(this.o.byWorkflow ?? {});
    let deleted = 0;
    for (const [workflow, ageMs] of overrides) {
      deleted += await this.drain({ endedBeforeMs: now - ageMs, workflow, limit });
    }
    if (this.o.maxAgeMs !== undefined) {
      const exceptWorkflows = overrides.map(([w]) => w);
      deleted += await this.drain({ endedBeforeMs: now - this.o.maxAgeMs, exceptWorkflows, limit });
    }
    if (this.o.maxCount !== undefined) {
      const cutoff = await store.endedCutoffKeeping(this.o.maxCount);
      if (cutoff !== null) deleted += await this.drain({ endedBeforeMs: cutoff, limit });
    }
    return deleted;
  }

  /**
   * Deletes batch after batch, each after the last execution the previous one read (the cursor:
   * the scan starts there instead of stepping again over what was deleted, whose index entries stay
   * until vacuumed on PostgreSQL). Before each batch the firing loop is asked for a window of twice
   * the batch's expected length; the batch size adapts so that a transaction takes about
   * {@link TARGET_BATCH_MS}, between {@link MIN_BATCH} and `batchSize` executions; and the loop rests
   * as long as the batch took (docs/operations.md § Retention).
   */
  private async drain(query: PruneQuery): Promise<number> {
    let total = 0;
    let size = Math.min(query.limit, this.size);
    let after: PruneCursor | undefined;
    let expectedMs = TARGET_BATCH_MS;
    const signal = this.stop.signal;
    while (!signal.aborted) {
      await this.o.fires?.clearFor(WINDOW_FACTOR * Math.max(TARGET_BATCH_MS, expectedMs), signal);
      if (signal.aborted) break;
      // Timed from when the batch has the store (its statements and its commit), not from when it
      // asked: on SQLite it queues behind the firing loop's batches, and counting that wait shrank
      // every batch to the minimum and the pass to a few hundred executions a second.
      let began = performance.now();
      const q: PruneQuery = { ...query, limit: size, ...(after !== undefined ? { after } : {}) };
      const batch = await this.o.store.transaction((tx) => {
        began = performance.now();
        return tx.pruneExecutions(q);
      });
      const tookMs = Math.max(performance.now() - began, 0.5);
      total += batch.deleted;
      if (batch.read < size || batch.last === null) break;
      after = batch.last;
      // At most double per batch, so one fast batch (a warm cache) does not jump to the maximum.
      const next = Math.min(
        query.limit,
        Math.max(MIN_BATCH, Math.min(2 * size, Math.round((size * TARGET_BATCH_MS) / tookMs))),
      );
      // The next batch's expected length: this one's scaled to the next size (not this one's own:
      // one slow cold batch would ask for a window no firing schedule ever leaves, and stall the pass).
      expectedMs = Math.min(MAX_EXPECTED_MS, (tookMs * next) / size);
      size = next;
      this.size = size;
      // Rest as long as the batch took: retention takes at most half of the store's time, and
      // requests and worker traffic find the store free (wall time, not the injected clock: this
      // shares the process, whatever time the schedules run on). A longer rest (restFactor 4, a
      // fifth of the time) showed no difference in the fires' lag on PostgreSQL at 1M, in blocks
      // alternated within one run, and halves the pass's rate (docs/benchmarks.md § Retention).
      await sleep(Math.min(tookMs, 100) * (this.o.restFactor ?? 1));
    }
    return total;
  }

  /** Runs a pass now and then every `intervalMs` until close(). Does nothing when not enabled. */
  start(): void {
    if (!this.enabled || this.running !== null) return;
    const every = this.o.intervalMs ?? DEFAULT_RETENTION_INTERVAL_MS;
    this.running = (async () => {
      while (!this.stop.signal.aborted) {
        try {
          const n = await this.runOnce();
          if (n > 0) this.o.log?.info({ deleted: n }, "retention deleted ended executions");
        } catch (err) {
          if (!this.stop.signal.aborted) this.o.log?.warn({ err }, "retention pass failed; retrying next interval");
        }
        await this.o.clock.sleep(every, this.stop.signal);
      }
    })();
  }

  /** Stops after the current batch. */
  async close(): Promise<void> {
    this.stop.abort();
    await this.running;
  }
}
