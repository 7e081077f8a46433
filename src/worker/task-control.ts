/**
 * The worker's handle on a running task (run-task.ts runs it, worker.ts feeds it): the run's
 * `ctx.signal`, and what aborts it — a cancel, the lease lost or handed back, or no heartbeat of
 * the task acknowledged for longer than its lease.
 */
import type { TaskJson } from "../domain/worker-protocol.js";
import { CancelledError, LeaseLostError } from "./errors.js";
import type { WorkflowLogger } from "./workflow.js";

/**
 * How long a cancelled run's code may go on before its task is handed back so that its
 * compensations run; the server's grace for a timed-out run's worker (TIMEOUT_GRACE_MS) is 30 s
 * longer, for that hand-back and the compensations.
 */
export const CANCEL_GRACE_MS = 60_000;

/** The worker's handle on a running task: the heartbeat loop and the lease watch feed it. */
export class TaskControl {
  /** Made when the run first asks for its signal: most runs never do, and most are never cancelled. */
  private abort: AbortController | null = null;
  private reason: string | null = null;
  private lost = false;
  /** This worker handed the task back itself (close() past closeTimeoutMs): not a lost lease. */
  private returned = false;
  /**
   * When the server last acknowledged a heartbeat naming this task (when that heartbeat was sent),
   * or when the task was leased, on the worker's clock; null until the worker says (heard()).
   */
  private heardAtMs: number | null = null;
  /**
   * Why the signal aborted for a lease no heartbeat renewed in time (see {@link abortIfUnheard}):
   * the lease has most likely ended, which only the server can say.
   */
  private unheard: string | null = null;
  /** Step reports of this run the SDK is sending (ctx.step awaits them, not the run's own code). */
  private stepReports = 0;
  /** Said once: the task is gone and its code still holds a slot. */
  stuckSaid = false;
  /** The run's code has returned or thrown (what follows: its report, or compensations). */
  runSettled = false;
  /** When the worker first saw the cancel while the run's code still ran (its own clock). */
  cancelSeenMs: number | null = null;
  /**
   * The lease came after the cancel (or mid-compensation): the code runs only to register the
   * journaled steps' compensations (run-task.ts attemptOrReplay), and is not handed back.
   */
  readonly replay: boolean;
  private replayOver: () => void = () => undefined;
  /** Resolves when a replay has had its grace (Worker.handBackIgnoredCancels): compensate with what it registered. */
  readonly replayEnded: Promise<void>;

  constructor(
    readonly task: TaskJson,
    private readonly isDraining: () => boolean,
  ) {
    if (task.cancel_requested !== null) this.cancel(task.cancel_requested);
    this.replay = task.cancel_requested !== null || task.status === "COMPENSATING";
    this.replayEnded = new Promise((resolve) => (this.replayOver = resolve));
  }

  /**
   * The server acknowledged a heartbeat naming this task, sent at `sentAtMs` (the server renews
   * the lease from when it received it, so the lease lasts at least that long from `sentAtMs`);
   * also the lease's start, when the worker got the task.
   */
  heard(sentAtMs: number): void {
    this.heardAtMs = Math.max(this.heardAtMs ?? sentAtMs, sentAtMs);
  }

  /** When the lease ends if no heartbeat is acknowledged before, on the worker's clock (null: not known). */
  get unheardFrom(): number | null {
    return this.heardAtMs === null ? null : this.heardAtMs + this.task.lease_ms;
  }

  /**
   * Aborts the signal once no heartbeat of this task was acknowledged for longer than its lease
   * (a network partition, the server away, this process paused): the server has most likely
   * reaped the lease and another attempt may run the step now. Only the server can say: a report
   * the run still sends counts if the server kept the lease (it extends leases after its own
   * outage), and is refused otherwise. True when it aborted now.
   */
  abortIfUnheard(now: number): boolean {
    const from = this.unheardFrom;
    if (from === null || now <= from || this.unheard !== null || this.lost || this.runSettled) return false;
    const s = Math.round((now - (from - this.task.lease_ms)) / 1000);
    this.unheard = `no heartbeat of task ${this.task.task_id} was acknowledged by the server for ${s} s, longer than its lease (${this.task.lease_ms / 1000} s): the lease has most likely ended and the execution may run again elsewhere`;
    this.abort?.abort(this.abortReason());
    return true;
  }

