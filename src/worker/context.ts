/**
 * The `ctx` of one task: its identity, the cancel signal, and `step`, which runs a step (journaled
 * in the server before it counts as done) and replays journaled results: at least once, since a
 * step whose result was not journaled runs again.
 */

import { hasUnstorableChar } from "../domain/body-guard.js";
import { isInstance, safely } from "../domain/error-text.js";
import { OrbitError } from "../domain/errors.js";
import type { Jsonified, JsonObject, JsonValue } from "../domain/json.js";
import { inSpan } from "../domain/tracing.js";
import type { TaskJson } from "../domain/worker-protocol.js";
import { MAX_STEP_NAME } from "../domain/worker-protocol.js";
import {
  CancelledError,
  ContinueAsNewSignal,
  HandBackSignal,
  LeaseLostError,
  NonRetryableError,
  RunEndedError,
  thrownText,
} from "./errors.js";
import { ReplayOrder } from "./replay-order.js";
import { storable } from "./storable.js";
import type { StepOptions, TriggerInfo, WorkflowContext, WorkflowLogger } from "./workflow.js";

export interface TaskHooks {
  /** Journals a completed step; answers a cancel request if there is one. */
  journal(step: { step: string; seq: number; result: JsonValue; compensable: boolean }): Promise<void>;
  /** The cancel reason once cancelled (the signal is aborted then). */
  cancelReason(): string | null;
  /** True while the worker closes: no new step starts, the task is handed back. */
  draining(): boolean;
}

export type Compensation = (result: never) => Promise<void> | void;

export class TaskContext implements WorkflowContext {
  readonly executionId: string;
  readonly workflow: string;
  readonly version: string;
  readonly attempt: number;
  readonly run: number;
  readonly trigger: TriggerInfo | null;
  /** Compensations by step name, registered as steps complete or replay. */
  readonly compensations = new Map<string, Compensation>();
  /** The step whose function threw last (reported with the error). */
  /** onCancel runs (compensate in run-task.ts): a step called now is said as called there. */
  cancelling = false;
  /** What each failed step threw (or the SDK threw for it), to its step: see stepOf(). */
  private readonly stepFailures = new Map<unknown, string>();
  /**
   * The step refused because the worker is closing (HandBackSignal): the task is handed back
   * whatever the run does after it, since code that catches the refusal and returns (or wraps it
   * and throws) ends with an outcome the run would not have had.
   */
  handBackAt: string | null = null;
  private readonly journaled: Map<string, JsonValue | null>;
  /** The journaled steps still to compensate whose compensation the replay has not registered yet. */
  private readonly unregistered: Set<string>;
  private compensationsKnown: () => void = () => undefined;
  /**
   * Resolves once the replay has registered the compensation of every journaled step still to
   * compensate (at once when there is none): all a lease after a cancel needs from the code.
   */
  readonly journalReplayed: Promise<void>;
  private readonly used = new Set<string>();
  /** Whether the code reaches the journaled steps as journaled (said when it does not). */
  readonly replayOrder: ReplayOrder;
  private nextSeq: number;
  private ended = false;
  /** Steps that failed while the run went on: said at its end unless their error is its own. */
  private failedWhileRunning: { step: string; error: unknown }[] = [];

  constructor(
    task: TaskJson,
    private readonly control: { readonly signal: AbortSignal },
    readonly log: WorkflowLogger,
    /** Steps run in spans (an OpenTelemetry SDK is installed; run-task.ts). */
    private readonly traced: boolean,
    private readonly hooks: TaskHooks,
  ) {
    this.executionId = task.execution_id;
    this.workflow = task.workflow;
    this.version = task.version;
    this.attempt = task.attempt;
    this.run = task.run;
    this.trigger = task.trigger as TriggerInfo | null;
    this.journaled = new Map(task.steps.map((s) => [s.name, s.result]));
    this.replayOrder = new ReplayOrder(task, log);
    this.nextSeq = task.steps.reduce((max, s) => Math.max(max, s.seq), 0) + 1;
    this.unregistered = new Set(task.steps.filter((s) => s.compensable && !s.compensated).map((s) => s.name));
    this.journalReplayed =
      this.unregistered.size === 0 ? Promise.resolve() : new Promise((resolve) => (this.compensationsKnown = resolve));
  }

