/**
 * Executions: start (idempotent on the id), read, list, and the state transitions
 * (cancel, complete, fail; see transitions.ts). docs/design.md § Executions and tasks.
 */

import type { NowClock as Clock } from "../domain/clock.js";
import { OrbitError } from "../domain/errors.js";
import { type Execution, type ExecutionEvent, isActiveStatus } from "../domain/execution.js";
import { newTimeOrderedId } from "../domain/ids.js";
import type { JsonObject, JsonValue } from "../domain/json.js";
import { checkJsonLimits } from "../domain/json-limits.js";
import { markSpan } from "../domain/tracing.js";
import type { ExecutionPatch, Store, StoreOps } from "../store/store.js";
import { encodeCursor } from "./cursor.js";
import { executionFilterOf, type ListExecutionsQuery } from "./execution-query.js";
import { retryExecution, takeOverlapSlot } from "./retry.js";
import { checkExecutionId, StartBatch, tooManyActive } from "./start-batch.js";
import type { TaskHandOff } from "./task-hand-off.js";
import { resolveTimeouts, type StartTimeouts } from "./timeouts.js";
import { cancelExecution, finishExecution } from "./transitions.js";
import { inTransaction } from "./tx.js";
import { WorkerRegistry } from "./workers.js";
import { checkWorkflowRef, type Workflows } from "./workflows.js";

/**
 * A start of an execution, as the engine takes it: `POST /v1/executions` maps its body to it
 * (src/api/executions-routes.ts), a schedule builds it for its occurrences
 * (src/scheduler/start-request.ts).
 */
export interface StartRequest {
  /** Given by the caller (a schedule derives it from the occurrence), else a UUID. */
  executionId?: string;
  workflow: string;
  /** Absent: the latest version at this moment. */
  version?: string | null;
  /** Default `{}`. Validated against the workflow's schema, defaults applied. */
  input?: unknown;
  scheduleId?: string | null;
  trigger?: JsonObject | null;
  /** A schedule's concurrency key (docs/design.md § Overlap), held while the execution runs. */
  concurrencyKey?: string | null;
  /** Timeouts of this start (a schedule's settings, or the start request's); default the workflow's. */
  timeouts?: StartTimeouts | null;
}

/** A start whose id is chosen: what a batch checks and writes (start-batch.ts). */
export type IdentifiedStart = StartRequest & { executionId: string };

export interface StartExecutionResult {
  execution: Execution;
  /** False when the id existed: nothing was changed and the existing execution is returned. */
  created: boolean;
}

export interface ExecutionPage {
  executions: Execution[];
  /** Present when more executions may follow. */
  nextCursor: string | null;
}

export interface ExecutionsOptions {
  store: Store;
  clock: Clock;
  workflows: Workflows;
  /**
   * Most executions RUNNING or COMPENSATING at once (`--max-active-executions`); a start beyond it
   * fails with RESOURCE_EXHAUSTED. Default: no limit.
   */
  maxActiveExecutions?: number;
  /** Makes ids for starts that give none (and worker task ids). Default: time-ordered UUIDs (src/domain/ids.ts). */
  newId?: () => string;
  /**
   * Called inside the transaction that ends executions (COMPLETED, FAILED, CANCELLED): one, or the
   * batch of a batched complete, so the scheduler can make a waiting buffer due in the same commit.
   * Default: nothing.
   */
  onEnded?: (tx: StoreOps, executions: readonly Execution[], now: number) => Promise<void>;
  /**
   * Called when start queued a worker task, inside its transaction (the worker protocol's in-process
   * wake-up; on PostgreSQL a trigger also NOTIFYs at commit). Default: nothing.
   */
  onTaskQueued?: () => void;
  /** A cancel left to the worker holding the run was requested (committed): nudge parked polls. */
  onCancelRequested?: () => void;
  /**
   * Parked polls that a start's transaction leases its new tasks to (task-hand-off.ts): the
   * instance the worker protocol parks its polls in. Default none: every task waits to be claimed.
   */
  handOff?: TaskHandOff;
}

