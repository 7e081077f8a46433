/**
 * The Worker: registers its workflows, long-polls the server for tasks (up to `concurrency` at
 * once), runs them, and heartbeats their leases. `close()` stops polling and lets each running
 * execution finish its current step; the rest of it is handed back to the server for another worker.
 */

import { randomBytes } from "node:crypto";
import { setMaxListeners } from "node:events";
import { hostname } from "node:os";
import { bearerToken, serverUrl } from "../client/http.js";
import { SystemClock } from "../clock/system-clock.js";
import { hasUnstorableChar } from "../domain/body-guard.js";
import type { Clock } from "../domain/clock.js";
import { withLinkedSignal } from "../domain/linked-signal.js";
import type { TaskJson, WorkflowOfferJson } from "../domain/worker-protocol.js";
import { watchBlocking } from "./blocking.js";
import { watchForCancels } from "./cancel-watch.js";
import { errorJson } from "./errors.js";
import { answeredAway, watchLeases } from "./lease-watch.js";
import { LoggedSpell } from "./logged-spell.js";
import { LostPolls } from "./lost-polls.js";
import { ProtocolClient } from "./protocol-client.js";
import { type Registering, registerAgain, registerWorkflows } from "./registration.js";
import { CANCEL_GRACE_MS, runTask, TaskControl } from "./run-task.js";
import { settleable } from "./settleable.js";
import { closeOnSignals } from "./signals.js";
import { witnessStrayRejections } from "./stray-rejections.js";
import { jsonText, withTaskIds } from "./task-log.js";
import { checkWorkerOptions, type WorkerOptions } from "./worker-options.js";
import type { WorkflowDefinition, WorkflowLogger } from "./workflow.js";

export type { ShutdownSignal, WorkerOptions } from "./worker-options.js";

const DEFAULT_HEARTBEAT_MS = 5_000;
const HEARTBEAT_RETRY_MS = 1000; // the wait before a heartbeat that follows a failed one
export const DEFAULT_CONCURRENCY = 100;
const MAX_TASKS_PER_POLL = 100; // the most tasks the server leases per poll (its MAX_TASKS_PER_POLL)

/** How long a request close() makes may wait for its answer (a release of what still ran). */
const CLOSING_REQUEST_MS = 5000;

export class Worker {
  readonly workerId: string;
  private readonly o: WorkerOptions;
  private readonly clock: Clock;
  private readonly log: WorkflowLogger;
  private readonly byKey = new Map<string, WorkflowDefinition>();
  private readonly offers: WorkflowOfferJson[];
  private readonly concurrency: number;
  private readonly closing = new AbortController();
  /**
   * Ends the polls in flight, on close only once the server has ended them or could not be asked
   * ({@link endPolls}): a poll given up on here while the server handed it a task lost that task
   * until its lease ran out (30 s, and an attempt).
   */
  private readonly pollsStop = new AbortController();
  /** The poll in flight (settles, never rejects), for close to wait on. */
  private pollInFlight: Promise<unknown> | null = null;
  /** A poll was sent: the server counts this worker, and close() tells it that it left. */
  private polled = false;
  private readonly api: ProtocolClient;
  private readonly registering: Registering;
  private readonly running = new Map<string, { control: TaskControl; done: Promise<void> }>();
  /**
   * Tasks whose code runs (what `concurrency` bounds): a task leaves it when its run has ended and
   * only its report is left, so the next poll goes out beside the report instead of after it
   * (`running` still holds it, for heartbeats and close, until the report is answered).
   */
  private busy = 0;
  private slotFreed: (() => void) | null = null;
  private heartbeatMs = DEFAULT_HEARTBEAT_MS;
  /** Aborted to cut the heartbeat loop's sleep short (a task asked for a shorter interval). */
  private heartbeatWake = new AbortController();
  private runPromise: Promise<void> | null = null;
  /**
   * Aborted by close() once closeTimeoutMs has passed and what still ran was handed back: run()
   * stops waiting for that code (it may never settle) and the heartbeats stop.
   */
  private readonly abandoned = new AbortController();
  private closed: Promise<void> | null = null;
  /** Settled by work() once registered (registered()); nobody need ask, so its rejection is handled. */
  private readonly registration = settleable();
  private readonly isClosing = (): boolean => this.closing.signal.aborted;