  /** Whether the signal was aborted for a lease not heard in time (see {@link abortIfUnheard}). */
  get leaseUnheard(): boolean {
    return this.unheard !== null;
  }

  /** Runs `send`, a step report ctx.step awaits: meanwhile the run's code waits on the SDK. */
  async reportingStep<T>(send: () => Promise<T>): Promise<T> {
    this.stepReports++;
    try {
      return await send();
    } finally {
      this.stepReports--;
    }
  }

  /** Whether the run's code is waiting on the SDK's report of a step (its answer ends the wait). */
  get awaitingStepReport(): boolean {
    return this.stepReports > 0;
  }

  /** A replay's grace is over: it compensates now, the steps it did not reach failing as unreached. */
  endReplay(): void {
    this.replayOver();
  }

  /**
   * Called at each heartbeat: true when this cancelled run's code has not returned
   * {@link CANCEL_GRACE_MS} after the worker saw the cancel, and its task is handed back (the
   * caller releases it); a replay is not handed back (its next lease would replay as slowly) but
   * compensates now (Worker.handBackIgnoredCancels).
   */
  pastCancelGrace(now: number, log: WorkflowLogger): boolean {
    if (this.reason === null || this.runSettled || this.lost) return false;
    this.cancelSeenMs ??= now;
    if (now - this.cancelSeenMs < CANCEL_GRACE_MS) return false;
    const ids = { task_id: this.task.task_id, execution_id: this.task.execution_id };
    if (this.replay) {
      this.endReplay();
      log.warn(
        "a replay after a cancel has not reached its journaled steps 60 s on (code outside steps is slow): it compensates now, and the steps it did not reach are reported as not compensated",
        ids,
      );
      return false;
    }
    this.handBack();
    log.warn(
      "a cancelled run has not returned 60 s after its cancel (its code ignores ctx.signal): its task is handed back so that its compensations run; the code keeps its slot until it returns",
      ids,
    );
    return true;
  }

  get signal(): AbortSignal {
    if (this.abort === null) {
      this.abort = new AbortController();
      const why = this.abortReason();
      if (why !== null) this.abort.abort(why);
    }
    return this.abort.signal;
  }
  get cancelReason(): string | null {
    return this.reason;
  }
  get leaseLost(): boolean {
    return this.lost;
  }
  draining(): boolean {
    return this.isDraining();
  }

  cancel(reason: string): void {
    if (this.reason !== null || this.lost) return;
    this.reason = reason;
    this.abort?.abort(this.abortReason());
  }

  /** close() gave the task back to the server: its run's ending is not a lease lost to anyone. */
  handBack(): void {
    this.returned = true;
    this.loseLease();
  }
  get handedBack(): boolean {
    return this.returned;
  }

  loseLease(): void {
    if (this.lost) return;
    this.lost = true;
    this.abort?.abort(this.abortReason());
  }

  /** What the signal is aborted with: the first of the cancel and the lost lease, as they came. */
  private abortReason(): Error | null {
    if (this.reason !== null) return new CancelledError(this.reason);
    if (this.returned) {
      // Still a LeaseLostError (the task is no longer this worker's), but not one lost to anyone.
      return new LeaseLostError(
        `the worker is closing: it handed task ${this.task.task_id} back to the server (closeTimeoutMs passed), and the execution runs again elsewhere`,
      );
    }
    if (this.lost) return new LeaseLostError(`lost the lease on task ${this.task.task_id}`);
    if (this.unheard !== null) return new LeaseLostError(this.unheard);
    return null;
  }
}
