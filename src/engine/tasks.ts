/**
 * The server side of the worker protocol (docs/workflows.md): long-poll leasing, heartbeats and
 * every report a worker makes about its task. Leases are rows (orbit_worker_tasks); a lease that
 * is not renewed is put back by the reaper (task-reaper.ts) for attempt + 1.
 */

import type { Clock } from "../domain/clock.js";
import { OrbitError } from "../domain/errors.js";
import { type Execution, isActiveStatus } from "../domain/execution.js";
import { groupBy } from "../domain/group-by.js";
import { newTimeOrderedId } from "../domain/ids.js";
import type { JsonObject, JsonValue } from "../domain/json.js";
import { withLinkedSignal } from "../domain/linked-signal.js";
import type {
  CompleteManyResponseJson,
  HeartbeatResponseJson,
  PollRequestJson,
  StepRequestJson,
  TaskJson,
  WorkflowOfferJson,
} from "../domain/worker-protocol.js";
import { TIMEOUT_CANCEL_PREFIX } from "../domain/worker-protocol.js";
import type { Store, StoreOps } from "../store/store.js";
import type { StepResultRow, TaskLease } from "../store/task-store.js";
import { type CompleteItem, completeBatch } from "./complete-batch.js";
import type { Executions } from "./executions.js";
import { resentCompletion } from "./resent-reports.js";
import { runAgainIfAborted } from "./run-again.js";
import type { TaskHandOff } from "./task-hand-off.js";
import { taskAnswer } from "./task-json.js";
import { leasedAgain, type RedeliverDeps } from "./task-redeliver.js";
import type { LeaseHolder } from "./task-transitions.js";
import * as T from "./task-transitions.js";
import type { TaskWakeups } from "./task-wakeups.js";
import { uncompensated } from "./timeouts.js";
import type { Workflows } from "./workflows.js";

export interface WorkerTasksOptions {
  store: Store;
  clock: Clock;
  executions: Executions;
  workflows: Workflows;
  /** The same instance Executions' `onTaskQueued` wakes. */
  wakeups: TaskWakeups;
  /** The same instance Executions hands new tasks to; undefined: polls only claim. */
  handOff?: TaskHandOff;
  /** How long a lease lasts after each heartbeat. Default 30 000 ms. */
  leaseMs?: number;
  /** How often workers are told to heartbeat. Default 5 000 ms. */
  heartbeatMs?: number;
  /** Longest a poll is held when nothing is available. Default 20 000 ms. */
  pollTimeoutMs?: number;
  /** Makes task ids (continue-as-new). Default: time-ordered UUIDs (src/domain/ids.ts). */
  newId?: () => string;
  /** Where a warning goes (two processes polling under one worker id). Default: nowhere. */
  log?: { warn?(obj: object, msg: string): void };
}

/**
 * One task's answer in a batched complete: done; a cancel requested first (compensate, then report
 * `cancelled`); or why not (CONFLICT: the lease is gone).
 */
export type CompleteAnswer = CompleteManyResponseJson["tasks"][string];

export type { LeaseHolder };

export const DEFAULT_LEASE_MS = 30_000;
export const DEFAULT_HEARTBEAT_MS = 5_000;
export const DEFAULT_POLL_TIMEOUT_MS = 20_000;
const URGENT = { urgent: true } as const;
/** Most tasks one poll may lease. */
export const MAX_TASKS_PER_POLL = 100;

/** How soon a poll looks again for a task whose back-off ended while it looked (not at once: no spin). */
const AGAIN_SOON_MS = 10;

export class WorkerTasks {
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  /** Task ids with reports being handled here, and how many (see whileReporting). */
  private readonly reports = new Map<string, number>();
  readonly pollTimeoutMs: number;
  private readonly newId: () => string;
  private readonly redeliver: RedeliverDeps;

  constructor(private readonly o: WorkerTasksOptions) {
    this.leaseMs = o.leaseMs ?? DEFAULT_LEASE_MS;
    this.heartbeatMs = o.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    this.pollTimeoutMs = o.pollTimeoutMs ?? DEFAULT_POLL_TIMEOUT_MS;
    this.newId = o.newId ?? newTimeOrderedId;
    this.redeliver = {
      ...o,
      leaseMs: this.leaseMs,
      isReporting: (id) => this.isReporting(id),
      taskJson: (t, task, execution) => this.taskJson(t, task, execution),
    };
  }

