/**
 * Runs one leased task to its report: completed, failed (retryable or not), continued as new,
 * handed back, or — after a cancel — compensated in reverse order, `onCancel`, cancelled.
 */
import { SpanKind } from "@opentelemetry/api";
import { isInstance } from "../domain/error-text.js";
import { OrbitError } from "../domain/errors.js";
import type { JsonObject, JsonValue } from "../domain/json.js";
import { contextFrom, inSpan } from "../domain/tracing.js";
import { type TaskJson, TIMEOUT_CANCEL_PREFIX } from "../domain/worker-protocol.js";
import { type Compensation, TaskContext } from "./context.js";
import {
  CancelledError,
  ContinueAsNewSignal,
  errorJson,
  HandBackSignal,
  LeaseLostError,
  NonRetryableError,
} from "./errors.js";
import { inputMismatch } from "./input-check.js";
import { type ProtocolClient, UNTIL_GIVEN_UP } from "./protocol-client.js";
import { storable } from "./storable.js";
import type { TaskControl } from "./task-control.js";
import { withTaskIds } from "./task-log.js";
import { tracingActive } from "./tracing-probe.js";
import type { WorkflowDefinition, WorkflowLogger } from "./workflow.js";

export { CANCEL_GRACE_MS, TaskControl } from "./task-control.js";

type Outcome =
  | { kind: "completed"; result: unknown }
  | { kind: "continue"; input: unknown }
  | { kind: "handback" }
  | { kind: "error"; error: unknown };

/** Runs one task in its span, a child of the execution's trace (docs/operations.md § Tracing). */
export function runTask(
  def: WorkflowDefinition,
  control: TaskControl,
  api: ProtocolClient,
  log: WorkflowLogger,
  reporting: () => void = () => undefined,
): Promise<void> {
  // Without an OpenTelemetry SDK or context manager a span records nothing and nests nothing:
  // skip making one (and its contexts) for every task.
  if (!tracingActive()) return runTaskInSpan(def, control, api, log, false, reporting);
  const { task } = control;
  const attributes = {
    "orbit.execution_id": task.execution_id,
    "orbit.workflow": task.workflow,
    "orbit.workflow_version": task.version,
    "orbit.run": task.run,
    "orbit.attempt": task.attempt,
  };
  return inSpan(
    "orbit.workflow.run",
    { kind: SpanKind.CONSUMER, parent: contextFrom(task.traceparent), attributes },
    () => runTaskInSpan(def, control, api, log, true, reporting),
  );
}