  constructor(options: WorkerOptions) {
    checkWorkerOptions(options);
    serverUrl(options.server, "Worker");
    if (!Array.isArray(options.workflows) || options.workflows.length === 0) {
      throw new TypeError("a Worker needs at least one workflow: `workflows: [defineWorkflow(…), …]`");
    }
    this.o = options;
    this.clock = options.clock ?? new SystemClock();
    this.log = options.logger ?? consoleLogger();
    this.concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    if (!Number.isInteger(this.concurrency) || this.concurrency < 1)
      throw new TypeError("concurrency must be a positive integer");
    this.workerId = options.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
    // The server refuses every request of a worker whose id it cannot take: say so now.
    if (!storableId(this.workerId)) {
      throw new TypeError("workerId must be 1 to 200 characters of text (no NUL, no lone surrogate)");
    }
    for (const [i, w] of options.workflows.entries()) {
      // From plain JavaScript: `[w, 5]`, `[null]` or a `{name, version}` without `run` failed later
      // as a server refusal, a bare TypeError, or each task failing "def.run is not a function".
      const d = w as Partial<WorkflowDefinition> | null;
      if (d === null || typeof d !== "object" || typeof d.name !== "string" || typeof d.run !== "function") {
        throw new TypeError(
          `workflows[${i}] is not a workflow definition: make each with defineWorkflow({name, version, run})`,
        );
      }
      const key = `${d.name}@${d.version}`;
      const known = this.byKey.get(key);
      // The same definition twice is harmless; two different ones would leave which runs to chance.
      if (known !== undefined && known !== w) {
        throw new TypeError(`workflow ${key} is given twice, as two different definitions; give each version once`);
      }
      this.byKey.set(key, w as WorkflowDefinition);
    }
    this.offers = [...this.byKey.values()].map((w) => ({
      name: w.name,
      version: w.version,
      max_attempts: w.retry?.maxAttempts ?? 3,
      backoff_ms: w.retry?.backoffMs ?? 1000,
    }));
    this.api = new ProtocolClient({
      server: serverUrl(options.server, "Worker"),
      token: bearerToken(options.token, "Worker"),
      workerId: this.workerId,
      clock: this.clock,
      signal: this.pollsStop.signal,
      giveUp: this.abandoned.signal,
    });
    // Every task in flight waits on these (a report being resent sleeps on them): more than ten
    // at once is the normal case, not a leak, and Node's MaxListenersExceededWarning ("possible
    // EventTarget memory leak") went to the user's stderr in every outage of the server.
    setMaxListeners(0, this.closing.signal, this.abandoned.signal, this.pollsStop.signal);
    this.registering = {
      api: this.api,
      definitions: this.byKey,
      clock: this.clock,
      log: this.log,
      closing: this.closing.signal,
    };
  }

  /**
   * Resolves once `run()` has registered the workflows with the server (before its first poll), so
   * that code in the same process can then create schedules or start executions of them; rejects
   * with run()'s error when registration fails, or when the worker closes before it registered.
   */
  registered(): Promise<void> {
    return this.registration.promise;
  }

  /** Registers the workflows, then works until `close()`; resolves once closed. */
  run(): Promise<void> {
    if (this.runPromise === null) {
      const stopListening = closeOnSignals(this.o.shutdownSignals ?? ["SIGINT", "SIGTERM"], (signal) => {
        this.log.info(`${signal}: closing the worker`, { worker_id: this.workerId });
        return this.close();
      });
      const stopWitnessing = witnessStrayRejections(this.log, this.workerId, this.running);
      this.runPromise = this.work();
      void this.runPromise.then(stopListening, stopListening).then(stopWitnessing);
    }
    return this.runPromise;
  }

  /** Stops polling; running executions finish their current step, then are handed back. Idempotent. */
  close(): Promise<void> {
    this.closed ??= this.shutDown();
    return this.closed;
  }

