/**
 * Executions: start (idempotent on the id), read, list, and the state transitions
 * (cancel, complete, fail; see transitions.ts). docs/design.md § Executions and tasks.
 */

import { randomUUID } from "node:crypto";
import type { NowClock as Clock } from "../domain/clock.js";
import { OrbitError } from "../domain/errors.js";
import { type Execution, type ExecutionEvent, isActiveStatus } from "../domain/execution.js";
import type { JsonObject, JsonValue } from "../domain/json.js";
import { markSpan } from "../domain/tracing.js";
import type { Workflow } from "../domain/workflow.js";
import type { Store, StoreOps } from "../store/store.js";
import { encodeCursor } from "./cursor.js";
import { executionFilterOf, type ListExecutionsQuery } from "./execution-query.js";
import { checkJsonLimits } from "./json-limits.js";
import { retryExecution } from "./retry.js";
import { startRecords } from "./start-records.js";
import { resolveTimeouts } from "./timeouts.js";
import { cancelExecution, finishExecution } from "./transitions.js";
import { inTransaction } from "./tx.js";
import { WorkerRegistry } from "./workers.js";
import type { Workflows } from "./workflows.js";

/** The body of `POST /v1/executions`, plus what a schedule adds. */
export interface StartExecutionRequest {
  /** Given by the caller (a schedule derives it from the occurrence), else a UUID. */
  execution_id?: string;
  workflow: string;
  /** Absent: the latest version at this moment. */
  version?: string | null;
  /** Default `{}`. Validated against the workflow's schema, defaults applied. */
  input?: unknown;
  schedule_id?: string | null;
  trigger?: JsonObject | null;
  /** A schedule's concurrency key (docs/design.md § Overlap), held while the execution runs. */
  concurrency_key?: string | null;
  /**
   * Timeouts of this start (a schedule's settings, or the start request's): durations such as
   * `30m`, overriding the workflow's defaults (docs/outcomes.md § Timeouts).
   */
  timeouts?: { run_timeout?: string | undefined; start_timeout?: string | undefined } | null;
}

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
  /** Makes ids for starts that give none (and worker task ids). Default `crypto.randomUUID`. */
  newId?: () => string;
  /**
   * Called inside the transaction that ends an execution (COMPLETED, FAILED, CANCELLED), so the
   * scheduler can make a waiting buffer due in the same commit. Default: nothing.
   */
  onEnded?: (tx: StoreOps, execution: Execution, now: number) => Promise<void>;
  /**
   * Called when start queued a worker task, inside its transaction (the worker protocol's in-process
   * wake-up; on PostgreSQL a trigger also NOTIFYs at commit). Default: nothing.
   */
  onTaskQueued?: () => void;
}

/**
 * A start checked by {@link Executions.prepareStart} and not yet written: what
 * {@link Executions.startPrepared} inserts.
 */
export interface PreparedStart {
  readonly executionId: string;
  readonly workflow: Workflow;
  /** The validated input with defaults applied (may be shared by starts with the same input). */
  readonly input: JsonObject;
  readonly scheduleId: string | null;
  readonly trigger: JsonObject | null;
  readonly concurrencyKey: string | null;
  /** The timeouts that apply (docs/outcomes.md), in ms; null: none. */
  readonly startTimeoutMs?: number | null;
  readonly runTimeoutMs?: number | null;
}

/**
 * A batched start found an execution id that exists. Nothing about it is wrong, but the batch wrote
 * the others already: the caller rolls its transaction back and starts them one by one.
 */
export class BatchStartConflict extends Error {
  constructor(readonly executionIds: readonly string[]) {
    super(`batched start: ${executionIds.length} execution id(s) exist already (e.g. ${executionIds[0]})`);
  }
}