  /** Aborted on a cancel or a lost lease; made on first use (run-task.ts TaskControl). */
  get signal(): AbortSignal {
    return this.control.signal;
  }

  /**
   * When a step came that belongs to no run: inside `onCancel`; in the run's own code after its
   * execution was cancelled (a replay compensates without waiting for the code, which may wake and
   * call a step later: it was said to be in onCancel, for workflows that have none; a tester); or
   * after the run returned.
   */
  private endedWhen(): { when: string; hint: string } {
    if (this.cancelling) return { when: "in onCancel", hint: " (do onCancel's work in it directly)" };
    if (this.hooks.cancelReason() !== null) return { when: "after its execution was cancelled", hint: "" };
    return { when: "after the run returned", hint: "" };
  }

  /**
   * Called once the run has returned or thrown (`runError`: what it threw): a step still going was
   * not awaited by it, and a step that failed before, with another error than the run's, was not
   * awaited or was caught: said, since nothing else will show it (before, only a failure after the
   * run's end was, and one before it vanished without a line or an event).
   */
  runEnded(runError?: unknown): void {
    this.ended = true;
    for (const { step, error } of this.failedWhileRunning) {
      // Control flow, not failures: the lease went, the worker is closing (handed back), or the
      // step asked for continue-as-new: a warning of each misled on every deploy.
      if (error === runError || isInstance(error, LeaseLostError)) continue;
      // A step's refusal after the cancel, when the run ended for that cancel (a replay that
      // compensated without waiting for the code): the same cancel, not a lost error.
      if (isInstance(error, CancelledError) && isInstance(runError, CancelledError)) continue;
      if (isInstance(error, HandBackSignal) || isInstance(error, ContinueAsNewSignal)) continue;
      this.log.warn("a step failed and the run went on without its error (it was not awaited, or caught)", {
        step,
        error: thrownText(error),
      });
    }
    this.failedWhileRunning = [];
  }

  /**
   * The step a run's error came from: the step whose function threw it, or whose error is among
   * its causes (an error wrapped with its cause); null for an error of the run's own, even after a
   * step failed earlier and was caught (it named that step: `step: "optional-lookup"` on a
   * validation error thrown after it; a tester).
   */
  stepOf(error: unknown): string | null {
    let e = error;
    for (let depth = 0; depth <= 3; depth++) {
      // Any value, undefined and null too: a step may throw anything.
      const step = this.stepFailures.get(e);
      if (step !== undefined) return step;
      if (!isInstance(e, Error)) break;
      e = safely(() => (e as Error).cause);
    }
    return null;
  }

  /**
   * The newest step to throw a value names it: one error object (or one string) thrown by a step,
   * caught, and thrown again by a later step is the later step's. A primitive the run throws
   * itself cannot be told from one a step threw before (they are the same value).
   */
  private failedAt<E>(step: string, error: E): E {
    this.stepFailures.set(error, step);
    return error;
  }

  /**
   * Runs a step (once its result is journaled, never again in this run). A step the run does not
   * await cannot crash the worker: its failure is marked handled here (the run that awaits it
   * still gets it), and logged when the run had already returned, or at the run's end when the run
   * did not throw it (runEnded).
   */
  step<T extends JsonValue>(
    name: string,
    fn: (signal: AbortSignal) => Promise<T> | T,
    options?: StepOptions<T>,
  ): Promise<T>;
  step<T>(name: string, fn: (signal: AbortSignal) => Promise<T> | T, options?: StepOptions<T>): Promise<Jsonified<T>>;
  step<T>(
    name: string,
    fn: (signal: AbortSignal) => Promise<T> | T,
    options: StepOptions<T> = {},
  ): Promise<Jsonified<T>> {
    // Read at the call: onCancel may have returned by the time its refusal is seen below.
    const calledWhen = this.ended ? this.endedWhen().when : null;
    const settled = this.replayOrder.called();
    const running = this.runStep(name, fn, options);
    running.then(settled, settled);
    running.catch((err: unknown) => {
      if (!this.ended) this.failedWhileRunning.push({ step: name, error: err });
      else if (isInstance(err, RunEndedError)) {
        this.log.warn(`a step was called ${calledWhen ?? this.endedWhen().when}; its function did not run`, {
          step: name,
        });
      } else {
        this.log.warn("a step the run did not await failed after the run returned", {
          step: name,
          error: thrownText(err),
        });
      }
    });
    return running;
  }