  private async shutDown(): Promise<void> {
    this.closing.abort();
    this.slotFreed?.();
    if (this.runPromise === null) {
      this.pollsStop.abort();
      return this.registration.reject(new Error(CLOSED_FIRST));
    }
    // The server did not answer at close (away, stalled): what close() still has to say to it is
    // one short try each, and the last (leave) is not tried, so close() ends near closeTimeoutMs
    // (a stalled server held it 40 s with closeTimeoutMs 3 s: the release's 30 s, a tester).
    // A worker that never polled (closed while it registered) has nothing to leave: a leave sent to
    // a server that never answered its registration held close() 5 s (a tester).
    // Code whose task was handed back (a cancel it ignored) is not waited for: it held close() 30 s (a tester).
    const holding = () => [...this.running].filter(([, r]) => !r.control.handedBack);
    if (holding().length > 0) {
      // Said now: a deploy's SIGTERM was silent until "worker closed", up to closeTimeoutMs later (a tester).
      this.log.info("closing: waiting for the running executions to finish their current step", {
        running: holding().length,
        close_timeout_ms: this.o.closeTimeoutMs ?? 30_000,
      });
    }
    let away = !(await this.endPolls()) || !this.polled;
    const timeout = new AbortController();
    const all = Promise.all(holding().map(([, r]) => r.done));
    await Promise.race([all, this.clock.sleep(this.o.closeTimeoutMs ?? 30_000, timeout.signal)]);
    timeout.abort();
    const left = holding().map(([id]) => id);
    if (left.length) {
      for (const id of left) this.running.get(id)?.control.handBack();
      // Handed back: what that code reports now is refused, and close() does not wait for it. A
      // task "left" may have run its code and be waiting for a report the server did not take.
      this.log.warn(
        "closing: tasks not finished after closeTimeoutMs (code still running, or a report the server did not take) were handed back",
        { tasks: left.length },
      );
      await this.api.release(left, CLOSING_REQUEST_MS).catch((err: unknown) => {
        // The server did not hear it (away): the tasks are leased to this worker until their leases end.
        away = true;
        this.log.warn(
          "closing: could not hand the tasks back to the server; they run again, elsewhere, when their leases end (30 s)",
          { tasks: left.length, error: errorJson(err).message },
        );
      });
    }
    this.abandoned.abort();
    // A run() that failed (registration refused) said so to its caller; closing after it is not
    // a second failure (a `finally { await worker.close() }` must not throw it again).
    await this.runPromise.catch(() => undefined);
    // Gone now: the server stops counting this worker live (a minute after its last poll before).
    if (!away) await this.api.leave().catch(() => undefined);
    this.api.close();
    this.log.info("worker closed", { worker_id: this.workerId });
  }

  /**
   * Has the server end this worker's polls (`POST /v1/worker/leave` answers its parked polls at
   * once), so a task it handed one of them at that moment comes back in the answer and is released
   * (work()), instead of going to a poll this side had already given up on. Waits for the poll in
   * flight up to 2 s after, then gives it up (a server that cannot be reached, or does not answer):
   * false then.
   */
  private async endPolls(): Promise<boolean> {
    const inFlight = this.pollInFlight;
    let answered = true;
    if (inFlight !== null) {
      const bound = new AbortController();
      answered = await Promise.race([
        this.api
          .leave()
          .then(() => inFlight)
          .then(
            () => true,
            () => false,
          ),
        this.clock.sleep(2000, bound.signal).then(() => false),
      ]);
      bound.abort();
    }
    this.pollsStop.abort();
    return answered;
  }

