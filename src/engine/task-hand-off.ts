/**
 * The hand-off at start (docs/workflows.md § Hand-off at start): a long poll that found nothing
 * parks here, and a transaction that starts executions leases their new tasks to the parked polls
 * itself, in the same transaction (the claim's lease and `WorkflowTaskStarted`, written by
 * StartBatch.flush). The poll is answered once that transaction has committed, so nothing a worker
 * is given can still be rolled back; a rollback answers nothing and the poll looks again. There is
 * no second transaction to lease the tasks and no wake-up round trip between the fire and the
 * worker (Temporal's sync match, eager dispatch). Only a top-level transaction hands off: a nested
 * one cannot see its own COMMIT, so its tasks stay pending and wake the polls as before.
 */
import type { Execution } from "../domain/execution.js";
import type { WorkflowOfferJson } from "../domain/worker-protocol.js";
import type { WorkerTask } from "../store/rows.js";
import type { StoreOps } from "../store/store.js";
import { type LeaseWrite, leasedTask } from "./task-transitions.js";

/** Who waits, for which workflow versions, and for how many tasks. */
export interface ParkRequest {
  workerId: string;
  /** The identity the poll authenticated as (null without identities): the lease records it. */
  identity: string | null;
  /** The polling process (the poll's `instance`; null: none said): the lease records it. */
  instance: string | null;
  offers: readonly WorkflowOfferJson[];
  /** Most tasks to hand it (its free slots). */
  room: number;
  /** How long the lease lasts from the start's instant. */
  leaseMs: number;
}

/** A parked poll: handed tasks by at most one transaction, then gone. */
export class ParkedPoll {
  private state: "parked" | "promised" | "gone" = "parked";
  private readonly taken = new AbortController();
  /** TaskHandOff's count of nudges when this poll parked. */
  private readonly nudgesAtPark: number;
  /** What the transaction it is promised to handed it so far. */
  readonly handed: LeaseWrite[] = [];
  private outcome: Promise<LeaseWrite[]> | null = null;
  private answer: ((tasks: LeaseWrite[]) => void) | null = null;

  constructor(
    readonly request: ParkRequest,
    private readonly unpark: (poll: ParkedPoll) => void,
    private readonly nudges: () => number,
    /** The nudges already told to this worker (TaskHandOff's count when its last poll was answered). */
    told: number,
    private readonly answered: () => void,
  ) {
    this.nudgesAtPark = told;
  }

  /** Aborts when a transaction has leased this poll tasks (its wait can end: the answer is coming). */
  get signal(): AbortSignal {
    return this.taken.signal;
  }

  /** Whether it takes no more tasks. */
  get full(): boolean {
    return this.handed.length >= this.request.room;
  }

  /**
   * Stops waiting: the tasks a committed transaction handed this poll, after that transaction has
   * ended (a poll promised tasks waits for them, whatever ended its wait); [] when none was.
   */
  leave(): Promise<LeaseWrite[]> {
    if (this.state === "parked") {
      this.state = "gone";
      this.unpark(this);
    }
    this.answered();
    return this.outcome ?? Promise.resolve([]);
  }

  offerFor(execution: Execution): WorkflowOfferJson | undefined {
    return this.request.offers.find((o) => o.name === execution.workflow && o.version === execution.version);
  }

  /** Ends the wait of a poll still parked (TaskHandOff.nudge). */
  nudge(): void {
    if (this.state === "parked") this.taken.abort();
  }

  /**
   * Whether a cancel was committed since it parked (TaskHandOff.nudge): its worker is asked to
   * heartbeat now. Counted, not flagged: a poll handed the very start that replaced the cancelled
   * run (cancel_previous) is settled by the same commit, before the nudge runs.
   */
  get nudged(): boolean {
    return this.nudges() > this.nudgesAtPark;
  }

  /** Taken by a transaction (TaskHandOff.take): only it may hand this poll tasks. */
  promise(): void {
    this.state = "promised";
    this.outcome = new Promise((resolve) => (this.answer = resolve));
    this.taken.abort();
  }

  /** The transaction ended: what it handed (committed) or nothing (rolled back). */
  settle(committed: boolean): void {
    this.state = "gone";
    this.answer?.(committed ? this.handed : []);
  }
}

const NONE: ReadonlyMap<string, LeaseWrite> = new Map();

/** The most workers whose told nudges are kept (TaskHandOff.told). */
const MAX_TOLD = 10_000;