export { MAX_EXECUTION_ID_LENGTH } from "./start-batch.js";

const MAX_REASON_LENGTH = 1000;

export class Executions {
  /** Workers seen polling, and why an execution waits for one (docs/outcomes.md). */
  readonly workers: WorkerRegistry;
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly workflows: Workflows;
  private readonly maxActive: number | undefined;
  private readonly newId: () => string;
  private readonly onEnded: ExecutionsOptions["onEnded"];
  /** Listeners of {@link subscribeEnded}. */
  private readonly endedListeners = new Set<(execution: Execution) => void>();
  private readonly onTaskQueued: ExecutionsOptions["onTaskQueued"];
  private readonly onCancelRequested: ExecutionsOptions["onCancelRequested"];
  private readonly handOff: TaskHandOff | undefined;
  /** Workflow settings read inside a transaction, per workflow name (timeouts of a fire batch). */
  private readonly settingsInTx = new WeakMap<StoreOps, Map<string, JsonObject>>();
  /** Inputs validated inside a transaction, per (workflow version, input JSON): see StartBatch. */
  private readonly validatedInTx = new WeakMap<StoreOps, Map<string, JsonObject | OrbitError>>();

  constructor(options: ExecutionsOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.workflows = options.workflows;
    this.maxActive = options.maxActiveExecutions;
    this.newId = options.newId ?? newTimeOrderedId;
    this.onEnded = options.onEnded;
    this.onTaskQueued = options.onTaskQueued;
    this.onCancelRequested = options.onCancelRequested;
    this.handOff = options.handOff;
    this.workers = new WorkerRegistry(options.store, options.clock);
    if (this.maxActive !== undefined && !(Number.isSafeInteger(this.maxActive) && this.maxActive >= 1)) {
      throw new Error(`maxActiveExecutions must be a positive integer, got ${this.maxActive}`);
    }
  }

  /**
   * Starts an execution: status RUNNING, a `WorkflowCreated` event and a pending worker task, in
   * one transaction (the caller's, when given). An id that exists is a no-op returning the existing
   * execution with `created: false`, even when the limit is reached or the workflow changed since.
   * A batch of one (start-batch.ts): the fire starts its executions the same way, many at once.
   */
  async start(request: StartRequest, tx?: StoreOps): Promise<StartExecutionResult> {
    const id = request.executionId ?? this.newId();
    checkExecutionId(id);
    checkWorkflowRef(request.workflow, request.version);
    const trigger = request.trigger ?? null;
    if (trigger !== null) checkJsonLimits(trigger, "trigger");
    const result = await inTransaction(this.store, tx, async (t) => {
      const batch = this.startBatch(t);
      const attempt = await batch.add({ ...request, executionId: id }, request.executionId !== undefined);
      if (attempt.kind === "refused") throw attempt.error;
      if (attempt.kind === "exists") return { execution: attempt.execution, created: false };
      await batch.flush();
      const written = batch.result(id);
      if (written === undefined) throw new Error(`execution ${id} was queued but not written`);
      return written;
    });
    // Again after our own commit: a poller woken above on PostgreSQL may have looked before the task
    // was visible (a caller's transaction wakes after its own commit, as the firing loop does).
    if (tx === undefined && result.created) this.onTaskQueued?.();
    return result;
  }

  /**
   * A batch of starts inside `tx` (see {@link StartBatch}): each start is checked as {@link start}
   * checks it, and the queued ones are written together by `flush()`.
   */
  startBatch(tx: StoreOps): StartBatch {
    let validated = this.validatedInTx.get(tx);
    if (validated === undefined) {
      validated = new Map();
      this.validatedInTx.set(tx, validated);
    }
    return new StartBatch(tx, {
      clock: this.clock,
      workflows: this.workflows,
      maxActive: this.maxActive,
      newId: this.newId,
      onTaskQueued: this.onTaskQueued,
      handOff: this.handOff,
      timeoutsOf: (t, workflow, given) => this.timeoutsOf(t, workflow, given),
      validated,
    });
  }

