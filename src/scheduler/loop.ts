/**
 * The firing loop: one per server that may fire. It sleeps until the earliest due instant of any
 * active schedule (or until a change wakes it), fires everything due in batches, and goes back to
 * sleep. It is the only place in the scheduler that reads the clock or waits.
 *
 * Clock jumps: a jump forward makes occurrences due (catch-up decides); a jump backward only makes
 * the loop sleep longer, because a fire always moves next_fire past what it decided, so nothing is
 * decided twice.
 */

import type { Clock } from "../domain/clock.js";
import { thrownText } from "../domain/error-text.js";
import { isOutage, OrbitError } from "../domain/errors.js";
import { LoggedFailures, passLines } from "../domain/failure-spell.js";
import { withLinkedSignal } from "../domain/linked-signal.js";
import { inSpan } from "../domain/tracing.js";
import type { FireWindow } from "../engine/retention.js";
import type { Store, StoreOps } from "../store/store.js";
import { type FireDeps, type FireOutcome, type FireReport, fireSchedules } from "./fire.js";
import { committable, RolledBack } from "./fire-commit.js";
import { HELD_FIRES_AT_ONCE, HELD_LOCK_WAIT_MS, HeldRows, heldPause, heldRowsWarning, lockedDue } from "./held-rows.js";
import { keyTurns } from "./key-turns.js";
import { type SchedulerLogger, scheduleLog } from "./scheduler-log.js";
import { StallWatch } from "./stall-watch.js";

/**
 * The loop's fire transactions go ahead of queued worker traffic on SQLite's one connection, so a
 * worker draining a herd never makes the next occurrences fire late (docs/storage.md § SQLite).
 */
/** A failed round this long (ms) may have been frozen past the leadership's lock: ask it first (roundFailed). */
const PAUSED_ROUND_MS = 5000;
const URGENT = { urgent: true } as const;

/** Longest sleep when nothing is due: a safety net, not the mechanism (changes wake the loop). */
const IDLE_SLEEP_MS = 30_000;
/**
 * The pause after a round whose fires all failed in the database (a full disk, a trigger refusing
 * the insert): as long as after a round that failed as a whole, and not cut short by wake-ups, so
 * that a write that keeps failing is tried once a second instead of in a loop.
 */
const FAILED_PAUSE_MS = 1000;
/** The same failure of the same schedule (or of whole batches) is logged at most this often. */
const FAILURE_LOG_EVERY_MS = 60_000;
/** A fire's outcome, with the time it decided at when that was not its batch's. */
type TimedOutcome = FireOutcome & { firedAt?: number };
/** A fire that waited this long for its rows decides at the time after the wait (timeAfterWait). */
const WAITED_MS = 50;
/**
 * The most firing rounds retention's clearFor() waits for a gap before its batch goes anyway
 * (docs/operations.md § Retention): with fires due back to back it would otherwise never run.
 */
export const MAX_ROUNDS_WAITED = 8;

export type { SchedulerLogger } from "./scheduler-log.js";

export interface LoopOptions extends FireDeps {
  store: Store;
  clock: Clock;
  /** Schedules fired per transaction when many are due. Default 200. */
  batchSize?: number;
  /** Called after every fire that changed a schedule (metrics). */
  onFire?: (report: FireReport, firedAtMs: number) => void;
  log?: SchedulerLogger;
  /**
   * In shared mode, due times are compared with the database's clock. Default: the local clock.
   * Given a transaction, read on its connection (a second one from the pool, while holding one,
   * can starve the pool: test/faults/races.test.ts).
   */
  dueClock?: (tx?: StoreOps) => Promise<number>;
  /** May this server fire right now (active-standby: only the leader)? Default: always. */
  mayFire?: () => boolean;
  /**
   * Asks, now, whether this server still leads (active-standby: a query on the leadership's
   * connection), after a round that failed and took long: see {@link FiringLoop.roundFailed}.
   */
  stillLeads?: () => Promise<boolean>;
  /**
   * A fire batch waiting this long for the database is logged (warn), and again each time as long
   * again passes: a lock held on an Orbit table stalls the firing with no error. Wall time, not the
   * loop's clock. Default 5 s.
   */
  stallWarnMs?: number;
  /** A due row another session holds this long is logged (held-rows.ts). Wall time. Default 5 s. */
  heldRowWarnMs?: number;
}

