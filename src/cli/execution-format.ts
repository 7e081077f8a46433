/**
 * How `orbit ps` and `orbit status` print executions, to the character as the seed shows them.
 */

import type { ExecutionEventJson, ExecutionJson, ExecutionSummaryJson, WorkflowJson } from "../client/types.js";
import { stringifyJsonText } from "../domain/json-text.js";
import { TIMEOUT_CANCEL_PREFIX } from "../domain/worker-protocol.js";
import { between, shortDuration } from "./durations.js";
import { oneLine } from "./safe-text.js";
import { type Column, table } from "./table.js";

/** An execution as a list gives it, in either view (`GET /v1/executions`, `?view=summary`). */
type ListedExecution = ExecutionJson | ExecutionSummaryJson;

/** The seed's `orbit ps` columns (widths measured from the seed). */
export const EXECUTION_COLUMNS: readonly Column[] = [
  { header: "EXECUTION", width: 39 },
  { header: "WORKFLOW", width: 25 },
  { header: "VERSION", width: 11 },
  { header: "STATUS", width: 14 },
  { header: "AGE", width: 0 },
];

/** AGE is `now − created_at`. STATUS as {@link statusText}. No input or result: it takes summaries. */
export function executionTable(executions: readonly ListedExecution[], now: number): string {
  return table(
    EXECUTION_COLUMNS,
    executions.map((e) => [
      e.execution_id,
      e.workflow,
      e.version,
      statusText(e),
      shortDuration(now - Date.parse(e.created_at)),
    ]),
  );
}

/** The execution ended FAILED by its `run_timeout` or `start_timeout` (its error's type is `Timeout`). */
function timedOut(e: ListedExecution): boolean {
  return e.status === "FAILED" && errorType(e.error) === "Timeout";
}

function errorType(error: unknown): unknown {
  return typeof error === "object" && error !== null ? (error as { type?: unknown }).type : undefined;
}

/**
 * The status as `orbit ps` and `orbit status` print it: the execution's, but `TIMED OUT` for a
 * FAILED one that hit its timeout, as `orbit schedule list`, `get`, `occurrences` and the web UI say
 * it (ps said FAILED beside them; a tester). `--status FAILED` and `--json` keep the status.
 */
export function statusText(e: ListedExecution): string {
  return timedOut(e) ? "TIMED OUT" : e.status;
}

function isRunning(e: ExecutionJson): boolean {
  return e.status === "RUNNING" || e.status === "COMPENSATING";
}

/**
 * `ended − started`, or `now − started` while it runs; `-` before it started. `runStartedAt`, when
 * given, is when the current run started (a retry: the execution's `started_at` is run 1's).
 */
export function elapsedMs(e: ExecutionJson, now: number, runStartedAt: string | null = null): number | null {
  const started = runStartedAt ?? e.started_at;
  if (started === null) return null;
  if (e.ended_at !== null) return between(started, e.ended_at);
  return isRunning(e) ? now - Date.parse(started) : null;
}

/**
 * When the current run started, if a retry started it: the time of the last `WorkflowRetried`
 * event, else null (run 1, or runs continued as new, count from `started_at`).
 */
export function retriedAt(events: readonly ExecutionEventJson[]): string | null {
  return events.findLast((event) => event.type === "WorkflowRetried")?.at ?? null;
}

function valueText(value: unknown): string {
  return typeof value === "string" ? value : stringifyJsonText(value);
}

/**
 * ```
 * COMPLETED nightly-orders:manual:2026-11-15T18:52:22.296Z  OrderProcessing@1.0.0
 *   schedule: nightly-orders
 *   elapsed: 33ms
 * ```
 * plus `  cancel reason:` (`  timed out:` when a timeout stopped it) and `  error:` when the execution has them. After a retry, `elapsed` is
 * the current run's, from `runStartedAt` ({@link retriedAt}).
 */