  /**
   * Requests cancellation. A finished execution is returned unchanged (no-op), as is one whose
   * cancel was already requested. Otherwise the reason is recorded (`CancelRequested`); when no
   * worker holds the task yet, the execution ends CANCELLED at once (`WorkflowCancelled`), else it
   * stays RUNNING until its worker runs the compensations.
   */
  async cancel(executionId: string, request: { reason?: string | null } = {}, tx?: StoreOps): Promise<Execution> {
    const reason = request.reason ?? "cancelled";
    if (typeof reason !== "string" || reason.length > MAX_REASON_LENGTH) {
      throw new OrbitError("INVALID_ARGUMENT", `reason must be text of at most ${MAX_REASON_LENGTH} characters`);
    }
    const execution = await this.transition(tx, async (t, now) => {
      const e = await cancelExecution(t, executionId, reason, now);
      // The other servers' parked polls hear it too (PostgreSQL NOTIFY, at commit).
      if (leftToWorker(e)) await t.notifyCancelRequested();
      return e;
    });
    // Left to a worker to compensate, its task available at once (a retry's back-off is cut short):
    // polls look again. On SQLite nothing else woke them (PostgreSQL's trigger did), so the cancel of
    // a run waiting out a back-off waited for a poll's timeout, up to 20 s.
    if (tx === undefined && isActiveStatus(execution.status) && execution.cancelReason !== null) this.onTaskQueued?.();
    // The worker holding the run hears of it at its next heartbeat: asked to send it now, once
    // the cancel is committed (a fire's cancel_previous, a trigger's: inside their transaction).
    if (leftToWorker(execution) && this.onCancelRequested !== undefined) {
      const nudge = this.onCancelRequested;
      if (tx === undefined) nudge();
      else tx.onEnd({ committed: nudge, rolledBack: () => undefined });
    }
    return execution;
  }

  /** RUNNING → COMPLETED with the result (`WorkflowCompleted`). CONFLICT from any other status. */
  complete(executionId: string, result: JsonValue, tx?: StoreOps): Promise<Execution> {
    checkJsonLimits(result, "result");
    return this.transition(tx, (t, now) => finishExecution(t, executionId, { status: "COMPLETED", result }, now));
  }

  /** RUNNING or COMPENSATING → FAILED with the error (`WorkflowFailed`). CONFLICT when already finished. */
  fail(executionId: string, error: JsonValue, tx?: StoreOps): Promise<Execution> {
    checkJsonLimits(error, "error");
    return this.transition(tx, (t, now) => finishExecution(t, executionId, { status: "FAILED", error }, now));
  }

  /**
   * Re-runs a FAILED or CANCELLED execution as run + 1 of the same id (retry.ts), under the same
   * admission limit as a start. CONFLICT for any other status.
   */
  async retry(executionId: string): Promise<Execution> {
    const execution = await this.store.transaction(async (t) => {
      await this.admit(t);
      // The schedule's row first, then the execution's (docs/storage.md § Locking).
      await t.lockSchedulesForEnd({ executionIds: [executionId] });
      const deadlines = await this.timeoutsFor(t, executionId);
      const retried = await retryExecution(t, executionId, this.clock.now(), this.newId(), deadlines);
      await takeOverlapSlot(t, retried);
      return retried;
    });
    this.onTaskQueued?.();
    return execution;
  }

