/**
 * The one way an execution is started: a batch of starts inside the caller's transaction. A single
 * start (`Executions.start`) is a batch of one; a fire batch queues all of its starts and writes them
 * with one statement per table. `add` checks a start as `start` always has (an existing id wins,
 * then the workflow and the input, then admission) and answers with a value, never an exception;
 * `flush` writes what was queued. docs/design.md § Executions and tasks.
 */
import type { NowClock as Clock } from "../domain/clock.js";
import { OrbitError } from "../domain/errors.js";
import type { Execution } from "../domain/execution.js";
import type { JsonObject } from "../domain/json.js";
import { checkJsonLimits } from "../domain/json-limits.js";
import type { Workflow } from "../domain/workflow.js";
import type { StoreOps } from "../store/store.js";
import type { IdentifiedStart, StartRequest } from "./executions.js";
import { type CheckedStart, newExecution, pendingTask } from "./start-records.js";
import type { TaskHandOff } from "./task-hand-off.js";
import { writeLeases } from "./task-transitions.js";
import { givenTimeoutsMs } from "./timeouts.js";
import type { Workflows } from "./workflows.js";

/** A start whose checks passed, queued until {@link StartBatch.flush}. */
export interface PreparedStart extends CheckedStart {
  /** The timeouts that apply (docs/outcomes.md), in ms; null: none. */
  readonly startTimeoutMs: number | null;
  readonly runTimeoutMs: number | null;
  /** The timeouts the request of a start of no schedule gave (kept for its retries, docs/outcomes.md § Retry). */
  readonly given: { startTimeoutMs: number | null; runTimeoutMs: number | null } | null;
}

/** What {@link StartBatch.add} made of a start. */
export type StartAttempt =
  /** Checked and queued: written by the next flush (then {@link StartBatch.result} says how). */
  | { kind: "queued"; executionId: string }
  /** The id exists: nothing is written, the existing execution is the answer. */
  | { kind: "exists"; execution: Execution }
  /** Refused (workflow missing, input invalid, the active limit reached…), with the reason. */
  | { kind: "refused"; error: OrbitError };

/** What a flush did with a queued start. */
export type StartResult = { created: true; execution: Execution } | { created: false; execution: Execution };

/** What the batch needs from `Executions` (its options and per-transaction caches). */
export interface StartContext {
  clock: Clock;
  workflows: Workflows;
  maxActive: number | undefined;
  newId: () => string;
  onTaskQueued: (() => void) | undefined;
  /** Leases new tasks to parked polls in the start's transaction; undefined: no hand-off. */
  handOff: TaskHandOff | undefined;
  timeoutsOf(
    tx: StoreOps,
    workflow: string,
    given: StartRequest["timeouts"],
  ): Promise<{ startTimeoutMs: number | null; runTimeoutMs: number | null }>;
  /** Inputs validated in this transaction, per (workflow version, input JSON). */
  validated: Map<string, JsonObject | OrbitError>;
}

/** Longest accepted execution id; a schedule's ids are at most ~130 characters. */
export const MAX_EXECUTION_ID_LENGTH = 255;

/** A start's workflow, resolved, and the timeouts that apply to it (null until asked for). */
interface Target {
  workflow: Workflow;
  timeouts: { startTimeoutMs: number | null; runTimeoutMs: number | null } | null;
}

export class StartBatch {
  private queued: PreparedStart[] = [];
  private readonly results = new Map<string, StartResult>();
  /**
   * Targets resolved in this batch, by workflow, version and the timeouts given: a fire batch's
   * starts mostly share one, and a hit needs no await (a promise per start on the fire path).
   */
  private readonly targets = new Map<string, Target>();
  /** Executions active in the database when last counted (admission), null: count again. */
  private active: number | null = null;

  constructor(
    private readonly tx: StoreOps,
    private readonly e: StartContext,
  ) {}