  /**
   * Leases up to `max_tasks` tasks of the offered workflows; when none is available, waits for a
   * wake-up (a new or requeued task), the end of a back-off, the poll timeout or `signal`.
   */
  async poll(
    request: PollRequestJson,
    signal?: AbortSignal,
    identity: string | null = null,
    /** Called when the poll ends for a cancel's nudge (TaskHandOff.nudge): answered `heartbeat: true`. */
    onNudged?: () => void,
  ): Promise<TaskJson[]> {
    if (!request.workflows.length) throw new OrbitError("INVALID_ARGUMENT", "a poll must offer at least one workflow");
    await this.o.executions.workers.seen(request.worker_id, request.workflows);
    const shared = this.o.executions.workers.polled(request.worker_id, request.max_tasks ?? 1, request.instance);
    if (shared !== null) this.o.log?.warn?.({ worker_id: request.worker_id }, shared);
    const wait = Math.min(request.wait_ms ?? this.pollTimeoutMs, this.pollTimeoutMs);
    if (request.max_tasks === 0) return this.watch(request, wait, signal, identity, onNudged);
    if (request.held !== undefined) {
      const lost = await leasedAgain(this.redeliver, request.held, request, identity, pollLimit(request));
      if (lost.length) return lost;
    }
    const deadline = this.o.clock.now() + wait;
    // The first look queues behind other work; once parked, the poll is handed what a wake-up
    // announces with the firing loop's priority (docs/workflows.md § Leases, wake-ups and the reaper).
    let parked = false;
    for (;;) {
      const armed = this.o.wakeups.arm();
      const tasks = await this.claim(request, parked, identity);
      if (tasks.length || signal?.aborted) {
        armed.disarm();
        return tasks;
      }
      const now = this.o.clock.now();
      const next = await this.o.store.nextAvailableTaskMs(request.workflows);
      if (now >= deadline) {
        armed.disarm();
        return [];
      }
      // A back-off that ended after the claim looked (and before now) is a task to claim: look again
      // shortly. It slept to the poll's timeout, 20 s, holding that retry and the poll's others.
      const soon = next !== null && next <= now ? now + AGAIN_SOON_MS : next;
      const until = soon !== null ? Math.min(soon, deadline) : deadline;
      // Parked, a start's transaction may lease new tasks to this poll itself (task-hand-off.ts).
      const waiting = this.o.handOff?.park({
        workerId: request.worker_id,
        identity,
        instance: request.instance ?? null,
        offers: request.workflows,
        room: pollLimit(request),
        leaseMs: this.leaseMs,
      });
      await withLinkedSignal([signal, waiting?.signal], (stop) => armed.wait(Math.max(1, until - now), stop));
      const handed = (await waiting?.leave()) ?? [];
      if (waiting?.nudged === true) onNudged?.();
      if (handed.length) return handed.map((h) => this.toTaskJson(h.task, h.execution, []));
      if (waiting?.nudged === true) return [];
      parked = true;
    }
  }

  /**
   * A poll that takes no task (`max_tasks: 0`): a worker with no free slot watches for cancels with
   * it, since no other poll of its is parked to be nudged (TaskHandOff.nudge). It ends at a
   * committed cancel (`heartbeat: true`), its timeout or `signal`, and answers no task.
   */
  private async watch(
    request: PollRequestJson,
    wait: number,
    signal: AbortSignal | undefined,
    identity: string | null,
    onNudged: (() => void) | undefined,
  ): Promise<TaskJson[]> {
    const waiting = this.o.handOff?.park({
      workerId: request.worker_id,
      identity,
      instance: request.instance ?? null,
      offers: request.workflows,
      room: 0,
      leaseMs: this.leaseMs,
    });
    await withLinkedSignal([signal, waiting?.signal], (stop) => this.o.clock.sleep(Math.max(1, wait), stop));
    await waiting?.leave();
    if (waiting?.nudged === true) onNudged?.();
    return [];
  }

