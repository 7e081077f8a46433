/**
 * Timeouts (docs/outcomes.md § Timeouts): which apply to an execution, and the sweeper that ends
 * the executions past a deadline. `start_timeout` runs from creation until a worker first takes the
 * task; `run_timeout` from creation (or a retry) until the execution ends, across attempts.
 */
import { OrbitError } from "../domain/errors.js";
import { type Execution, isActiveStatus } from "../domain/execution.js";
import { isJsonObject, type JsonObject } from "../domain/json.js";
import { TIMEOUT_CANCEL_PREFIX } from "../domain/worker-protocol.js";
import type { TimeoutKind } from "../store/outcome-store.js";
import type { WorkerTask } from "../store/rows.js";
import type { StoreOps } from "../store/store.js";
import { formatInstant } from "../time/format.js";
import { parseDuration } from "../time/interval.js";
import { workerRan } from "./transitions.js";

/** A duration setting (already validated where it was stored), in milliseconds, or null. */
function durationMs(value: unknown, key: string): number | null {
  return typeof value === "string" ? parseDuration(value, key) : null;
}

/**
 * The timeouts given for a start (a schedule's settings, or the start request's): durations such as
 * `30m`, validated where they were given. Absent: the workflow's default.
 */
export interface StartTimeouts {
  runTimeout?: string | undefined;
  startTimeout?: string | undefined;
}

/** The timeouts given, in ms; null each that was not given. */
export function givenTimeoutsMs(given: StartTimeouts): { startTimeoutMs: number | null; runTimeoutMs: number | null } {
  return {
    startTimeoutMs: durationMs(given.startTimeout, "start_timeout"),
    runTimeoutMs: durationMs(given.runTimeout, "run_timeout"),
  };
}

/** The timeouts given for the start win over the workflow's defaults. */
export function resolveTimeouts(
  given: StartTimeouts,
  workflowSettings: Record<string, unknown>,
): { startTimeoutMs: number | null; runTimeoutMs: number | null } {
  return {
    startTimeoutMs:
      durationMs(given.startTimeout, "start_timeout") ?? durationMs(workflowSettings.start_timeout, "start_timeout"),
    runTimeoutMs:
      durationMs(given.runTimeout, "run_timeout") ?? durationMs(workflowSettings.run_timeout, "run_timeout"),
  };
}

/**
 * How long a worker has to run the compensations of a timed-out execution before it ends FAILED
 * anyway: the worker's own 60 s grace for code that ignores its cancel (CANCEL_GRACE_MS in
 * src/worker/run-task.ts, after which it hands the task back to be compensated) and 30 s for that
 * hand-back and the compensations. Both were 60 s: the server ended the run "not compensated"
 * 10 ms before a live worker handed it back to be (a re-tester).
 */
export const TIMEOUT_GRACE_MS = 90_000;

/** A timed-out execution's error (also the marker, while its worker compensates, that its cancel is a timeout). */
export function isTimeoutError(error: unknown): boolean {
  return isJsonObject(error) && error.type === "Timeout";
}

/**
 * The transition of an execution past a deadline, under its lock; a deadline that no longer
 * applies (moved, or a worker took the task before the start deadline) changes nothing. With no
 * worker involved the execution ends FAILED at once; otherwise its worker is told to cancel (the code
 * sees `ctx.signal` abort, the compensations run) and reports, which ends it FAILED with the timeout
 * error (task-transitions.ts finishCancel). A worker that never reports gets TIMEOUT_GRACE_MS.
 */