  /**
   * Checks one start. `idGiven`: the caller chose the id (so it may exist); a generated one is not
   * looked up. With `--max-active-executions`, an existing id is looked for first (admission must
   * not refuse an id that exists); without, the INSERT … ON CONFLICT of the flush finds it.
   */
  async add(request: IdentifiedStart, idGiven = true): Promise<StartAttempt> {
    const id = request.executionId;
    if (this.e.maxActive !== undefined && idGiven) {
      const found = await this.tx.getExecution(id);
      if (found !== null) return { kind: "exists", execution: found };
    }
    const prepared = this.prepareResolved(request) ?? (await this.prepare(request));
    if (prepared instanceof OrbitError) {
      const found = idGiven ? await this.tx.getExecution(id) : null;
      return found !== null ? { kind: "exists", execution: found } : { kind: "refused", error: prepared };
    }
    if (this.e.maxActive !== undefined) {
      if (this.active === null) {
        await this.tx.lockExecutionAdmission();
        this.active = await this.tx.countActiveExecutions();
      }
      // One by one, each start sees the ones before it as running.
      const running = this.active + this.queued.length;
      if (running >= this.e.maxActive) return { kind: "refused", error: tooManyActive(running, this.e.maxActive) };
    }
    this.queued.push(prepared);
    return { kind: "queued", executionId: id };
  }

  /** Something outside the batch may have ended executions (a cancel): admission counts again. */
  recount(): void {
    this.active = null;
  }

  /**
   * Writes the queued starts: executions (RUNNING), their `WorkflowCreated` events, pending tasks
   * and deadlines, one statement per table. An id that turned out to exist is left as it is and
   * answered as existing.
   */
  async flush(): Promise<void> {
    if (this.queued.length === 0) return;
    const starts = this.queued;
    this.queued = [];
    const now = this.e.clock.now();
    const executions = starts.map((p) => newExecution(p, now));
    const ids = await this.tx.insertExecutions(executions);
    const inserted = new Set(ids);
    const fresh = ids.length === executions.length ? executions : executions.filter((e) => inserted.has(e.executionId));
    for (const e of executions) {
      const id = e.executionId;
      if (inserted.has(id)) continue;
      const existing = await this.tx.getExecution(id);
      if (existing === null) throw new Error(`execution ${id} neither inserted nor found`);
      this.results.set(id, { created: false, execution: existing });
    }
    await this.tx.insertCreatedEvents(fresh);
    // Task ids are asked for only once their executions are inserted.
    const tasks = fresh.map((execution) => ({ task: pendingTask(this.e.newId(), execution, 1, now), execution }));
    await this.tx.insertTasks(tasks.map((t) => t.task));
    const handed = this.e.handOff?.take(this.tx, tasks, now);
    if (handed !== undefined && handed.size > 0) {
      // The claim's lease, in this transaction (one of its own new tasks cannot be leased first).
      const leased = await writeLeases(this.tx, [...handed.values()], now);
      if (leased.length !== handed.size) throw new Error(`leased ${leased.length} of ${handed.size} handed tasks`);
    }
    // Deadlines only for starts with a timeout: plain starts write nothing more.
    const byDeadlines = new Map<string, string[]>();
    for (const p of starts) {
      if (!inserted.has(p.executionId) || (p.startTimeoutMs === null && p.runTimeoutMs === null)) continue;
      const key = `${p.startTimeoutMs ?? ""}/${p.runTimeoutMs ?? ""}`;
      byDeadlines.set(key, [...(byDeadlines.get(key) ?? []), p.executionId]);
    }
    for (const [key, ids] of byDeadlines) {
      const [startMs, runMs] = key.split("/").map((v) => (v === "" ? null : Number(v)));
      await this.tx.setExecutionDeadlines(ids, deadline(now, startMs ?? null), deadline(now, runMs ?? null));
    }
    for (const p of starts) {
      if (p.given === null || !inserted.has(p.executionId)) continue;
      await this.tx.setGivenTimeouts([p.executionId], p.given.startTimeoutMs, p.given.runTimeoutMs);
    }
    for (const e of fresh) this.results.set(e.executionId, { created: true, execution: e });
    if (this.active !== null) this.active += fresh.length;
    if (fresh.length > (handed?.size ?? 0)) this.e.onTaskQueued?.();
  }

  /** How a flushed start ended; undefined before its flush. */
  result(executionId: string): StartResult | undefined {
    return this.results.get(executionId);
  }

  /**
   * The checks of a start whose workflow and timeouts this batch has resolved already (most
   * starts of a fire batch): no await. Undefined when they are not resolved yet ({@link prepare}).
   */
  private prepareResolved(request: IdentifiedStart): PreparedStart | OrbitError | undefined {
    const target = this.targets.get(targetKey(request));
    if (target === undefined || target.timeouts === null) return undefined;
    try {
      checkRequest(request);
      const input = this.validate(target.workflow, request.input ?? {});
      return input instanceof OrbitError ? input : preparedStart(request, target.workflow, input, target.timeouts);
    } catch (err) {
      if (err instanceof OrbitError) return err;
      throw err;
    }
  }