  /**
   * One transaction: pending tasks of the offered workflows, leased to the worker. A constant number
   * of statements whatever the batch (docs/workflows.md § Leasing): the candidates with their
   * executions, both locked, in one statement; one lease UPDATE per retry policy; the
   * `WorkflowTaskStarted` events; the journaled steps of the runs that have some (most have none, and
   * then it is not read). The lease is still the row's CAS (`state = 'pending'`), so a task is leased once.
   * `handOff`: a parked poll leasing what woke it, ahead of queued worker requests and between the
   * firing loop's batches (SQLite's urgent lane; nothing on PostgreSQL). The leases record
   * `identity` (the caller's, null without identities): only it may report on them.
   */
  async claim(request: PollRequestJson, handOff = false, identity: string | null = null): Promise<TaskJson[]> {
    const limit = pollLimit(request);
    return this.o.store.transaction(
      async (t) => {
        const now = this.o.clock.now();
        // SKIP LOCKED on the executions too: a cancel holding one is let through, never waited for.
        const candidates = await t.listClaimable({
          workflows: request.workflows,
          availableAtOrBeforeMs: now,
          limit,
          skipLocked: true,
        });
        if (!candidates.length) return [];
        const seen = new Set<string>();
        const withSteps = new Set<string>();
        const chosen: { task: TaskLease; execution: Execution; offer: WorkflowOfferJson }[] = [];
        for (const { task, execution, hasSteps } of candidates) {
          if (hasSteps) withSteps.add(execution.executionId);
          if (seen.has(execution.executionId)) continue;
          seen.add(execution.executionId); // one task per execution per claim (its events take one seq each)
          if (!isActiveStatus(execution.status)) {
            await t.updateTask(task.taskId, { state: execution.status === "CANCELLED" ? "cancelled" : "done" });
            continue;
          }
          chosen.push({ task, execution, offer: offerFor(request.workflows, task) });
        }
        const owner = { workerId: request.worker_id, identity, untilMs: now + this.leaseMs };
        const instance = request.instance ?? null;
        const out = await T.writeLeases(
          t,
          chosen.map((c) => ({ task: T.leasedTask(c.task, owner, c.offer), execution: c.execution, instance })),
          now,
        );
        if (!out.length) return [];
        // Only a run with journaled steps (an attempt after a lost lease or a failure) reads them.
        const journaled = out.map((c) => c.execution.executionId).filter((id) => withSteps.has(id));
        const steps = groupBy(journaled.length ? await t.listStepResultsOf(journaled) : [], (s) => s.executionId);
        return out.map((c) =>
          this.toTaskJson(
            c.task,
            c.execution,
            (steps.get(c.execution.executionId) ?? []).filter((s) => s.run === c.task.run),
          ),
        );
      },
      handOff ? URGENT : undefined,
    );
  }

  /** The worker polls no more (Worker.close()). */
  leave(holder: LeaseHolder): Promise<void> {
    this.o.handOff?.forget(holder.workerId);
    return this.o.executions.workers.left(holder.workerId);
  }

  /**
   * Runs `work`, a worker's report on `taskIds` (a complete, a heartbeat, a step …), with those
   * tasks marked as being reported on at this server: the reaper passes over them meanwhile
   * ({@link isReporting}). A report held up by the database (a lock, a stall shorter than its answer
   * bound) then finds its lease when it gets through, as its worker expects: a tester's complete,
   * sent 8 s into a lock held 20 s and judged at when it was sent, lost to the reaper that ran the
   * moment the lock went, and the finished run ran again.
   */
  async whileReporting<T>(taskIds: readonly string[], work: () => Promise<T>): Promise<T> {
    for (const id of taskIds) this.reports.set(id, (this.reports.get(id) ?? 0) + 1);
    try {
      return await work();
    } finally {
      for (const id of taskIds) {
        const left = (this.reports.get(id) ?? 1) - 1;
        if (left > 0) this.reports.set(id, left);
        else this.reports.delete(id);
      }
    }
  }

  /** Whether a worker's report on `taskId` is being handled at this server ({@link whileReporting}). */
  isReporting(taskId: string): boolean {
    return this.reports.has(taskId);
  }

  /** Renews the worker's leases; answers per task whether it still holds it and any cancel request. */
  async heartbeat(holder: LeaseHolder, taskIds: readonly string[]): Promise<HeartbeatResponseJson> {
    // When the worker spoke, read before anything waits on the database: a heartbeat sent on time
    // and held up by a database stall was judged by the time after the stall, answered "lost", and
    // its worker gave up runs it was finishing (docs/workflows.md § Leases).
    const heard = holder.heardMs ?? this.o.clock.now();
    await this.o.executions.workers.seen(holder.workerId);
    const now = this.o.clock.now();
    // A lease already past its end when the heartbeat came is not renewed (answered "lost"), reaped
    // or not; nor is one another identity took. A renewed one lasts a full lease from now.
    // One statement that locks the tasks in id order; a fire's cancel_previous locks an execution and
    // then its task, so PostgreSQL can still pick it to break a deadlock (docs/storage.md § Locking).
    // Renewing is idempotent: run again at once, as a fresh heartbeat would, instead of answering 503
    // and leaving the leases to wait a heartbeat interval (a tester saw 17 such failures in 35 min
    // with 40 cancel_previous schedules, and one lease then ran out under a table lock).
    const renewed = await runAgainIfAborted(() =>
      this.o.store.extendLeases(holder.workerId, holder.identity, taskIds, now + this.leaseMs, Math.min(heard, now)),
    );
    const held = new Set(renewed);
    const reasons = await this.o.store.cancelReasonsOfTasks([...held]);
    const tasks: HeartbeatResponseJson["tasks"] = {};
    for (const id of taskIds) {
      tasks[id] = held.has(id)
        ? { lease: "held", cancel_requested: reasons.get(id) ?? null }
        : { lease: "lost", cancel_requested: null };
    }
    return { tasks };
  }