async function runTaskInSpan(
  def: WorkflowDefinition,
  control: TaskControl,
  api: ProtocolClient,
  workerLog: WorkflowLogger,
  traced: boolean,
  reporting: () => void,
): Promise<void> {
  const { task } = control;
  // Every line about this task — the SDK's and the workflow code's ctx.log — carries its ids.
  const log = withTaskIds(workerLog, task);
  const retryFor = UNTIL_GIVEN_UP;
  const ctx = new TaskContext(task, control, log, traced, {
    journal: async (step) => {
      // A lease this worker no longer holds (lost, or handed back after a cancel its code ignored)
      // reports no step: the task may be leased again, to this very worker under the same attempt,
      // and the step was taken for the new lease's, which then found a step it could not compensate.
      if (control.leaseLost) throw new LeaseLostError(`lost the lease on task ${task.task_id}`);
      const answer = await control
        .reportingStep(() => api.step(task, step, retryFor))
        .catch((err: unknown) => {
          // Refused: the lease is gone (its signal aborts, and no later step is reported).
          if (err instanceof LeaseLostError) control.loseLease();
          throw err;
        });
      if (answer.cancel_requested !== null) control.cancel(answer.cancel_requested);
    },
    cancelReason: () => control.cancelReason,
    draining: () => control.draining(),
  });
  try {
    // Input this definition's schema refuses fails the task, not the worker (docs/outcomes.md).
    const mismatch = task.status === "COMPENSATING" ? null : inputMismatch(def, task);
    if (mismatch !== null) {
      reporting();
      await api.fail(task, mismatch, false, retryFor);
      logFailure(log, task, mismatch, "final");
      return;
    }
    let outcome = await attemptOrReplay(def, ctx, control);
    control.runSettled = true;
    if (ctx.handBackAt !== null && outcome.kind !== "handback") {
      // The run caught the refusal of a step at close (a best-effort step in a try, an error
      // wrapped with its cause): what it ended with is not its outcome. It COMPLETED without the
      // step, or FAILED with "the worker is closing", on every deploy (a tester).
      log.info("the run went on after a step was refused at close; the task is handed back, its outcome not reported", {
        task_id: task.task_id,
        step: ctx.handBackAt,
        ended: outcome.kind,
      });
      outcome = { kind: "handback" };
    }
    ctx.runEnded(outcome.kind === "error" ? outcome.error : undefined);
    if (
      outcome.kind === "error" &&
      control.leaseUnheard &&
      !control.leaseLost &&
      control.cancelReason === null &&
      task.status !== "COMPENSATING"
    ) {
      // It most likely stopped on its signal, aborted for a lease no heartbeat renewed in time: not
      // a failure of the run's (reported, it used up an attempt, and the last one failed the
      // execution for a partition). The server refuses the hand-back if the lease ended; if it kept
      // the lease (through its own outage), the task is pending again at once, same attempt.
      log.info(
        "the run ended with an error after its signal aborted for a lease no heartbeat renewed in time; the error is not reported and the task is handed back (its next lease replays the journal)",
        { task_id: task.task_id, error: errorJson(outcome.error).message },
      );
      outcome = { kind: "handback" };
    }
    if (control.leaseLost || (outcome.kind === "error" && isInstance(outcome.error, LeaseLostError))) {
      if (control.handedBack) {
        // Said at close already ("handed back"); a warning of a lost lease here misled.
        // Handed back at close, or after a cancel its code ignored (the next lease compensates).
        log.info(
          control.cancelReason !== null
            ? "a cancelled run handed back after its cancel ended; its outcome is not reported (the task's next lease compensates it)"
            : "a run handed back at close ended; its outcome is not reported (the task runs again elsewhere)",
          { task_id: task.task_id },
        );
      } else {
        // The lease ran out while this worker was away or blocked, or the execution ended meanwhile
        // (a cancel or a timeout the server settled): either way the outcome is not reported.
        log.warn(
          "lost the task's lease (it ran past the lease, or its execution ended meanwhile); its outcome is not reported",
          {
            task_id: task.task_id,
          },
        );
      }
      return;
    }
    const reason = control.cancelReason;
    // A timeout's cancel lets a run that completes before it hears of it end COMPLETED (the server
    // decides, below); one that heard of it (its signal aborted) and completed anyway ran past its
    // deadline knowingly: it is compensated and ends FAILED with the timeout, not COMPLETED.
    const heardTimeout = reason?.startsWith(TIMEOUT_CANCEL_PREFIX) === true;
    if (task.status === "COMPENSATING" || (reason !== null && (outcome.kind !== "completed" || heardTimeout))) {
      await compensate(def, ctx, control, api, log, reason ?? task.cancel_requested ?? "cancelled");
      return;
    }
    // A run that returned or threw is reported; a cancel requested before the report wins over
    // it, and the server answers with the reason: compensate, then onCancel (docs/workflows.md §
    // Cancellation and compensation). The server decides, so a timeout's cancel can still complete.
    const cancelFirst = async (cancelReason: string): Promise<void> => {
      control.cancel(cancelReason);
      await compensate(def, ctx, control, api, log, cancelReason);
    };
    /** Fails the attempt, not retryable; the cancel reason instead when a cancel came first. */
    const failForGood = async (error: { message: string; type: string }): Promise<string | null> => {
      const cancelReason = cancelAnswered(await api.fail(task, error, false, retryFor));
      if (cancelReason === null) logFailure(log, task, error, "final");
      return cancelReason;
    };
    // From here on the worker only reports (a network call): its slot may take another task.
    reporting();
    /**
     * Reports `value` (the result, or continueAsNew's input) with `send`. A value that cannot be
     * stored (not JSON, over 1 MB, deeper than 64; or refused by the server, such as an input its
     * schema does not take) fails the attempt for good: the same run would give it again, and a
     * report that never lands would let the lease run out into the same run, 20 times
     * (docs/outcomes.md § Results that cannot be stored).
     */
    const report = async (
      value: unknown,
      what: "result" | "input",
      send: (json: JsonValue, bytes: number) => Promise<string | null>,
      refusal: (reason: string) => { message: string; type: string },
    ): Promise<void> => {
      // continueAsNew() with nothing: undefined would be sent as null, and refused as "not null".
      const stored: ReturnType<typeof storable> =
        what === "input" && value === undefined
          ? { refused: "the input must be a JSON object, not undefined" }
          : storable(value, what);
      let refused = "refused" in stored ? stored.refused : null;
      let cancelReason: string | null = null;
      if (!("refused" in stored)) {
        try {
          cancelReason = await send(stored.json, stored.bytes);
        } catch (err) {
          if (!(err instanceof OrbitError) || err.code !== "INVALID_ARGUMENT") throw err;
          refused = `the ${what} was refused: ${err.message}`;
        }
      }
      if (refused !== null) {
        cancelReason = await failForGood(refusal(refused));
        if (cancelReason === null) return;
      }
      if (cancelReason !== null) await cancelFirst(cancelReason);
    };
    switch (outcome.kind) {
      case "completed":
        ctx.replayOrder.sayUnreached("returned its result");
        await report(
          outcome.result,
          "result",
          (json, bytes) => api.complete(task, json, retryFor, bytes),
          (reason) => ({ message: reason, type: "ResultRefused" }),
        );
        return;
      case "continue":
        ctx.replayOrder.sayUnreached("continued as new");
        await report(
          outcome.input,
          "input",
          async (json) => cancelAnswered(await api.continueAsNew(task, json, retryFor)),
          (reason) => ({ message: `continueAsNew: ${reason}`, type: "InputRefused" }),
        );
        return;
      case "handback":
        await api.release([task.task_id]);
        return;
      case "error": {
        const retryable = !isInstance(outcome.error, NonRetryableError);
        const error = errorJson(outcome.error, ctx.stepOf(outcome.error));
        const answer = await api.fail(task, error, retryable, retryFor);
        const cancelReason = cancelAnswered(answer);
        if (cancelReason !== null) {
          await cancelFirst(cancelReason);
          return;
        }
        logFailure(log, task, error, answer?.status === "FAILED" ? "final" : "retry");
        // A retry replays the journal again: what it does not reach is said when the execution ends.
        if (answer?.status === "FAILED") ctx.replayOrder.sayUnreached("failed for good");
        return;
      }
    }
  } catch (err) {
    if (err instanceof LeaseLostError && err.afterLostAnswer) {
      // Its first send got no answer, and the resend was refused: the first most likely landed.
      log.info(
        "a report sent again after its answer was lost was refused: the first one was most likely recorded (else the lease had ended meanwhile)",
        { task_id: task.task_id },
      );
    } else if (err instanceof LeaseLostError && err.after503) {
      // The worker cannot tell which: a proxy losing COMMIT answers made every such fail report
      // say "lost the task's lease" though each was recorded (WorkflowAttemptFailed, attempt 2 ran).
      log.warn(
        "a report sent again after a 503 was refused: the server may have recorded the first one (its database's answer was lost; the execution then went on, a failed attempt's next one runs) or the task's lease ended meanwhile",
        { task_id: task.task_id },
      );
    } else if (err instanceof LeaseLostError)
      log.warn("lost the task's lease while reporting", { task_id: task.task_id });
    else
      log.error("could not report the task's outcome; its lease will expire and it will be retried", {
        task_id: task.task_id,
        error: errorJson(err),
      });
  }
}