  private async runStep<T>(
    name: string,
    fn: (signal: AbortSignal) => Promise<T> | T,
    options: StepOptions<T>,
  ): Promise<Jsonified<T>> {
    // A step after the run's end belongs to no run: its function ran (a charge for an execution
    // already COMPLETED) and its journal write was refused.
    if (this.ended) {
      const { when, hint } = this.endedWhen();
      throw new RunEndedError(
        `step ${JSON.stringify(String(name).slice(0, 100))} was called ${when}: it belongs to no run, so its function did not run${hint}`,
      );
    }
    // Refused before the step runs: the server refuses the name only once the step's work is done.
    const refused = stepNameProblem(name);
    if (refused !== null) throw new NonRetryableError(refused);
    if (this.used.has(name)) {
      throw new NonRetryableError(
        `step name ${JSON.stringify(name)} was used twice in one run; step names must be unique`,
      );
    }
    this.used.add(name);
    if (this.journaled.has(name)) {
      this.replayOrder.replayed(name);
      const result = this.journaled.get(name) as Jsonified<T>;
      if (options.compensate) {
        this.compensations.set(name, options.compensate as Compensation);
        if (this.unregistered.delete(name) && this.unregistered.size === 0) this.compensationsKnown();
      }
      return result;
    }
    const reason = this.hooks.cancelReason();
    if (reason !== null) throw new CancelledError(reason);
    if (this.hooks.draining()) {
      this.handBackAt ??= name;
      throw new HandBackSignal();
    }
    let value: T;
    try {
      value = this.traced
        ? await inSpan("orbit.step", { attributes: { "orbit.step": name } }, () => Promise.resolve(fn(this.signal)))
        : await fn(this.signal);
    } catch (err) {
      this.failedAt(name, err);
      throw err;
    }
    // What the journal holds is what a replay returns, so both paths return the JSON form. A
    // result that cannot be journaled fails the run for good: its step has run (a retry would run
    // it again) and would return the same again (docs/outcomes.md § Results that cannot be stored).
    // A step refused at close while this one ran may be inside it, and its function may have caught
    // the refusal and returned something made of it ("inner-skipped: HandBackSignal"), which the
    // next worker's replay returned as the step's result (a tester): not journaled, the task is
    // handed back, and the step runs again there.
    if (this.handBackAt !== null) throw new HandBackSignal();
    const stored = storable(value, "result");
    if ("refused" in stored) {
      throw this.failedAt(name, new NonRetryableError(`step ${JSON.stringify(name)}: ${stored.refused}`));
    }
    const result = stored.json;
    try {
      await this.hooks.journal({
        step: name,
        seq: this.nextSeq++,
        result,
        compensable: options.compensate !== undefined,
      });
    } catch (err) {
      if (!(err instanceof OrbitError) || err.code !== "INVALID_ARGUMENT") throw err;
      throw this.failedAt(name, new NonRetryableError(`step ${JSON.stringify(name)} was refused: ${err.message}`));
    }
    if (options.compensate) this.compensations.set(name, options.compensate as Compensation);
    return result as Jsonified<T>;
  }

  continueAsNew(input: JsonObject): never {
    if (this.ended) {
      throw new RunEndedError("continueAsNew was called after the run returned: it ends no run, so nothing continues");
    }
    throw new ContinueAsNewSignal(input);
  }
}

/** Why a step name cannot be journaled (the server's rule: 1 to 500 characters), or null. */
export function stepNameProblem(name: unknown): string | null {
  if (typeof name !== "string") return `a step name is a string, not ${name === null ? "null" : typeof name}`;
  if (name === "") return "a step name must not be empty";
  // What the server refuses in any text (docs/api.md): refused here before the step's work is done.
  if (hasUnstorableChar(name)) {
    return name.includes("\u0000")
      ? "a step name must not contain a NUL character"
      : "a step name must not contain a lone UTF-16 surrogate";
  }
  const length = [...name].length;
  if (length > MAX_STEP_NAME) {
    return `a step name is at most ${MAX_STEP_NAME} characters; this one has ${length} (${JSON.stringify(name.slice(0, 40))}…)`;
  }
  return null;
}