export class TaskHandOff {
  /** The parked polls, oldest first. */
  private readonly parked = new Set<ParkedPoll>();
  /** Cancels committed so far (nudge): a poll parked before the last one heartbeats now. */
  private nudgeCount = 0;
  /**
   * Per worker id, the nudge count when its last parked poll was answered: a cancel committed while
   * its next poll was on the way (parked nowhere) is told when that poll parks, at once. Forgotten
   * when the worker leaves; dropped whole past MAX_TOLD workers (the heartbeat still carries it).
   */
  private readonly told = new Map<string, number>();
  /** The polls each open transaction has taken, answered when it ends. */
  private readonly promised = new WeakMap<StoreOps, Set<ParkedPoll>>();

  /** Parks a poll until it leaves ({@link ParkedPoll.leave}) or a transaction hands it tasks. */
  park(request: ParkRequest): ParkedPoll {
    const worker = request.workerId;
    const poll = new ParkedPoll(
      request,
      (p) => this.parked.delete(p),
      () => this.nudgeCount,
      this.told.get(worker) ?? this.nudgeCount,
      () => {
        if (this.told.size >= MAX_TOLD && !this.told.has(worker)) this.told.clear();
        this.told.set(worker, this.nudgeCount);
      },
    );
    this.parked.add(poll);
    if (poll.nudged) poll.nudge();
    return poll;
  }

  /** The worker left (its close): nothing is kept for it. */
  forget(workerId: string): void {
    this.told.delete(workerId);
  }

  /**
   * A cancel was requested for a run some worker may hold (a cancel, cancel_previous, a timeout):
   * every parked poll ends now, answered `heartbeat: true`, so its worker heartbeats at once and
   * hears the cancel there, instead of at its next heartbeat, a fifth of the lease later (6 s by
   * default: a replaced run of a 1 s cancel_previous schedule ran beside up to five others).
   * docs/workflows.md § Cancellation and compensation.
   */
  nudge(): void {
    this.nudgeCount++;
    for (const poll of this.parked) poll.nudge();
  }

  /** How many polls are parked (tests and metrics). */
  get waiting(): number {
    return this.parked.size;
  }

  /**
   * Inside the transaction that inserts `fresh` (new pending tasks of new executions): which of
   * them the polls take, as the leases to write in that transaction, by task id. The polls this
   * transaction has taken already come first, then the parked ones, oldest first; each takes up to
   * its room, and only the workflow versions it offers. The polls are answered when `tx` ends.
   * Nothing is taken when nothing is parked or `tx` is nested (StoreOps.onEnd).
   */
  take(
    tx: StoreOps,
    fresh: readonly { task: WorkerTask; execution: Execution }[],
    now: number,
  ): ReadonlyMap<string, LeaseWrite> {
    const mine = this.promised.get(tx);
    if ((this.parked.size === 0 && mine === undefined) || fresh.length === 0) return NONE;
    const out = new Map<string, LeaseWrite>();
    for (const poll of mine === undefined ? [...this.parked] : [...mine, ...this.parked]) {
      for (const { task, execution } of fresh) {
        if (poll.full) break;
        if (out.has(task.taskId)) continue;
        const offer = poll.offerFor(execution);
        if (offer === undefined) continue;
        if (!this.promiseTo(tx, poll)) return out;
        const { workerId, identity, instance, leaseMs } = poll.request;
        const handed: LeaseWrite = {
          task: leasedTask(task, { workerId, identity, untilMs: now + leaseMs }, offer),
          execution,
          instance,
        };
        poll.handed.push(handed);
        out.set(task.taskId, handed);
      }
      if (out.size === fresh.length) break;
    }
    return out;
  }

  /** Makes `poll` `tx`'s (once); false when `tx` cannot tell its end (nested: nothing is handed). */
  private promiseTo(tx: StoreOps, poll: ParkedPoll): boolean {
    let polls = this.promised.get(tx);
    if (polls?.has(poll)) return true;
    if (polls === undefined) {
      const taken = new Set<ParkedPoll>();
      const end = (committed: boolean) => () => {
        for (const p of taken) p.settle(committed);
      };
      if (!tx.onEnd({ committed: end(true), rolledBack: end(false) })) return false;
      this.promised.set(tx, taken);
      polls = taken;
    }
    polls.add(poll);
    this.parked.delete(poll);
    poll.promise();
    return true;
  }
}