/**
 * The run's outcome. A lease whose cancel was requested before it (the task handed back after a
 * cancel, a worker's death, a timeout) runs the code only to register the journaled steps'
 * compensations: once they are, the worker compensates without waiting for the code to return, as
 * no step can run after a cancel. Code that hung after its cancel (an await that never ends) hung
 * the same way in every replay, each replay was handed back 60 s later and kept a slot, and the
 * execution stayed RUNNING with its cancel for good (a tester's worker lost 9 of its 10 slots).
 */
function attemptOrReplay(def: WorkflowDefinition, ctx: TaskContext, control: TaskControl): Promise<Outcome> {
  const { task } = control;
  const run = attempt(def, ctx, task);
  if (!control.replay) return run;
  const cancelled = (): Outcome => ({ kind: "error", error: new CancelledError(task.cancel_requested ?? "cancelled") });
  // Code slow to reach its journaled steps (a wait outside any step) is not handed back, which
  // replayed it again just as slowly for good: past the grace it compensates what it registered,
  // and each step it did not reach fails as unreached (a tester's 70 s wait between two steps).
  return Promise.race([run, ctx.journalReplayed.then(cancelled), control.replayEnded.then(cancelled)]);
}

async function attempt(def: WorkflowDefinition, ctx: TaskContext, task: TaskJson): Promise<Outcome> {
  try {
    return { kind: "completed", result: await def.run(ctx, task.input) };
  } catch (error) {
    if (isInstance(error, ContinueAsNewSignal)) return { kind: "continue", input: error.input };
    if (isInstance(error, HandBackSignal)) return { kind: "handback" };
    return { kind: "error", error };
  }
}