  /** The checks of a start, without writing; the refusal as a value. Other failures throw. */
  private async prepare(request: IdentifiedStart): Promise<PreparedStart | OrbitError> {
    try {
      checkRequest(request);
      const key = targetKey(request);
      const target = this.targets.get(key) ?? (await this.target(key, request));
      const input = this.validate(target.workflow, request.input ?? {});
      if (input instanceof OrbitError) return input;
      if (target.timeouts === null) {
        target.timeouts = await this.e.timeoutsOf(this.tx, target.workflow.name, request.timeouts);
      }
      return preparedStart(request, target.workflow, input, target.timeouts);
    } catch (err) {
      if (err instanceof OrbitError) return err;
      throw err;
    }
  }

  /** Resolves the workflow of a start and keeps it under `key`. */
  private async target(key: string, request: StartRequest): Promise<Target> {
    const target: Target = {
      workflow: await this.e.workflows.resolve(request.workflow, request.version, this.tx),
      timeouts: null,
    };
    this.targets.set(key, target);
    return target;
  }

  /** Validates once per workflow version and input per transaction: a fire batch repeats inputs. */
  private validate(workflow: Workflow, raw: unknown): JsonObject | OrbitError {
    // Only plain JSON objects are cached by their text (anything else fails validation anyway).
    const key =
      raw !== null && typeof raw === "object" && !Array.isArray(raw)
        ? `${workflow.name}@${workflow.version}\u0000${JSON.stringify(raw)}`
        : null;
    const cached = key === null ? undefined : this.e.validated.get(key);
    if (cached !== undefined) return cached;
    let result: JsonObject | OrbitError;
    try {
      result = this.e.workflows.validateInput(workflow, raw);
    } catch (err) {
      if (!(err instanceof OrbitError)) throw err;
      result = err;
    }
    if (key !== null) this.e.validated.set(key, result);
    return result;
  }
}

/** What a start's workflow and timeouts are resolved by (within a batch). */
function targetKey(request: StartRequest): string {
  const given = request.timeouts;
  return `${request.workflow}\u0000${request.version ?? ""}\u0000${given?.startTimeout ?? ""}\u0000${given?.runTimeout ?? ""}`;
}

/** The checks of a start's own fields, before its workflow is looked at. */
function checkRequest(request: IdentifiedStart): void {
  checkExecutionId(request.executionId);
  if (request.trigger != null) checkJsonLimits(request.trigger, "trigger");
}

function preparedStart(
  request: IdentifiedStart,
  workflow: Workflow,
  input: JsonObject,
  timeouts: { startTimeoutMs: number | null; runTimeoutMs: number | null },
): PreparedStart {
  return {
    executionId: request.executionId,
    workflow,
    input,
    scheduleId: request.scheduleId ?? null,
    trigger: request.trigger ?? null,
    concurrencyKey: request.concurrencyKey ?? null,
    startTimeoutMs: timeouts.startTimeoutMs,
    runTimeoutMs: timeouts.runTimeoutMs,
    given: givenOf(request),
  };
}

/** What a start of no schedule was given of its timeouts; null when nothing (a schedule's are read at its retry). */
function givenOf(request: IdentifiedStart): PreparedStart["given"] {
  if (request.scheduleId != null || request.timeouts == null) return null;
  const given = givenTimeoutsMs(request.timeouts);
  return given.startTimeoutMs === null && given.runTimeoutMs === null ? null : given;
}

/** The refusal of a start beyond `--max-active-executions`. */
export function tooManyActive(active: number, max: number): OrbitError {
  return new OrbitError(
    "RESOURCE_EXHAUSTED",
    `${active} ${active === 1 ? "execution is" : "executions are"} running, the most allowed (--max-active-executions) is ${max}; retry when some have finished`,
  );
}

export function deadline(now: number, timeoutMs: number | null): number | null {
  return timeoutMs === null ? null : now + timeoutMs;
}

/**
 * True when the text holds a control character: C0, DEL or C1 (U+0080-U+009F, which terminals act
 * on too: U+009B is an escape sequence's start). Ids end up in logs, URLs and terminals.
 */
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

export function checkExecutionId(id: unknown): void {
  if (typeof id !== "string" || id.length < 1 || id.length > MAX_EXECUTION_ID_LENGTH || hasControlCharacter(id)) {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `execution_id must be 1-${MAX_EXECUTION_ID_LENGTH} characters without control characters`,
    );
  }
}
