/**
 * The lease reaper: sleeps until the earliest lease expiry, then puts every expired task back
 * (attempt + 1 after its back-off; see WorkerTasks.reap). Runs on every server; on PostgreSQL the
 * expired rows are read with SKIP LOCKED and each is settled under its execution's lock, so two
 * servers reaping at once settle each task once.
 *
 * A lease runs out when its worker goes silent, not when this server could not hear it: after the
 * server starts, and after it answered 503 or met its database away itself, the first pass extends every
 * lapsed or lapsing lease to a full lease from now instead of reaping it, so a live worker's report
 * or heartbeat, sent again once the server is back, finds its lease (docs/workflows.md § Leases).
 * So does a pause of this process longer than a heartbeat interval (SIGSTOP, a paused VM).
 * A worker request that comes before that pass gives the grace itself (graceIfOwed): the first
 * heartbeat after an outage longer than the lease was answered "lost" when it beat the reaper's
 * next pass (up to a second after the database came back), and its worker dropped a finished run.
 */

import type { Clock } from "../domain/clock.js";
import { HeldBackLine, LoggedFailures, passLines } from "../domain/failure-spell.js";
import type { Store } from "../store/store.js";
import type { GracedLeases } from "../store/task-store.js";
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
  log?: {
    error(obj: object, msg: string): void;
    warn?(obj: object, msg: string): void;
    info?(obj: object, msg: string): void;
  };
  /**
   * `count`: how many worker requests this server answered 503 (src/api/worker-routes.ts counts
   * them). A count, not a time: a 503 in the same millisecond as a grace was taken as covered.
   */
  outages?: { count: number };
  /** The process's steady clock in ms (performance.now); tests give another, which notes pauses at once. */
  steadyMs?: () => number;
  /**
   * `clock` is the host's wall clock (a single server): a forward step of it is noted as a pause,
   * since the leases, held in wall time, lapsed by the step without their workers going silent
   * (src/clock/host-clock.ts). Not with the database's time of a cluster, nor with a test's clock.
   */
  wallSteps?: boolean;
}

const BATCH = 100;
/** How often a started reaper notes that its process is running (see {@link TaskReaper.notePause}). */
const TICK_MS = 1000;

/**
 * A start's grace goes to the leases of workers the database heard of at most this long before the
 * lease's last renewal (after the lease itself): a worker's row is written at most every 5 s, and a
 * heartbeat renews its lease when heard.
 */
export const START_GRACE_HEARD_SLACK_MS = 10_000;

export class TaskReaper {
  private readonly loop: DeadlineLoop;
  /**
   * The tasks this server's recent graces extended, with the end each gave. One whose lease still
   * ends there was not heard through a whole grace (no heartbeat moved it), so the next grace passes
   * it over and the pass reaps it. Without it every 503 extended every lease again, and a database
   * dropping the server's connections at least once a lease kept a dead worker's tasks leased for
   * as long (a tester: reaped 174 s after a kill -9 under 150 s of drops, instead of 27 s).
   */
  private graces: GracedLeases[] = [];
  /**
   * Tasks whose worker's heartbeat or report reached this server while its database was away
   * (answered 503), with when: the worker is alive though nothing of it could be written, so a grace
   * does not pass its lease over. Without it a full disk longer than a lease (heartbeats 503, a few
   * writes landing) reaped the live worker's leases and 87 finished runs ran again (a tester).
   */
  private readonly heardAway = new Map<string, number>();
  /** The outage count the last grace covered; null: none given since this server started. */
  private gracedAfter: number | null = null;
  /** The last read of expired leases took longer than a heartbeat interval. */
  private slowBefore = false;
  /**
   * A slow read's grace that has not been given yet: its extension failed (PostgreSQL aborted it to
   * break a deadlock, a tester saw) and the next pass, its read fast again, reaped every lease the
   * grace was for.
   */
  private slowGraceOwed = false;
  /** The grace being given, shared by whoever asked for it meanwhile. */
  private giving: Promise<void> | null = null;
  /** Pauses of this process longer than a heartbeat interval, and how many a grace covered. */
  private pauses = 0;
  private gracedPauses = 0;
  private lastTick = 0;
  private lastWall = 0;
  private ticker: NodeJS.Timeout | null = null;
  /** Pauses are noted once the reaper runs (or from the start with an injected steady clock). */
  private tracking: boolean;
  private readonly steady: () => number;
  /** The grace's line, said at most every 30 s (src/domain/failure-spell.ts), with the graces held back. */
  private readonly graceLine: HeldBackLine;
  /** The graces held back since the line was said: leases they extended, the last one's cause. */
  private heldBack = { extended: 0, because: "" };