export class SchedulerLoop implements FireWindow {
  private readonly abort = new AbortController();
  private wakeup = new AbortController();
  private running: Promise<void> | null = null;
  private readonly batchSize: number;
  /** Rounds in progress (a round: firing, then reading the next due instant). */
  private firing = 0;
  /** The next due instant on the loop's clock while it sleeps; null when it knows of none. */
  private nextDueAt: number | null = null;
  /** Warns while a fire batch waits for the database (stall-watch.ts). */
  private readonly stalls: StallWatch;
  /** Schedules this round's fire batches read (and so did not find held by another session). */
  private readonly seen = new Set<string>();
  private readonly held: HeldRows;
  /** Held rows being fired beside the loop (fireHeld), by schedule id; awaited by close(). */
  private readonly heldFires = new Map<string, Promise<void>>();
  /** clearFor() callers waiting for the current round to end. */
  private readonly roundEnded = new Set<() => void>();
  /** Schedules whose fire failed in the database during the current round. */
  private failedInRound = 0;
  /** Repeated failure lines, held back: key → when last logged and how many since. */
  private readonly failureLogs = new Map<string, { at: number; since: number }>();
  /** Rounds failing as a whole (the database down): said once, then every 30 s, and when they work again. */
  private readonly roundFailures: LoggedFailures;

  constructor(private readonly o: LoopOptions) {
    this.batchSize = o.batchSize ?? 200;
    this.stalls = new StallWatch({ dialect: o.store.dialect, log: o.log, everyMs: o.stallWarnMs });
    this.roundFailures = new LoggedFailures(o.log, () => o.clock.now(), passLines("firing", "retrying in 1 s"));
    this.held = new HeldRows(heldRowsWarning(o.log), o.heldRowWarnMs);
  }

  start(): void {
    if (this.running !== null) return;
    this.running = this.run().catch((err: unknown) => {
      this.o.log?.error({ err }, "scheduler loop stopped");
    });
  }

  /** A schedule changed (or an execution that a buffer waits for ended): look again now. */
  wake(): void {
    // Every ended execution wakes the loop; abort() builds a DOMException (a stack trace) even when
    // the signal is already aborted, which was 4 % of a busy server's CPU (docs/benchmarks.md § End to end).
    if (!this.wakeup.signal.aborted) this.wakeup.abort();
  }

  /** How long the fire batch now in progress has waited for the database, ms; 0 when none waits. */
  readonly fireWaitingMs = (): number => this.stalls.waitingMs();

  async close(): Promise<void> {
    this.abort.abort();
    this.wakeup.abort();
    await this.running;
    await Promise.all(this.heldFires.values());
    this.stalls.close();
    this.nextDueAt = null;
    this.endRound();
  }