  private async work(): Promise<void> {
    // Closed before it ran, or while it registered: it never polls, and says nothing of polling.
    if (this.closing.signal.aborted) return this.registration.reject(new Error(CLOSED_FIRST));
    try {
      await registerWorkflows(this.registering);
    } catch (err) {
      this.registration.reject(err);
      throw err;
    }
    if (this.closing.signal.aborted) return this.registration.reject(new Error(CLOSED_FIRST));
    this.registration.resolve();
    this.log.info("worker polling", {
      server: this.o.server,
      worker_id: this.workerId,
      workflows: this.offers.map((w) => `${w.name}@${w.version}`),
      concurrency: this.concurrency,
    });
    const heartbeats = this.heartbeatLoop();
    const leasesWatched = new AbortController();
    const leaseWatch = watchLeases({
      clock: this.clock,
      log: this.log,
      running: () => [...this.running.values()].map((r) => r.control),
      everyMs: () => this.heartbeatMs,
      heartbeatNow: () => this.heartbeatWake.abort(),
      stop: leasesWatched.signal,
    });
    const stopWatch = watchBlocking(this.log);
    const polls = new LoggedSpell(this.clock, this.log, {
      first: "polling failed; retrying every 1 s",
      still: "polling still fails; retrying every 1 s",
      again: "polling again",
      counted: "failed_polls",
    });
    const lost = new LostPolls(() => this.api.instance);
    while (!this.closing.signal.aborted) {
      const free = this.concurrency - this.busy;
      if (free <= 0) {
        // No poll of this worker is parked now, so none can be nudged: one that takes no task
        // watches for cancels of the runs it holds until a slot frees.
        const slotFree = new AbortController();
        const watching = watchForCancels(
          { api: this.api, offers: this.offers, clock: this.clock, heartbeatNow: () => this.heartbeatWake.abort() },
          [slotFree.signal, this.closing.signal],
        );
        await new Promise<void>((resolve) => {
          this.slotFreed = resolve;
        });
        this.slotFreed = null;
        slotFree.abort();
        await watching;
        continue;
      }
      let tasks: TaskJson[];
      let sent: { held?: string[] } = {};
      try {
        // While polls fail, one that gets through answers at once (wait_ms 0), so "polling again" is
        // said when the server is back, not when a long poll ends up to 20 s later.
        sent = lost.held(this.running);
        const polling = this.api.poll({
          workflows: this.offers,
          max_tasks: Math.min(free, MAX_TASKS_PER_POLL),
          ...(polls.failing ? { wait_ms: 0 } : {}),
          ...sent,
        });
        this.pollInFlight = polling.catch(() => undefined);
        this.polled = true;
        const answer = await polling.finally(() => {
          this.pollInFlight = null;
        });
        tasks = answer.tasks;
        // A cancel was requested for a run some worker holds: heartbeat now to hear whether it is
        // one of this worker's (its code's signal aborts in milliseconds, not at the next heartbeat).
        if (answer.heartbeat === true && this.running.size > 0) this.heartbeatWake.abort();
        if (answer.unregistered !== undefined && answer.unregistered.length > 0) {
          await registerAgain(this.registering, answer.unregistered);
        }
      } catch (err) {
        if (this.closing.signal.aborted) break;
        lost.failed(err, sent);
        polls.failed(err);
        await this.clock.sleep(1000, this.closing.signal);
        continue;
      }
      polls.succeeded();
      lost.answered();
      if (this.closing.signal.aborted) {
        await this.api.release(tasks.map((t) => t.task_id)).catch(() => undefined);
        break;
      }
      for (const task of tasks) this.startTask(task);
    }
    await Promise.race([
      Promise.all([...this.running.values()].map((r) => r.done)),
      abortedPromise(this.abandoned.signal),
    ]);
    await heartbeats;
    leasesWatched.abort();
    await leaseWatch;
    stopWatch();
  }

  private startTask(task: TaskJson): void {
    if (task.heartbeat_ms < this.heartbeatMs) {
      this.heartbeatMs = task.heartbeat_ms;
      this.heartbeatWake.abort();
    }
    // Leased again while an earlier attempt still runs here: the server let that lease end (it was
    // away longer than the lease). That attempt stops at its next report; its reports are refused.
    this.running.get(task.task_id)?.control.loseLease();
    const def = this.byKey.get(`${task.workflow}@${task.version}`);
    const control = new TaskControl(task, this.isClosing);
    // The lease starts about now (the server leased it just before it answered the poll).
    control.heard(this.clock.now());
    this.busy++;
    let held = true;
    const release = (): void => {
      if (!held) return;
      held = false;
      this.busy--;
      this.slotFreed?.();
    };
    const done = def
      ? runTask(def, control, this.api, this.log, release)
      : Promise.resolve(withTaskIds(this.log, task).error("leased a task of an unknown workflow"));
    const finished: Promise<void> = done.finally(() => {
      if (this.running.get(task.task_id)?.done === finished) this.running.delete(task.task_id);
      release();
      // Closing: the heartbeat loop ends as soon as nothing runs, not a heartbeat interval later.
      if (this.closing.signal.aborted && this.running.size === 0) this.heartbeatWake.abort();
    });
    this.running.set(task.task_id, { control, done: finished });
  }

  /**
   * A cancelled run whose code has not returned {@link CANCEL_GRACE_MS} after the cancel (a step
   * that ignores `ctx.signal`) is handed back: the next lease of its task compensates it, here in
   * a free slot or on another worker. Before, the worker heartbeat it for as long as it lived, and
   * the execution stayed RUNNING with its cancel unanswered (4 min 32 s until a tester's SIGTERM).
   * Its code still holds its slot until it returns ("concurrency" bounds the code running).
   */
  private async handBackIgnoredCancels(): Promise<void> {
    const now = this.clock.now();
    const late: string[] = [];
    for (const [id, { control }] of this.running) if (control.pastCancelGrace(now, this.log)) late.push(id);
    if (late.length > 0) await this.api.release(late).catch(() => undefined);
  }