  /** Journals a completed step (before the worker treats it as done). */
  async step(taskId: string, holder: LeaseHolder, body: StepRequestJson): Promise<{ cancel_requested: string | null }> {
    return this.o.store.transaction(async (t) => {
      const now = this.o.clock.now();
      const held = await T.holdTask(t, taskId, holder, now);
      await T.recordStep(t, held, now, {
        name: body.step,
        seq: body.seq,
        result: body.result,
        compensable: body.compensable,
      });
      return { cancel_requested: held.execution.cancelReason };
    });
  }

  /** COMPLETED; or, when a cancel was requested first, still RUNNING with its cancel reason (T.cancelWins). */
  complete(taskId: string, holder: LeaseHolder, result: JsonValue): Promise<Execution> {
    return this.o.executions.runTransition(async (t, now) => {
      let held: T.Held;
      try {
        held = await T.holdTaskToEnd(t, taskId, holder, now);
      } catch (err) {
        const resent = err instanceof OrbitError && err.code === "CONFLICT";
        const completed = resent ? await resentCompletion(t, taskId, holder, result) : null;
        if (completed !== null) return completed;
        throw err;
      }
      return T.completeAttempt(t, held, now, result);
    });
  }

  /**
   * Many completions in one transaction (docs/workflows.md § Batched completes): one commit (one
   * fsync) and a constant number of statements for the batch (complete-batch.ts). Each task is
   * checked and ended as `complete` does; a task the worker no longer holds is answered with its
   * error and the others still complete.
   */
  async completeMany(holder: LeaseHolder, items: readonly CompleteItem[]): Promise<Record<string, CompleteAnswer>> {
    const executions = this.o.executions;
    const { answers, ended } = await this.o.store.transaction((tx) =>
      completeBatch(tx, holder, items, this.o.clock.now(), (t, list, now) =>
        executions.endedInTransaction(t, list, now),
      ),
    );
    for (const execution of ended) executions.notifyEnded(execution);
    return answers;
  }

  /** A failed attempt: retried by the task's policy, else the execution is FAILED. */
  async fail(taskId: string, holder: LeaseHolder, error: JsonObject, retryable: boolean): Promise<Execution> {
    let retried = false;
    const execution = await this.o.executions.runTransition(async (t, now) => {
      const outcome = await T.failAttempt(t, await T.holdTaskToEnd(t, taskId, holder, now), now, error, retryable);
      retried = outcome.retried;
      return outcome.execution;
    });
    if (retried) this.o.wakeups.wake();
    return execution;
  }

  async continueAsNew(taskId: string, holder: LeaseHolder, input: unknown): Promise<Execution> {
    const execution = await this.o.executions.runTransition(async (t, now) => {
      const held = await T.holdTask(t, taskId, holder, now);
      const workflow = await this.o.workflows.resolve(held.execution.workflow, held.execution.version, t);
      const valid = this.o.workflows.validateInput(workflow, input);
      return T.continueAsNew(t, held, now, valid, this.newId());
    });
    this.o.wakeups.wake();
    return execution;
  }

  /** RUNNING → COMPENSATING; answers the run's journaled steps (the worker compensates them in reverse). */
  startCompensating(taskId: string, holder: LeaseHolder): Promise<TaskJson> {
    return this.o.store.transaction(async (t) => {
      const now = this.o.clock.now();
      const held = await T.holdTask(t, taskId, holder, now);
      const execution = await T.startCompensating(t, held, now);
      return this.taskJson(t, held.task, execution);
    });
  }

  compensated(taskId: string, holder: LeaseHolder, step: string, error: JsonObject | null): Promise<void> {
    return this.o.store.transaction(async (t) => {
      const now = this.o.clock.now();
      return T.recordCompensation(t, await T.holdTask(t, taskId, holder, now), now, step, error);
    });
  }