  /**
   * Retention's question (FireWindow, docs/operations.md § Retention): resolves once a store
   * transaction of about `ms` would delay no fire: no round running, and the next due instant more
   * than `ms` away; else after the round that fires it, or after {@link MAX_ROUNDS_WAITED} rounds
   * without such a gap. No store reads: the loop already knows when it will wake.
   */
  async clearFor(ms: number, signal: AbortSignal): Promise<void> {
    // Bounded: on a server whose fires come back to back (no gap of `ms` ever), a batch goes after
    // this many rounds anyway, so retention delays one fire now and then instead of never running.
    for (let waited = 0; waited < MAX_ROUNDS_WAITED && !signal.aborted && !this.abort.signal.aborted; waited++) {
      const due = this.nextDueAt;
      if (this.firing === 0 && (due === null || due - this.o.clock.now() > ms)) return;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          this.roundEnded.delete(done);
          signal.removeEventListener("abort", done);
          resolve();
        };
        this.roundEnded.add(done);
        signal.addEventListener("abort", done, { once: true });
      });
    }
  }

  private endRound(): void {
    if (this.firing > 0 || this.roundEnded.size === 0) return;
    for (const done of [...this.roundEnded]) done();
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      const wake = this.wakeup.signal;
      let sleepMs = IDLE_SLEEP_MS;
      let failedPause = false;
      const roundStartedMs = this.o.clock.now();
      // The round covers reading the next due instant too, so retention never sees "nothing due"
      // between the fire and that read.
      this.firing++;
      try {
        if (this.o.mayFire?.() ?? true) {
          this.seen.clear();
          this.failedInRound = 0;
          const fired = await this.fireDue();
          const next = await this.stalls.during(() => this.o.store.nextDueMs());
          this.roundFailures.succeeded();
          const now = this.o.dueClock ? await this.o.dueClock() : this.o.clock.now();
          let held: string[] = [];
          if (next !== null && next <= now) held = await this.lookForHeld(now);
          else this.held.clear();
          if (next !== null) sleepMs = Math.max(0, Math.min(IDLE_SLEEP_MS, next - now));
          // Only rows another session holds are due: each waits its turn for its row's lock (a
          // stream of short writes passed it over round after round); then, rather than a spin, a
          // short wall-clock pause that a wake-up (a change, a new schedule) still ends.
          if (held.length > 0) this.fireHeld(held, now);
          if (held.length > 0 && fired === 0) await heldPause(wake, signal);
          // Every fire of the round failed in the database and they are still due: the same writes
          // would fail again at once, round after round (a full disk spun a core and logged 1,300
          // lines a second). Try again in a second, as after a round that failed as a whole.
          if (this.failedInRound > 0 && fired === 0 && next !== null && next <= now) failedPause = true;
          // On the loop's own clock (the due clock may be the database's).
          this.nextDueAt = next === null ? null : this.o.clock.now() + Math.max(0, next - now);
        } else {
          // A standby does not fire: a spell of firing failures ends with the leadership, unsaid
          // ("this server is a standby" says it), so failed_for_s counts only time spent leading.
          this.roundFailures.forget();
          sleepMs = 1000;
          this.nextDueAt = null;
        }
      } catch (err) {
        await this.roundFailed(err, roundStartedMs);
        // Rows seen held before say nothing once rounds fail (held-rows.ts).
        this.held.clear();
        sleepMs = 1000;
        this.nextDueAt = null;
      } finally {
        this.firing--;
        this.endRound();
      }
      if (signal.aborted) break;
      if (failedPause) await this.o.clock.sleep(FAILED_PAUSE_MS, signal);
      else if (!wake.aborted && sleepMs > 0) {
        // Not AbortSignal.any: on Node 20 it left an entry in the loop's signal per round (linked-signal.ts).
        await withLinkedSignal([signal, wake], (stop) => this.o.clock.sleep(sleepMs, stop));
      }
      // Store calls can resolve without touching the event loop (SQLite): always let timers and
      // I/O run between rounds, so a schedule that stays due can never starve the process.
      else await new Promise((resolve) => setImmediate(resolve));
      if (wake.aborted) this.wakeup = new AbortController();
    }
  }

  /**
   * A round that failed as a whole: a firing failure while this server should fire; else the round
   * of a leader that lost its lock on the way (its connections failed with the lock's), which the
   * leadership connection's own lines tell: said once, in one line, and not as "firing failed",
   * whose spell would have lasted until the server led again (docs/cluster.md § active-standby).
   */
  private async roundFailed(err: unknown, startedMs: number): Promise<void> {
    let leads = this.o.mayFire?.() ?? true;
    // A leader frozen mid-round (SIGSTOP, a paused VM) lost its lock meanwhile, but the round's
    // error can come before its leadership connection's: it logged "firing failed" (error), blaming
    // the database, and stepped down 0.1 s later (a tester). A long round asks the leadership first.
    if (leads && this.o.stillLeads !== undefined && this.o.clock.now() - startedMs >= PAUSED_ROUND_MS) {
      leads = await this.o.stillLeads().catch(() => false);
    }
    if (leads) {
      this.roundFailures.failed(err, startedMs);
      return;
    }
    this.roundFailures.forget();
    this.o.log?.warn(
      isOutage(err) ? { error: thrownText(err) } : { err },
      "firing round failed after this server stopped leading; the leader fires what is due",
    );
  }

  /** Fires everything due now, batch after batch; returns how many schedules advanced. */
  async fireDue(): Promise<number> {
    // SQLite: worker traffic waits until everything due has fired (docs/storage.md § SQLite).
    const release = this.o.store.prioritize?.();
    this.firing++;
    try {
      return await this.fireAll();
    } finally {
      this.firing--;
      release?.();
      this.endRound();
    }
  }

  private async fireAll(): Promise<number> {
    let total = 0;
    for (;;) {
      const now = this.o.dueClock ? await this.o.dueClock() : this.o.clock.now();
      // One span per batch: the executions it starts are its children (docs/operations.md § Tracing).
      const { fired, seen } = await inSpan("orbit.fire", {}, async (span) => {
        const batch = await this.fireBatch(now);
        span.setAttributes({ "orbit.schedules_seen": batch.seen, "orbit.schedules_fired": batch.fired });
        return batch;
      });
      total += fired;
      if (seen < this.batchSize || this.abort.signal.aborted) return total;
      // cluster (docs/cluster.md): a leader that lost its lock stops between batches, not after the herd.
      if (!(this.o.mayFire?.() ?? true)) return total;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /**
   * One transaction for a whole batch (fast on SQLite, where every commit is a sync): see
   * fireSchedules. When a fire of the batch lost its compare-and-set (its starts are written, its
   * row is not) or failed unexpectedly, the batch is rolled back and its schedules are fired again
   * one transaction each, each row read afresh, so one schedule's trouble never holds back the
   * others. Every outcome is logged.
   */
  private async fireBatch(now: number): Promise<{ fired: number; seen: number }> {
    let seen = 0;
    let ids: string[] = [];
    let outcomes: TimedOutcome[];
    let firedAt = now;
    const since = performance.now();
    const stalled = this.stalls.watch();
    try {
      outcomes = await this.o.store.transaction(async (tx) => {
        const rows = await tx.listDueSchedules({ dueAtOrBeforeMs: now, limit: this.batchSize, skipLocked: true });
        seen = rows.length;
        ids = rows.map((r) => r.scheduleId);
        for (const id of ids) this.seen.add(id);
        firedAt = rows.length === 0 ? now : await this.timeAfterWait(tx, now, since);
        return committable(await fireSchedules(tx, keyTurns(rows), firedAt, this.o));
      }, URGENT);
    } catch (err) {
      // The database away (a dropped connection, a full disk) is not about one schedule: the round
      // fails as a whole and is tried again in a second. Fired one transaction each, a batch of 200
      // took a minute on a loaded cluster whose connections were being killed (a tester).
      if (ids.length === 0 || isOutage(err)) throw err;
      const lost = err instanceof RolledBack ? err.outcomes.filter((o) => o.kind === "lost_cas") : [];
      if (lost.length > 0) {
        this.o.log?.warn(
          { schedules: ids.length, changed: lost.map((o) => o.report.scheduleId) },
          "fire batch rolled back: a schedule changed while it was firing; firing each schedule on its own",
        );
      } else if (!(this.o.mayFire?.() ?? true)) {
        // No longer the leader: its batch's schedules are the next leader's (below).
        this.o.log?.warn(
          { schedules: ids.length, err },
          "fire batch failed and was rolled back; this server no longer leads, so the next leader fires them",
        );
      } else {
        this.logFailure("", (repeated) =>
          this.o.log?.warn(
            { schedules: ids.length, err, ...repeated },
            "fire batch failed and was rolled back; firing each schedule on its own",
          ),
        );
      }
      // The batch's wait is over; each schedule's own fire is watched on its own (the warnings went
      // on counting from the batch's start, 34 s, 39 s, 44 s, through the fallback).
      stalled();
      outcomes = [];
      for (const id of ids) {
        // A leader that lost its lock (its connections went with the batch's) leaves them to the
        // next leader: it fired them one by one beside it for 0.6 s (docs/cluster.md).
        if (!(this.o.mayFire?.() ?? true) || this.abort.signal.aborted) break;
        const alone = this.stalls.watch();
        try {
          const outcome = await this.fireOne(id, now);
          if (outcome !== null && outcome !== "lock_timeout") outcomes.push(outcome);
        } finally {
          alone();
        }
      }
    } finally {
      stalled();
    }
    for (const o of outcomes) {
      this.logOutcome(o);
      if (o.report.advanced) this.o.onFire?.(o.report, o.firedAt ?? firedAt);
    }
    return { fired: outcomes.filter((o) => o.report.advanced).length, seen };
  }

  /**
   * The time a fire decides and records at: the time its rows were asked for, or, when getting them
   * took longer than {@link WAITED_MS} (another session's lock on them, a stalled database, the
   * SQLite queue), the time after the wait. With the time from before, an occurrence 20 s late was
   * judged within a 10 s misfire grace, and its ledger row, trigger and the fire-lag metric said it
   * started on time.
   */
  private async timeAfterWait(tx: StoreOps, now: number, since: number): Promise<number> {
    if (performance.now() - since < WAITED_MS) return now;
    return Math.max(now, this.o.dueClock ? await this.o.dueClock(tx) : this.o.clock.now());
  }

  /**
   * The round left something due: the due rows, read without locks, that no batch of the round saw
   * were passed over because another session holds them (those it saw and left due failed, and
   * said so). Only such rounds pay this read.
   */
  private async lookForHeld(now: number): Promise<string[]> {
    const due = await this.o.store.listDueSchedules({ dueAtOrBeforeMs: now, limit: this.batchSize });
    const held = due.map((r) => r.scheduleId).filter((id) => !this.seen.has(id));
    this.held.note(held, performance.now());
    return held;
  }

  /**
   * Fires rows the round passed over as held (PostgreSQL), each in its own transaction that waits in
   * the queue for the row's lock at most {@link HELD_LOCK_WAIT_MS}: a stream of short API writes or
   * worker reports held a schedule's row at every round's instant, and `SKIP LOCKED` passed it over
   * until its occurrences were missed, 20 of 20 with five writers (a tester). Beside the loop, not
   * in it, so that a long holder (a frozen session) delays no other schedule; one at a time per row.
   */
  private fireHeld(ids: readonly string[], now: number): void {
    for (const id of ids) {
      if (this.heldFires.has(id) || this.heldFires.size >= HELD_FIRES_AT_ONCE) continue;
      const fire = this.fireOne(id, now, HELD_LOCK_WAIT_MS).then((outcome) => {
        if (outcome === null || outcome === "lock_timeout") return;
        this.logOutcome(outcome);
        if (outcome.report.advanced) this.o.onFire?.(outcome.report, outcome.firedAt ?? now);
        this.wake();
      });
      this.heldFires.set(
        id,
        fire.finally(() => this.heldFires.delete(id)),
      );
    }
  }

  /** A batch of one, in its own transaction, the row read afresh (its lock waited for at most `waitMs`). */
  private async fireOne(
    scheduleId: string,
    now: number,
    waitMs?: number,
  ): Promise<TimedOutcome | null | "lock_timeout"> {
    const since = performance.now();
    try {
      return await this.o.store.transaction(async (tx) => {
        const row = await lockedDue(tx, scheduleId, now, waitMs);
        if (row === null) return null;
        const firedAt = await this.timeAfterWait(tx, now, since);
        const outcome = committable(await fireSchedules(tx, [row], firedAt, this.o))[0];
        return outcome === undefined ? null : { ...outcome, firedAt };
      }, URGENT);
    } catch (err) {
      if (err instanceof RolledBack) return err.outcomes[0] ?? null;
      if (waitMs !== undefined && err instanceof OrbitError && err.details?.lockTimeout === true) return "lock_timeout";
      this.failedInRound++;
      // The database away is not about this schedule: one line for every schedule it fails (each
      // wrote its own, with the stack: 35 lines in 40 ms at the start of an outage, a tester saw).
      if (isOutage(err)) {
        this.logFailure("outage", (repeated) =>
          this.o.log?.error(
            { err, ...repeated },
            "fire failed: the database is unavailable; the due occurrences stay due and are tried again",
          ),
        );
        return null;
      }
      this.logFailure(scheduleId, (repeated) =>
        scheduleLog(this.o.log, scheduleId)?.error(
          { err, ...repeated },
          "fire failed in the database; the occurrence stays due and is tried again",
        ),
      );
      return null;
    }
  }

  /**
   * Logs a failure under `key` (a schedule, or "" for whole batches) unless one was logged less
   * than {@link FAILURE_LOG_EVERY_MS} ago; a line after held-back ones says how many (`repeated`).
   * Wall time: the loop's clock may stand still (tests) or be the database's.
   */
  private logFailure(key: string, log: (repeated: { repeated?: number }) => void): void {
    const now = performance.now();
    const last = this.failureLogs.get(key);
    if (last !== undefined && now - last.at < FAILURE_LOG_EVERY_MS) {
      last.since++;
      return;
    }
    if (this.failureLogs.size > 10_000) this.failureLogs.clear();
    this.failureLogs.set(key, { at: now, since: 0 });
    log(last !== undefined && last.since > 0 ? { repeated: last.since } : {});
  }

  private logOutcome(o: FireOutcome): void {
    if (this.o.log === undefined || o.kind === "unchanged") return;
    const scheduleId = o.report.scheduleId;
    if (o.kind === "fired" && o.deadLetters.length === 0) {
      // The common case, once per fire: no child logger (a herd fires thousands per second).
      this.o.log.debug?.({ schedule_id: scheduleId, started: o.report.started, skipped: o.report.skipped }, "fired");
      return;
    }
    const log = scheduleLog(this.o.log, scheduleId) as SchedulerLogger;
    if (o.kind === "lost_cas") {
      log.warn({}, `schedule ${scheduleId} changed while it was firing; the change wins`);
      return;
    }
    for (const d of o.deadLetters) log.warn({ occurrence: d.occurrence, error: d.error }, "occurrence dead-lettered");
    if (o.kind === "retry") {
      const inS = Math.max(0, o.inMs) / 1000;
      log.warn(
        { occurrence: o.occurrence, error: o.error },
        `start failed; retrying the occurrence in ${Number(inS.toFixed(inS < 1 ? 2 : 1))} s`,
      );
    } else log.debug?.({ started: o.report.started, skipped: o.report.skipped }, "fired");
  }
}