/** Longest accepted execution id; a schedule's ids are at most ~130 characters. */
export const MAX_EXECUTION_ID_LENGTH = 255;
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
  /** Workflow settings read inside a transaction, per workflow name (timeouts of a fire batch). */
  private readonly settingsInTx = new WeakMap<StoreOps, Map<string, JsonObject>>();
  /** Inputs validated inside a transaction, per (workflow version, input JSON): see prepareStart. */
  private readonly validatedInTx = new WeakMap<StoreOps, Map<string, JsonObject | null>>();

  constructor(options: ExecutionsOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.workflows = options.workflows;
    this.maxActive = options.maxActiveExecutions;
    this.newId = options.newId ?? randomUUID;
    this.onEnded = options.onEnded;
    this.onTaskQueued = options.onTaskQueued;
    this.workers = new WorkerRegistry(options.store, options.clock);
    if (this.maxActive !== undefined && !(Number.isSafeInteger(this.maxActive) && this.maxActive >= 1)) {
      throw new Error(`maxActiveExecutions must be a positive integer, got ${this.maxActive}`);
    }
  }

  /**
   * Starts an execution: status RUNNING, a `WorkflowCreated` event and a pending worker task, in
   * one transaction (the caller's, when given). An id that exists is a no-op returning the existing
   * execution with `created: false`, even when the limit is reached or the workflow changed since.
   */
  async start(request: StartExecutionRequest, tx?: StoreOps): Promise<StartExecutionResult> {
    const id = request.execution_id ?? this.newId();
    checkExecutionId(id);
    const trigger = request.trigger ?? null;
    if (trigger !== null) checkJsonLimits(trigger, "trigger");
    const result = await inTransaction(this.store, tx, async (t) => {
      const existing = async (): Promise<StartExecutionResult | null> => {
        const found = request.execution_id === undefined ? null : await t.getExecution(id);
        return found ? { execution: found, created: false } : null;
      };
      // An existing id wins over everything below. Without a limit, the INSERT … ON CONFLICT finds
      // it, so the common case (a new id: every scheduled start) saves a read; a failed workflow
      // lookup or validation looks for it before failing. With a limit, look first (admission
      // must not refuse an id that exists).
      if (this.maxActive !== undefined) {
        const found = await existing();
        if (found) return found;
      }
      let workflow: Workflow;
      let input: JsonObject;
      try {
        workflow = await this.workflows.resolve(request.workflow, request.version, t);
        input = this.workflows.validateInput(workflow, request.input ?? {});
      } catch (error) {
        const found = await existing();
        if (found) return found;
        throw error;
      }
      await this.admit(t);
      const now = this.clock.now();
      const { execution, firstEvent, task } = startRecords(
        {
          executionId: id,
          workflow,
          input,
          scheduleId: request.schedule_id ?? null,
          trigger,
          concurrencyKey: request.concurrency_key ?? null,
        },
        now,
      );
      // ON CONFLICT DO NOTHING: a concurrent start of the same id (another server, another
      // occurrence claim) waits for ours and then finds it, instead of failing.
      if (!(await t.insertExecution(execution))) {
        const existing = await t.getExecution(id);
        if (!existing) throw new Error(`execution ${id} neither inserted nor found`);
        return { execution: existing, created: false };
      }
      await t.appendEvent(id, firstEvent.type, firstEvent.data, now);
      await t.insertTask(task(this.newId()));
      const timeouts = await this.timeoutsOf(t, workflow.name, request.timeouts);
      if (timeouts.startTimeoutMs !== null || timeouts.runTimeoutMs !== null) {
        await t.setExecutionDeadlines(
          [id],
          deadline(now, timeouts.startTimeoutMs),
          deadline(now, timeouts.runTimeoutMs),
        );
      }
      this.onTaskQueued?.();
      return { execution, created: true };
    });
    // Again after our own commit: a poller woken above on PostgreSQL may have looked before the task
    // was visible (a caller's transaction wakes after its own commit, as the firing loop does).
    if (tx === undefined && result.created) this.onTaskQueued?.();
    return result;
  }

  /**
   * The checks of {@link start} for a start with a given id, without writing: resolves the workflow
   * and validates the input (once per workflow version and input per transaction: a fire batch
   * starts many executions of the same input). Returns null when start() would do anything but
   * create it plainly: the id or trigger is refused, the workflow is missing, the input is invalid.
   * Use start() for those, which throws the error (or finds an existing execution).
   */
  async prepareStart(
    request: StartExecutionRequest & { execution_id: string },
    tx: StoreOps,
  ): Promise<PreparedStart | null> {
    const id = request.execution_id;
    const trigger = request.trigger ?? null;
    let workflow: Workflow;
    try {
      checkExecutionId(id);
      if (trigger !== null) checkJsonLimits(trigger, "trigger");
      workflow = await this.workflows.resolve(request.workflow, request.version, tx);
    } catch {
      return null;
    }
    let validated = this.validatedInTx.get(tx);
    if (validated === undefined) {
      validated = new Map();
      this.validatedInTx.set(tx, validated);
    }
    const raw = request.input ?? {};
    let input: JsonObject | null | undefined;
    // Only plain JSON objects are cached by their text (anything else fails validation anyway).
    const key =
      raw !== null && typeof raw === "object" && !Array.isArray(raw)
        ? `${workflow.name}@${workflow.version}\u0000${JSON.stringify(raw)}`
        : null;
    if (key !== null) input = validated.get(key);
    if (input === undefined) {
      try {
        input = this.workflows.validateInput(workflow, raw);
      } catch {
        input = null;
      }
      if (key !== null) validated.set(key, input);
    }
    if (input === null) return null;
    const timeouts = await this.timeoutsOf(tx, workflow.name, request.timeouts);
    return {
      executionId: id,
      workflow,
      input,
      scheduleId: request.schedule_id ?? null,
      trigger,
      concurrencyKey: request.concurrency_key ?? null,
      ...(timeouts.startTimeoutMs !== null ? { startTimeoutMs: timeouts.startTimeoutMs } : {}),
      ...(timeouts.runTimeoutMs !== null ? { runTimeoutMs: timeouts.runTimeoutMs } : {}),
    };
  }

  /**
   * Creates prepared starts at once, as start() would one by one: executions (RUNNING), their
   * `WorkflowCreated` events and pending worker tasks, with multi-row statements. Returns false,
   * having written nothing, when admission (`--max-active-executions`) would refuse any of them.
   * Throws {@link BatchStartConflict} when an id existed: the caller must roll back its transaction.
   */
  async startPrepared(starts: readonly PreparedStart[], tx: StoreOps): Promise<boolean> {
    if (starts.length === 0) return true;
    if (this.maxActive !== undefined) {
      // One by one, each start checks active < limit with the previous ones counted: the same as
      // active + n <= limit for all of them.
      await tx.lockExecutionAdmission();
      if ((await tx.countActiveExecutions()) + starts.length > this.maxActive) return false;
    }
    const now = this.clock.now();
    const records = starts.map((p) => startRecords(p, now));
    const executions = records.map((r) => r.execution);
    const inserted = await tx.insertExecutions(executions);
    if (inserted.length !== executions.length) {
      const got = new Set(inserted);
      throw new BatchStartConflict(executions.filter((e) => !got.has(e.executionId)).map((e) => e.executionId));
    }
    await tx.insertFirstEvents(records.map((r) => r.firstEvent));
    await tx.insertTasks(records.map((r) => r.task(this.newId())));
    // Deadlines only for starts with a timeout: plain fires write nothing more.
    const byDeadlines = new Map<string, string[]>();
    for (const p of starts) {
      if (p.startTimeoutMs == null && p.runTimeoutMs == null) continue;
      const key = `${p.startTimeoutMs ?? ""}/${p.runTimeoutMs ?? ""}`;
      byDeadlines.set(key, [...(byDeadlines.get(key) ?? []), p.executionId]);
    }
    for (const [key, ids] of byDeadlines) {
      const [startMs, runMs] = key.split("/").map((v) => (v === "" ? null : Number(v)));
      await tx.setExecutionDeadlines(ids, deadline(now, startMs ?? null), deadline(now, runMs ?? null));
    }
    this.onTaskQueued?.();
    return true;
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
    return this.transition(tx, (t, now) => cancelExecution(t, executionId, reason, now));
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
      const deadlines = await this.timeoutsFor(t, executionId);
      return retryExecution(t, executionId, this.clock.now(), this.newId(), deadlines);
    });
    this.onTaskQueued?.();
    return execution;
  }

  /** The timeouts a retried execution gets: its schedule's, else its workflow's (docs/outcomes.md). */
  async timeoutsFor(
    tx: StoreOps,
    executionId: string,
  ): Promise<{ startTimeoutMs: number | null; runTimeoutMs: number | null }> {
    const e = await tx.getExecution(executionId);
    if (!e) return { startTimeoutMs: null, runTimeoutMs: null };
    const schedule = e.scheduleId === null ? null : await tx.getSchedule(e.scheduleId);
    return resolveTimeouts(schedule?.spec ?? {}, await tx.getWorkflowSettings(e.workflow));
  }

  /** The given timeouts over the workflow's defaults (read once per workflow per transaction). */
  private async timeoutsOf(
    tx: StoreOps,
    workflow: string,
    given: StartExecutionRequest["timeouts"],
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
    if (!execution) throw new OrbitError("NOT_FOUND", `execution ${executionId} does not exist`);
    return execution;
  }

  /** The execution's history, oldest first. */
  async events(executionId: string, tx?: StoreOps): Promise<ExecutionEvent[]> {
    const ops = tx ?? this.store;
    await this.get(executionId, ops);
    return ops.listEvents(executionId);
  }

  /** Newest first, filtered, `limit` per page with an opaque cursor. */
  async list(query: ListExecutionsQuery = {}, tx?: StoreOps): Promise<ExecutionPage> {
    const filter = executionFilterOf(query);
    const limit = filter.limit;
    // One more than asked tells whether another page exists.
    const rows = await (tx ?? this.store).listExecutions({ ...filter, limit: limit + 1 });
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
   * Tells the listeners again that an execution ended, for a transition run inside a caller's
   * transaction (`runTransition(fn, tx)`): its own call came before the caller's commit.
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
      const result = await fn(t, now);
      ended = result.endedMs === now && !isActiveStatus(result.status);
      if (ended && this.onEnded) await this.onEnded(t, result, now);
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
    if (active >= this.maxActive) {
      throw new OrbitError(
        "RESOURCE_EXHAUSTED",
        `${active} ${active === 1 ? "execution is" : "executions are"} running, the most allowed (--max-active-executions) is ${this.maxActive}; retry when some have finished`,
      );
    }
  }
}

function deadline(now: number, timeoutMs: number | null): number | null {
  return timeoutMs === null ? null : now + timeoutMs;
}

/** True when the text holds a C0 control character or DEL (ids end up in logs, URLs and terminals). */
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

function checkExecutionId(id: unknown): void {
  if (typeof id !== "string" || id.length < 1 || id.length > MAX_EXECUTION_ID_LENGTH || hasControlCharacter(id)) {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `execution_id must be 1-${MAX_EXECUTION_ID_LENGTH} characters without control characters`,
    );
  }
}