  /**
   * Code that goes on after its task is gone holds its slot: said once, since every tool shows the
   * worker live with nothing running (a worker of concurrency 1 then took no work). Not while the
   * run waits on the SDK's own report of a step: its refusal ends that wait within milliseconds,
   * and the line said a stuck slot that did not exist (a tester's partition); a run whose code goes
   * on after that refusal (it caught it) is said at the next heartbeat.
   */
  private sayStuck(control: TaskControl): void {
    if (control.runSettled || control.handedBack || control.awaitingStepReport || control.stuckSaid) return;
    control.stuckSaid = true;
    this.log.warn(
      "a run's task is no longer this worker's (its lease ended, or its execution ended) but its code has not returned; it holds one of this worker's slots until it does",
      { task_id: control.task.task_id, execution_id: control.task.execution_id, concurrency: this.concurrency },
    );
  }

  private async heartbeatLoop(): Promise<void> {
    const beats = new LoggedSpell(this.clock, this.log, {
      first: "heartbeat failed",
      still: "heartbeats still fail; leases end if the server does not hear one in time",
      again: "heartbeats again",
      counted: "failed_heartbeats",
    });
    while ((!this.closing.signal.aborted || this.running.size > 0) && !this.abandoned.signal.aborted) {
      const wake = this.heartbeatWake.signal;
      const stop = this.running.size ? [wake, this.abandoned.signal] : [wake, this.closing.signal];
      // After a failure the next try comes sooner: the leases have only what is left of theirs.
      const sleepMs = beats.failing ? Math.min(this.heartbeatMs, HEARTBEAT_RETRY_MS) : this.heartbeatMs;
      await withLinkedSignal(stop, (s) => this.clock.sleep(sleepMs, s));
      if (wake.aborted) this.heartbeatWake = new AbortController();
      if (this.abandoned.signal.aborted) break;
      // The runs this heartbeat is about: its answer is theirs. By the time it comes a task id may
      // run a later attempt here (a retry leased to this worker meanwhile), which an answer of
      // "lost" about the earlier one stopped mid-step (a tester: 45 retries in 35 minutes).
      const sent = new Map([...this.running].map(([id, run]) => [id, run.control]));
      const ids = [...sent.keys()];
      if (!ids.length) {
        // Nothing to keep alive: a spell of failures ends here unsaid, or the next outage's first
        // line was "still fail" with this one's length.
        beats.forget();
        continue;
      }
      // A lease is renewed from when the server received the heartbeat: at least from now.
      const sentAt = this.clock.now();
      try {
        // Given up after two beats (10 s; 2 s at least), not the default 30 s: a lease (30 s) has
        // room for more tries on fresh connections (one silent connection lost it).
        const answer = await this.api.heartbeat(ids, Math.max(2 * this.heartbeatMs, 2000));
        for (const [id, status] of Object.entries(answer.tasks)) {
          const control = this.running.get(id)?.control;
          if (!control || control !== sent.get(id)) continue;
          if (status.lease === "lost") {
            control.loseLease();
            this.sayStuck(control);
            continue;
          }
          control.heard(sentAt);
          if (status.cancel_requested !== null) control.cancel(status.cancel_requested);
        }
        beats.succeeded();
        await this.handBackIgnoredCancels();
      } catch (err) {
        if (this.abandoned.signal.aborted) break; // ended by close(), not a failure
        // The server answered 503 itself (its database away; not a proxy's 503, not a 408): it noted
        // the tasks and keeps their leases through its outage (docs/workflows.md § Leases).
        if (answeredAway(err)) for (const c of sent.values()) c.heard(sentAt);
        beats.failed(err);
      }
    }
  }
}

const CLOSED_FIRST = "the worker closed before it registered its workflows";

function consoleLogger(): WorkflowLogger {
  const line = (level: string, message: string, fields?: Record<string, unknown>) =>
    `${new Date().toISOString()} ${level} ${message}${fields ? ` ${jsonText(fields)}` : ""}`;
  return {
    info: (m, f) => console.log(line("info", m, f)),
    warn: (m, f) => console.warn(line("warn", m, f)),
    error: (m, f) => console.error(line("error", m, f)),
  };
}

/** 1 to 200 characters (code points, as the server's schema counts), no NUL, no lone surrogate. */
function storableId(id: unknown): boolean {
  return typeof id === "string" && id !== "" && !hasUnstorableChar(id) && [...id].length <= 200;
}

/** Resolves when `signal` is aborted (never, if it never is). */
function abortedPromise(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}

export { BLOCKED_WARN_MS, watchBlocking } from "./blocking.js";