export async function timeOutExecution(
  tx: StoreOps,
  executionId: string,
  kind: TimeoutKind,
  now: number,
): Promise<Execution> {
  // It may end the execution: the schedule rows first (docs/storage.md § Locking).
  await tx.lockSchedulesForEnd({ executionIds: [executionId] });
  const execution = await tx.getExecution(executionId, { forUpdate: true });
  if (!execution) throw new OrbitError("NOT_FOUND", `execution ${executionId} does not exist`);
  if (!isActiveStatus(execution.status)) return execution;
  const deadlines = await tx.getExecutionDeadlines(executionId);
  const at = kind === "start_timeout" ? deadlines.startDeadlineMs : deadlines.runDeadlineMs;
  if (at === null || at > now) return execution;
  const task = await tx.getTaskForExecution(executionId, { forUpdate: true });
  const workerInvolved = task !== null && (await workerRan(tx, task, execution));
  if (kind === "start_timeout" && workerInvolved) {
    await tx.clearDeadlines(executionId, "start");
    return execution;
  }
  if (isTimeoutError(execution.error) && execution.cancelReason !== null) {
    // The grace for the compensations ran out: end it as it is, saying which journaled steps no
    // worker compensated (it said only "run_timeout exceeded", as if nothing was left to undo).
    return endFailed(tx, execution, task, now, await withUncompensated(tx, execution, execution.error as JsonObject));
  }
  const deadline = formatInstant(at);
  const message =
    kind === "start_timeout"
      ? `start_timeout exceeded: no worker took the execution by ${deadline}`
      : `run_timeout exceeded: the execution did not end by ${deadline}`;
  const error: JsonObject = { message, type: "Timeout", timeout: kind, deadline };
  await tx.appendEvent(executionId, "WorkflowTimedOut", { timeout: kind, deadline }, now);
  if (!workerInvolved) return endFailed(tx, execution, task, now, error);
  if (task.state === "pending") await tx.updateTask(task.taskId, { availableMs: now }); // no back-off for a cancel
  const reason = `${TIMEOUT_CANCEL_PREFIX}${message}`;
  await tx.updateExecution(executionId, { cancelReason: reason, error });
  await tx.appendEvent(executionId, "CancelRequested", { reason }, now);
  await tx.setExecutionDeadlines([executionId], null, now + TIMEOUT_GRACE_MS);
  return (await tx.getExecution(executionId)) ?? execution;
}

/**
 * The compensable steps of the execution's current run that were not compensated, newest first,
 * as `failures` entries (the shape of a failed compensation's, task-transitions.ts) saying `why`;
 * null when none is left.
 */
export async function uncompensated(
  tx: StoreOps,
  execution: Execution,
  why: string,
): Promise<{ steps: string; failures: JsonObject[] } | null> {
  const left = (await tx.listStepResults(execution.executionId, execution.run))
    .filter((s) => s.hasCompensation && s.compensatedMs === null)
    .sort((a, b) => b.seq - a.seq);
  if (left.length === 0) return null;
  return {
    steps: left.map((s) => s.step).join(", "),
    failures: left.map((s) => ({ step: s.step, error: { message: why, type: "CompensationFailed" } })),
  };
}

/** The timeout's error, with the steps no worker compensated within TIMEOUT_GRACE_MS as its `failures`. */
async function withUncompensated(tx: StoreOps, execution: Execution, timeout: JsonObject): Promise<JsonObject> {
  const grace = `within the timeout's ${TIMEOUT_GRACE_MS / 1000} s grace`;
  const left = await uncompensated(tx, execution, `not compensated: its compensation did not run ${grace}`);
  if (left === null) return timeout;
  return {
    ...timeout,
    message: `${String(timeout.message)}; compensation failed: ${left.steps} not compensated ${grace}`,
    failures: left.failures,
  };
}

async function endFailed(
  tx: StoreOps,
  execution: Execution,
  task: WorkerTask | null,
  now: number,
  error: JsonObject,
): Promise<Execution> {
  const id = execution.executionId;
  if (task !== null && (task.state === "pending" || task.state === "leased")) {
    await tx.updateTask(task.taskId, { state: "done" });
  }
  await tx.updateExecution(id, { status: "FAILED", error, endedMs: now });
  await tx.appendEvent(id, "WorkflowFailed", { error }, now);
  await tx.clearDeadlines(id, "both");
  return (await tx.getExecution(id)) ?? execution;
}