  /**
   * The timeouts a retried execution gets: those its start request gave, else its schedule's as
   * they are now, else its workflow's (docs/outcomes.md § Retry).
   */
  async timeoutsFor(
    tx: StoreOps,
    executionId: string,
  ): Promise<{ startTimeoutMs: number | null; runTimeoutMs: number | null }> {
    const e = await tx.getExecution(executionId);
    if (!e) return { startTimeoutMs: null, runTimeoutMs: null };
    const spec = e.scheduleId === null ? undefined : (await tx.getSchedule(e.scheduleId))?.spec;
    const kept = e.scheduleId === null ? await tx.getGivenTimeouts(executionId) : null;
    // The stored settings were validated when written; a duration is text.
    const text = (v: unknown) => (typeof v === "string" ? v : undefined);
    const given = { runTimeout: text(spec?.run_timeout), startTimeout: text(spec?.start_timeout) };
    const resolved = resolveTimeouts(given, await tx.getWorkflowSettings(e.workflow));
    return {
      startTimeoutMs: kept?.startTimeoutMs ?? resolved.startTimeoutMs,
      runTimeoutMs: kept?.runTimeoutMs ?? resolved.runTimeoutMs,
    };
  }

  /** The given timeouts over the workflow's defaults (read once per workflow per transaction). */
  private async timeoutsOf(
    tx: StoreOps,
    workflow: string,
    given: StartRequest["timeouts"],
  ): Promise<{ startTimeoutMs: number | null; runTimeoutMs: number | null }> {
    let cache = this.settingsInTx.get(tx);
    if (cache === undefined) {
      cache = new Map();
      this.settingsInTx.set(tx, cache);
    }
    let settings = cache.get(workflow);
    if (settings === undefined) {
      settings = await tx.getWorkflowSettings(workflow);
      cache.set(workflow, settings);
    }
    return resolveTimeouts(given ?? {}, settings);
  }

  async get(executionId: string, tx?: StoreOps): Promise<Execution> {
    const execution = await (tx ?? this.store).getExecution(executionId);
    if (!execution) throw this.notFound(executionId);
    return execution;
  }

  /** The answer for an id with no execution (also given for one the caller may not see, docs/security.md). */
  notFound(executionId: string): OrbitError {
    return new OrbitError("NOT_FOUND", `execution ${executionId} does not exist`);
  }

  /** The execution's history, oldest first. */
  async events(executionId: string, tx?: StoreOps): Promise<ExecutionEvent[]> {
    const ops = tx ?? this.store;
    await this.get(executionId, ops);
    return ops.listEvents(executionId);
  }

  /**
   * Newest first, filtered, `limit` per page with an opaque cursor. With `visible` (access control),
   * only executions of the workflows it allows, filtered by the database: filtered after the read,
   * a page came back short or empty with a cursor made of the last row the caller may not see,
   * which named the hidden executions one by one (docs/security.md).
   */
  async list(
    query: ListExecutionsQuery = {},
    tx?: StoreOps,
    visible?: (workflow: string) => boolean,
  ): Promise<ExecutionPage> {
    const ops = tx ?? this.store;
    const filter = executionFilterOf(query);
    const limit = filter.limit;
    if (visible !== undefined) {
      if (filter.workflow !== undefined && !visible(filter.workflow)) return { executions: [], nextCursor: null };
      if (filter.workflow === undefined) {
        // An execution's workflow is registered (a start refuses any other), so these are every
        // workflow the caller may read executions of.
        const names = [...new Set((await ops.listWorkflows()).map((w) => w.name))].filter(visible);
        if (names.length === 0) return { executions: [], nextCursor: null };
        filter.workflows = names;
      }
    }
    // One more than asked tells whether another page exists.
    const rows = await ops.listExecutions({ ...filter, limit: limit + 1 });
    const executions = rows.slice(0, limit);
    const last = executions[executions.length - 1];
    const nextCursor =
      rows.length > limit && last ? encodeCursor({ createdMs: last.createdMs, executionId: last.executionId }) : null;
    return { executions, nextCursor };
  }

