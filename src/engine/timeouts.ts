/**
 * Timeouts (docs/outcomes.md § Timeouts): which apply to an execution, and the sweeper that ends
 * the executions past a deadline. `start_timeout` runs from creation until a worker first takes the
 * task; `run_timeout` from creation (or a retry) until the execution ends, across attempts.
 */
import { parseDuration } from "../time/interval.js";

/** A duration setting (already validated where it was stored), in milliseconds, or null. */
function durationMs(value: unknown, key: string): number | null {
  return typeof value === "string" ? parseDuration(value, key) : null;
}

/** The schedule's setting wins over the workflow's default. */
export function resolveTimeouts(
  scheduleSettings: Record<string, unknown>,
  workflowSettings: Record<string, unknown>,
): { startTimeoutMs: number | null; runTimeoutMs: number | null } {
  return {
    startTimeoutMs:
      durationMs(scheduleSettings.start_timeout, "start_timeout") ??
      durationMs(workflowSettings.start_timeout, "start_timeout"),
    runTimeoutMs:
      durationMs(scheduleSettings.run_timeout, "run_timeout") ??
      durationMs(workflowSettings.run_timeout, "run_timeout"),
  };
}