/** COMPENSATING, the completed steps' compensations newest first, `onCancel`, then CANCELLED. */
async function compensate(
  def: WorkflowDefinition,
  ctx: TaskContext,
  control: TaskControl,
  api: ProtocolClient,
  log: WorkflowLogger,
  reason: string,
): Promise<void> {
  const { task } = control;
  const retryFor = UNTIL_GIVEN_UP;
  const current = await api.compensating(task, retryFor);
  const steps = [...current.steps].filter((s) => s.compensable && !s.compensated).sort((a, b) => b.seq - a.seq);
  for (const step of steps) {
    const fn = ctx.compensations.get(step.name) as ((result: JsonValue | null) => unknown) | undefined;
    let error: JsonObject | null = null;
    if (!fn) {
      error = {
        message: `no compensation for step ${step.name}: the workflow did not reach it again when replayed`,
        type: "Error",
      };
    } else {
      try {
        await (fn as Compensation as (r: JsonValue | null) => Promise<void>)(step.result);
      } catch (err) {
        error = errorJson(err, step.name);
      }
    }
    // A refund that did not happen is an operator's problem: say so where the worker logs.
    if (error !== null) log.error("a compensation failed", { step: step.name, error: error.message ?? null });
    await api.compensation(task, step.name, error, retryFor);
  }
  let onCancelError: JsonObject | null = null;
  if (def.onCancel) {
    ctx.cancelling = true;
    try {
      await def.onCancel(ctx, reason);
    } catch (err) {
      onCancelError = errorJson(err);
      log.error("onCancel failed", { error: onCancelError.message ?? null });
    } finally {
      ctx.cancelling = false;
    }
  }
  await api.cancelled(task, onCancelError, retryFor);
}

/**
 * A failed attempt at warn (the server retries it), the last one at error (the execution FAILED):
 * workflow, execution, attempt, run, step and error, so a worker's log answers "what failed".
 */
function logFailure(
  log: WorkflowLogger,
  task: TaskJson,
  error: { message: string; type: string; step?: string },
  kind: "retry" | "final",
): void {
  const fields = {
    workflow: `${task.workflow}@${task.version}`,
    execution_id: task.execution_id,
    run: task.run,
    attempt: task.attempt,
    step: error.step ?? null,
    error: `${error.type}: ${error.message}`,
  };
  if (kind === "final") log.error("execution failed", fields);
  else log.warn("attempt failed; the server retries it", fields);
}

/** The cancel reason when a fail report was answered "a cancel came first" (still RUNNING, with its reason). */
function cancelAnswered(answer: { status?: string; cancel_reason?: string | null } | null): string | null {
  return answer?.status === "RUNNING" && typeof answer.cancel_reason === "string" ? answer.cancel_reason : null;
}