  /**
   * Runs a worker-protocol transition (src/engine/tasks.ts) like the built-in ones: in one
   * transaction (the caller's, when given), with the ended hooks when it ended the execution.
   */
  runTransition(fn: (t: StoreOps, now: number) => Promise<Execution>, tx?: StoreOps): Promise<Execution> {
    return this.transition(tx, fn);
  }

  /**
   * Calls `listener` after each transaction that ended an execution has committed (the server wakes
   * the firing loop with it). A subscription rather than a constructor option, because the scheduler
   * that listens is built after, and from, this object. Returns the unsubscribe function.
   */
  subscribeEnded(listener: (execution: Execution) => void): () => void {
    this.endedListeners.add(listener);
    return () => this.endedListeners.delete(listener);
  }

  /**
   * The ended-hook for executions a caller ended together inside its transaction `tx` (a batched
   * complete, src/engine/complete-batch.ts); the caller calls {@link notifyEnded} after its commit.
   */
  async endedInTransaction(tx: StoreOps, executions: readonly Execution[], now: number): Promise<void> {
    if (executions.length && this.onEnded) await this.onEnded(tx, executions, now);
  }

  /**
   * Tells the listeners that an execution ended, for a transition run inside a caller's
   * transaction (`runTransition(fn, tx)`, {@link endedInTransaction}), after the caller's commit.
   */
  notifyEnded(execution: Execution): void {
    if (!isActiveStatus(execution.status)) this.ended(execution);
  }

  /** After the commit that ended an execution: its trace's last span, then the listeners. */
  private ended(execution: Execution): void {
    markSpan("orbit.execution.end", execution.traceParent, {
      "orbit.execution_id": execution.executionId,
      "orbit.status": execution.status,
      "orbit.run": execution.run,
    });
    for (const listener of this.endedListeners) listener(execution);
  }

  /** Runs a state transition; when it ended the execution, tells the scheduler (in and after the transaction). */
  private async transition(
    tx: StoreOps | undefined,
    fn: (t: StoreOps, now: number) => Promise<Execution>,
  ): Promise<Execution> {
    let ended = false;
    const execution = await inTransaction(this.store, tx, async (t) => {
      const now = this.clock.now();
      // Ended here only if this transaction wrote the ending: told by its end time equal to now,
      // two servers' timeout sweepers on one deadline (shared mode) both recorded the outcome of
      // an execution one of them had ended, and sent its webhook twice (a tester).
      const wrote = endingsWritten(t);
      const result = await fn(wrote.ops, now);
      ended = wrote.ids.has(result.executionId) && !isActiveStatus(result.status);
      if (ended && this.onEnded) await this.onEnded(t, [result], now);
      return result;
    });
    if (ended) this.ended(execution);
    return execution;
  }

  /** Refuses a new execution beyond the limit; the admission lock makes check-and-insert atomic. */
  private async admit(tx: StoreOps): Promise<void> {
    if (this.maxActive === undefined) return;
    await tx.lockExecutionAdmission();
    const active = await tx.countActiveExecutions();
    if (active >= this.maxActive) throw tooManyActive(active, this.maxActive);
  }
}

/**
 * `t`, noting the executions whose update writes an ended status (what {@link Executions} tells
 * the scheduler of as ended by this transaction).
 */
function endingsWritten(t: StoreOps): { ops: StoreOps; ids: Set<string> } {
  const ids = new Set<string>();
  const ops = new Proxy(t, {
    get(target, prop, receiver) {
      if (prop !== "updateExecution") return Reflect.get(target, prop, receiver);
      return async (id: string, patch: ExecutionPatch): Promise<boolean> => {
        const written = await target.updateExecution(id, patch);
        if (written && patch.status !== undefined && !isActiveStatus(patch.status)) ids.add(id);
        return written;
      };
    },
  });
  return { ops, ids };
}

/** A cancel left to the worker holding the run (it stays active with its reason until compensated). */
export const leftToWorker = (e: Execution): boolean => isActiveStatus(e.status) && e.cancelReason !== null;