export function statusBlock(e: ExecutionJson, now: number, wide = false, runStartedAt: string | null = null): string {
  // Each line is the server's text on one line, control characters escaped (safe-text.ts).
  const line = (text: string): string => `${oneLine(text)}\n`;
  let out = line(`${statusText(e)} ${e.execution_id}  ${e.workflow}@${e.version}`);
  if (e.schedule_id !== null) out += line(`  schedule: ${e.schedule_id}`);
  const elapsed = elapsedMs(e, now, runStartedAt);
  // Negative: the server's clock went back while it ran (its end recorded before its start); it
  // read `elapsed: 0ms` for a 40 s run across a step of -1 h (a tester).
  const said =
    elapsed === null
      ? "-"
      : elapsed < 0
        ? "unknown (the server's clock went back while it ran)"
        : shortDuration(elapsed);
  out += line(`  elapsed: ${said}`);
  if (e.run !== undefined && (e.run > 1 || (e.attempt ?? 1) > 1))
    out += line(`  run: ${e.run}   attempt: ${e.attempt ?? 1}`);
  if (e.waiting !== undefined) out += line(`  waiting: ${e.waiting.message}`);
  // Only asked for (`--wide`): a completed run prints the seed's three lines (docs/cli.md § orbit status).
  // Always JSON, `null` included: a string printed bare read "42" as 42, and a null result (also
  // what a workflow returning undefined stores) printed no line, as if there were none to show.
  if (wide && e.status === "COMPLETED") out += line(`  result: ${stringifyJsonText(e.result ?? null)}`);
  const timeout = timeoutText(e);
  if (timeout !== null) out += line(`  timed out: ${timeout}`);
  else if (e.cancel_reason !== undefined) out += line(`  cancel reason: ${e.cancel_reason}`);
  // The timeout's error says what the `timed out:` line said: printed only when it says more
  // (what its compensations did not undo).
  if (e.error !== null && (timeout === null || errorText(e.error) !== timeout)) {
    out += line(`  error: ${errorText(e.error)}`);
  }
  return out;
}

/**
 * What a timeout that stopped a run said (its cancel reason, `timeout: <message>`, without the
 * prefix), or null: nobody cancelled it, and `cancel reason: timeout: run_timeout exceeded…` said
 * someone had (a tester). docs/outcomes.md § Timeouts.
 */
function timeoutText(e: ExecutionJson): string | null {
  const reason = e.cancel_reason;
  if (reason === undefined || !reason.startsWith(TIMEOUT_CANCEL_PREFIX) || errorType(e.error) !== "Timeout") {
    return null;
  }
  return reason.slice(TIMEOUT_CANCEL_PREFIX.length);
}

/**
 * An execution's error as `orbit schedule get` prints a failed outcome's: the message a worker
 * reported (`{message, type, step}`), then the step that threw; `--json` has the rest. Any other
 * value is printed as JSON, a string as it is.
 */
function errorText(error: unknown): string {
  if (typeof error !== "object" || error === null || Array.isArray(error)) return valueText(error);
  const { message, step, type } = error as { message?: unknown; step?: unknown; type?: unknown };
  if (typeof message !== "string") return valueText(error);
  // `throw new Error("")` printed `error: ` and nothing: the type says at least what was thrown.
  const said =
    message.trim() !== ""
      ? thrownValueText(message, type)
      : `${typeof type === "string" && type !== "" ? type : "Error"} (thrown without a message)`;
  return typeof step === "string" ? withStep(said, step) : said;
}

/**
 * An error's message as shown, given its type: a thrown value that is not an Error is reported as
 * its text and its `typeof` (docs/outcomes.md § Failures are always reportable), so `throw
 * undefined` is `{message: "undefined", type: "undefined"}` and `throw null` `{message: "null",
 * type: "object"}`, which printed `error: undefined` as if there were no error to show (a tester).
 * A thrown string `"undefined"` has the type `string` and is shown as it is.
 */
export function thrownValueText(message: string, type: unknown): string {
  if (type === "undefined" && message === "undefined") return "(the code threw undefined)";
  if (type === "object" && message === "null") return "(the code threw null)";
  return message;
}

/**
 * A worker's error message and the step that threw it, ` (in step s1)` after the message unless
 * the message names the step itself: the SDK's own refusals start with `step "s1": …` (a result
 * that is not JSON), and `orbit status` printed `step "s1": … (in step s1)`.
 */
export function withStep(message: string, step: string): string {
  return message.startsWith(`step ${JSON.stringify(step)}`) ? message : `${message} (in step ${step})`;
}

export const WORKFLOW_COLUMNS: readonly Column[] = [
  { header: "NAME", width: 25 },
  { header: "VERSION", width: 11 },
  { header: "DESCRIPTION", width: 0 },
];

export function workflowTable(workflows: readonly WorkflowJson[]): string {
  return table(
    WORKFLOW_COLUMNS,
    workflows.map((w) => [
      w.name,
      w.version,
      w.deprecated_at === null || w.deprecated_at === undefined
        ? (w.description ?? "-")
        : `[deprecated]${w.description === null ? "" : ` ${w.description}`}`,
    ]),
  );
}