  cancelled(taskId: string, holder: LeaseHolder, onCancelError: JsonObject | null): Promise<Execution> {
    return this.o.executions.runTransition(async (t, now) =>
      T.finishCancel(t, await T.holdTaskToEnd(t, taskId, holder, now), now, onCancelError),
    );
  }

  /** A worker closing hands its tasks back: pending again at once, same attempt. */
  async release(holder: LeaseHolder, taskIds: readonly string[]): Promise<string[]> {
    const released: string[] = [];
    for (const id of taskIds) {
      try {
        await this.o.store.transaction(async (t) => {
          const now = this.o.clock.now();
          const { task, execution } = await T.holdTask(t, id, holder, now);
          await t.updateTask(task.taskId, {
            state: "pending",
            leaseOwner: null,
            leaseUntilMs: null,
            leaseIdentity: null,
            availableMs: now,
          });
          await t.appendEvent(execution.executionId, "WorkflowTaskReleased", { worker_id: holder.workerId }, now);
        });
        released.push(id);
      } catch (err) {
        if (!(err instanceof OrbitError)) throw err;
      }
    }
    if (released.length) this.o.wakeups.wake();
    return released;
  }

  /** Puts back one expired lease (attempt + 1, back-off), or fails the execution after too many. */
  async reap(taskId: string): Promise<boolean> {
    let requeued = false;
    await this.o.executions.runTransition(async (t, now) => {
      const peek = await t.getTaskLease(taskId);
      if (!peek) throw new OrbitError("NOT_FOUND", `worker task ${taskId} does not exist`);
      // The last lost lease ends the execution FAILED: the schedule rows first (docs/storage.md §
      // Locking). Judged on the unlocked read, so that the other reaps cost no statement; an attempt
      // that moved between the two reads (requeued and leased again meanwhile) takes the old order.
      if (peek.attempt >= T.MAX_LEASE_ATTEMPTS) await t.lockSchedulesForEnd({ executionIds: [peek.executionId] });
      const execution = await T.lockExecution(t, peek.executionId);
      const task = await t.getTaskLease(taskId, { forUpdate: true });
      if (task?.state !== "leased" || task.leaseUntilMs === null || task.leaseUntilMs >= now) return execution;
      if (!isActiveStatus(execution.status)) {
        await t.updateTask(task.taskId, { state: "done" });
        return execution;
      }
      const held = { task, execution };
      if (task.attempt >= T.MAX_LEASE_ATTEMPTS) {
        const message = `the execution lost its worker ${task.attempt} times (lease expired); giving up`;
        // A cancel the server answered ends CANCELLED whatever happens after it (docs/workflows.md §
        // Cancellation and compensation); the error says its compensations were not all reported.
        // A cancelled run whose code could not be reported ended FAILED after its 20 leases (a tester).
        const reason = execution.cancelReason;
        if (reason !== null && !reason.startsWith(TIMEOUT_CANCEL_PREFIX)) {
          const left = await uncompensated(t, execution, "not compensated: its worker lost the lease 20 times");
          const error: JsonObject =
            left === null
              ? { message: `${message} after its cancel`, type: "LeaseExpired" }
              : {
                  message: `${message} after its cancel: ${left.steps} not compensated`,
                  type: "LeaseExpired",
                  failures: left.failures,
                };
          return T.endWith(t, held, now, "CANCELLED", { error });
        }
        return T.endWith(t, held, now, "FAILED", { error: { message, type: "LeaseExpired" } });
      }
      requeued = true;
      return T.requeue(t, held, now, "WorkflowTaskLeaseExpired", { worker_id: task.leaseOwner });
    });
    if (requeued) this.o.wakeups.wake();
    return requeued;
  }

  private async taskJson(t: StoreOps, task: TaskLease, execution: Execution): Promise<TaskJson> {
    return this.toTaskJson(task, execution, await t.listStepResults(execution.executionId, task.run));
  }

  private toTaskJson(task: TaskLease, execution: Execution, steps: readonly StepResultRow[]): TaskJson {
    return taskAnswer(task, execution, steps, this.leaseMs, this.heartbeatMs);
  }
}

/** How many tasks a poll may lease at once. */
function pollLimit(request: PollRequestJson): number {
  return Math.min(Math.max(1, request.max_tasks ?? 1), MAX_TASKS_PER_POLL);
}

function offerFor(offers: readonly WorkflowOfferJson[], task: TaskLease): WorkflowOfferJson {
  const offer = offers.find((o) => o.name === task.workflow && o.version === task.version);
  if (!offer) throw new Error(`task ${task.taskId} matched no offered workflow`);
  return offer;
}