  constructor(private readonly o: TaskReaperOptions) {
    this.graceLine = new HeldBackLine(() => o.clock.now());
    this.steady = o.steadyMs ?? (() => performance.now());
    this.tracking = o.steadyMs !== undefined;
    this.lastTick = this.steady();
    this.lastWall = o.clock.now();
    const failures = new LoggedFailures(
      o.log,
      () => o.clock.now(),
      passLines("reaping expired worker leases", "retrying"),
    );
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
      onError: (err, startedMs) => failures.failed(err, startedMs),
      onSuccess: () => failures.succeeded(),
    });
  }

  start(): void {
    if (!this.tracking) {
      this.lastTick = this.steady();
      this.lastWall = this.o.clock.now();
    }
    this.tracking = true;
    this.ticker ??= setInterval(() => this.notePause(), TICK_MS).unref();
    this.loop.start();
  }

  /** Stops the loop and waits for the current pass. Idempotent. */
  async close(): Promise<void> {
    if (this.ticker !== null) clearInterval(this.ticker);
    this.ticker = null;
    this.tracking = false;
    await this.loop.close();
  }

  /** One pass: every lease expired by now; returns how many tasks were put back. */
  async reapExpired(): Promise<number> {
    this.sayHeldBackGraces();
    // The grace extends what lapsed while this server could not hear its workers; what it passed
    // over (graced before, unheard since) is reaped below.
    if (this.graceOwed()) await this.graceIfOwed();
    let requeued = 0;
    for (;;) {
      const now = this.o.clock.now();
      const expired = await this.o.store.listExpiredLeases(now, BATCH);
      // The database took longer than a heartbeat interval to answer: the workers' heartbeats were
      // held up as long, so the leases that lapsed meanwhile say nothing about them. A grace, as
      // after a 503 (which a stall shorter than the answer bound never gives): before, the reaper
      // woken in a 30 s stall requeued every lease the moment the database answered, and the live
      // workers' runs ran again as attempt 2, their finished steps too.
      // Once per slow spell: a database slow at every read would otherwise extend a dead worker's
      // leases forever; the next slow read in a row reaps as usual.
      const answeredMs = this.o.clock.now();
      const slow = answeredMs - now > this.o.tasks.heartbeatMs;
      const firstSlow = slow && !this.slowBefore;
      this.slowBefore = slow;
      if (firstSlow || this.slowGraceOwed) {
        this.slowGraceOwed = true;
        await this.grace(answeredMs, `its database took ${((answeredMs - now) / 1000).toFixed(1)} s to answer`);
        this.slowGraceOwed = false;
        return requeued;
      }
      // A task whose worker's report is being handled here is its worker's still (whileReporting):
      // passed over, and looked at again at the next pass, about a tenth of a second later.
      let passedOver = 0;
      for (const task of expired) {
        if (this.o.tasks.isReporting(task.taskId)) passedOver++;
        else if (await this.o.tasks.reap(task.taskId)) requeued++;
      }
      if (expired.length < BATCH || passedOver > 0 || this.loop.signal.aborted) return requeued;
    }
  }

  /**
   * Gives the grace now when one is owed (the server started, or answered a worker 503, since the
   * last): worker requests that judge leases call it first, so they never meet a lease that lapsed
   * while this server could not hear them. Costs nothing when none is owed.
   */
  async graceIfOwed(): Promise<void> {
    if (!this.graceOwed()) return;
    this.giving ??= this.grace(this.o.clock.now(), this.owedFor()).finally(() => {
      this.giving = null;
    });
    await this.giving;
  }

  /** Why a grace is owed, as the log line says it (the first that applies). */
  private owedFor(): string {
    if (this.gracedAfter === null) return "it started";
    if (this.outages() > this.gracedAfter) {
      return "its database was away: a statement or a new connection to it failed, or a worker request was answered 503";
    }
    // A pause is also the event loop held by this process's own long work (a search over a large
    // SQLite table): a tester read "paused" as something outside the server.
    return this.o.wallSteps === true
      ? "this process was paused or its event loop held by long work, or the host's clock stepped forward"
      : "this process was paused or its event loop held by long work";
  }

  private graceOwed(): boolean {
    this.notePause();
    return this.gracedAfter === null || this.outages() > this.gracedAfter || this.pauses > this.gracedPauses;
  }

  /**
   * Worker requests this server answered 503 for want of the database, and its own operations that
   * met the database away (its reaper's, its firing loop's …): in a cluster a server no worker
   * talks to answered none, and its first pass after a 40 s outage took every lease a live worker
   * held through another server, whose finished runs ran again as attempt 2 (a tester).
   */
  private outages(): number {
    return (this.o.outages?.count ?? 0) + (this.o.store.outageCount?.() ?? 0);
  }

  /**
   * Counts a pause of this process longer than a heartbeat interval: the steady clock moved that far
   * since the last tick of a started reaper (SIGSTOP, a paused VM, an event loop blocked that long).
   * Meanwhile no worker's heartbeat could be heard, so the leases that lapsed say nothing about the
   * workers: after a 45 s SIGSTOP the reaper took a live worker's lease on SIGCONT and its step ran
   * again beside the first. Checked again by every pass (whose timer may run before the tick's).
   */
  private notePause(): void {
    if (!this.tracking) return;
    const now = this.steady();
    const wall = this.o.clock.now();
    if (now - this.lastTick > this.o.tasks.heartbeatMs) this.pauses++;
    // The host's clock stepped forward: every lease looks that much older than its worker's last
    // heartbeat (a +40 s step took a live worker's lease, and its step ran again as attempt 2).
    else if (this.o.wallSteps === true && wall - this.lastWall - (now - this.lastTick) > this.o.tasks.heartbeatMs) {
      this.pauses++;
    }
    this.lastTick = now;
    this.lastWall = wall;
  }

  /** A worker's heartbeat or report on `taskIds`, received at `ms`, was answered 503 (see heardAway). */
  heardWhileAway(taskIds: readonly string[], ms: number): void {
    for (const id of taskIds) this.heardAway.set(id, Math.max(ms, this.heardAway.get(id) ?? ms));
  }

  /** Extends every lapsed or lapsing lease to a full lease from `now` (see the class comment). */
  private async grace(now: number, because: string): Promise<void> {
    // The outages up to here are covered; a 503 answered while the grace runs owes another.
    const covers = this.outages();
    const pauses = this.pauses;
    const until = now + this.o.tasks.leaseMs;
    // A grace's tasks are kept a lease past their end: one unheard since has lapsed by then, and
    // the pass after the grace that passed it over reaped it.
    const leaseMs = this.o.tasks.leaseMs;
    this.graces = this.graces.filter((g) => g.end + leaseMs >= now);
    // A task heard since a grace was given is not passed over by it.
    const passOver = this.graces.map((g) => ({
      end: g.end,
      taskIds: g.taskIds.filter((id) => (this.heardAway.get(id) ?? -Infinity) < g.end - leaseMs),
    }));
    // At a start, only the leases of workers heard of since their lease's last renewal: each start
    // of a server restarted every 10 s gave a dead worker's leases another 30 s, and its executions
    // waited until the restarts stopped, up to 16 min (a tester's crash loop).
    const atStart = this.gracedAfter === null;
    const heardWithin = atStart ? leaseMs + START_GRACE_HEARD_SLACK_MS : undefined;
    const extendedIds = await this.o.store.extendLapsedLeases(until, passOver, heardWithin);
    if (extendedIds.length > 0) this.graces.push({ end: until, taskIds: extendedIds });
    // What was heard before the oldest grace kept was given matters to no grace.
    const oldest = Math.min(now, ...this.graces.map((g) => g.end - leaseMs));
    for (const [id, ms] of this.heardAway) if (ms < oldest) this.heardAway.delete(id);
    const extended = extendedIds.length;
    this.gracedAfter = covers;
    this.gracedPauses = pauses;
    if (extended > 0) this.sayGrace(extended, because);
  }

  /** The grace's line: the first, then at most one every 30 s, counting those held back meanwhile. */
  private sayGrace(extended: number, because: string): void {
    const say = this.graceLine.occurred();
    if (say === null) {
      this.heldBack = { extended: this.heldBack.extended + extended, because };
      return;
    }
    const held = say.heldBack > 0 ? { held_back: say.heldBack, held_back_extended: this.heldBack.extended } : {};
    this.heldBack = { extended: 0, because: "" };
    // The cause applied is said: a list of every possible one sent a tester looking for all of
    // them when only new connections to a frozen PostgreSQL had failed.
    this.o.log?.warn?.(
      { extended, because, ...held },
      `leases extended by a full lease: this server could not hear its workers (${because})`,
    );
  }

  /** Graces held back and not followed by another within 30 s: said by the next pass. */
  private sayHeldBackGraces(): void {
    const due = this.graceLine.due();
    if (due === null) return;
    const { extended, because } = this.heldBack;
    this.heldBack = { extended: 0, because: "" };
    this.o.log?.warn?.(
      { held_back: due.heldBack, held_back_extended: extended, because },
      `leases extended by a full lease ${due.heldBack} more times in ${due.forS} s: this server could not hear its workers (the last: ${because})`,
    );
  }
}
