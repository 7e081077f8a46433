/**
 * The warnings of `orbit doctor`'s `schedules` check about what the schedules start
 * (docs/operations.md § Doctor, docs/outcomes.md § Outcomes in doctor): runs that fail, cancels
 * whose compensation failed, and `cancel_previous` runs each replaced before they complete. Firing
 * may be healthy while each of these needs a human.
 */
import type { ScheduleSettings } from "../domain/schedule.js";
import type { ScheduleRow } from "../store/rows.js";
import type { StoreOps } from "../store/store.js";
import { formatInstant } from "../time/format.js";
import { cancelPreviousReason } from "./start-request.js";

/** The most schedules a warning names. */
export const NAMED = 5;
/**
 * A `cancel_previous` schedule whose last this many ended runs were each replaced by the next
 * occurrence (and none completed) is warned of: its work never gets done.
 */
export const REPLACED_RUNS = 3;
/** The most `cancel_previous` schedules whose executions one doctor run reads (one query each). */
export const REPLACED_CHECKED = 100;

export interface OutcomeWarning {
  message: string;
  hint: string;
}

/** The first {@link NAMED} of `said`, then how many more: how every doctor line names schedules. */
export const named = (said: readonly string[]): string =>
  said.slice(0, NAMED).join(", ") + (said.length > NAMED ? ` and ${said.length - NAMED} more` : "");

const pausedByFailure = (r: ScheduleRow): boolean => r.paused && r.pauseNote?.includes("(pause_on_failure ") === true;

/**
 * The schedules (not ended) whose last run failed; null when none. Those pause_on_failure paused
 * first (they fire nothing until a human resumes them), then most failures in a row: sorted by
 * the count alone, a paused one sank past the five named and was never said (a tester).
 */
export function failingRuns(rows: readonly ScheduleRow[]): OutcomeWarning | null {
  const failing = rows
    .filter((r) => r.state !== "ended" && (r.outcomes?.consecutiveFailures ?? 0) > 0)
    .sort(
      (a, b) =>
        Number(pausedByFailure(b)) - Number(pausedByFailure(a)) ||
        (b.outcomes?.consecutiveFailures ?? 0) - (a.outcomes?.consecutiveFailures ?? 0) ||
        a.scheduleId.localeCompare(b.scheduleId),
    );
  if (failing.length === 0) return null;
  const said = failing.map((r) => {
    const outcome = r.outcomes?.lastOutcome?.errorType === "Timeout" ? "TIMED OUT" : "FAILED";
    const paused = pausedByFailure(r) ? ", paused by pause_on_failure" : "";
    return `${r.scheduleId} (${outcome}, ${r.outcomes?.consecutiveFailures} in a row${paused})`;
  });
  return {
    message: `${failing.length} schedule(s) whose last run failed: ${named(said)}`,
    hint: "`orbit schedule get <id>` shows the last error, `orbit ps --schedule <id> --status FAILED` the failed runs; once fixed, `orbit schedule resume <id>` a schedule pause_on_failure paused",
  };
}

/**
 * The schedules (not ended) whose last run was cancelled and whose compensation (or `onCancel`)
 * failed: what the run did is not undone. Doctor said nothing of them (a tester).
 */
export function compensationFailures(rows: readonly ScheduleRow[]): OutcomeWarning | null {
  const failed = rows
    .filter((r) => {
      const o = r.outcomes?.lastOutcome;
      return r.state !== "ended" && o?.status === "CANCELLED" && o.errorType === "CompensationFailed";
    })
    .map((r) => r.scheduleId)
    .sort();
  if (failed.length === 0) return null;
  return {
    message: `${failed.length} schedule(s) whose last run was cancelled and its compensation failed (not undone): ${named(failed)}`,
    hint: "`orbit schedule get <id>` says which step was not compensated (`reason:`): undo it by hand, then fix the compensation",
  };
}

/**
 * The `cancel_previous` schedules (not ended) whose last {@link REPLACED_RUNS} ended runs were each
 * cancelled by the schedule's own next occurrence, none completed: every run is replaced before it
 * can finish, and the schedule read neutral everywhere (38 fired, 0 completed; a tester).
 * Candidates are the schedules whose last outcome is such a replacement; the executions of at most
 * {@link REPLACED_CHECKED} of them are read.
 */
export async function replacedRuns(tx: StoreOps, rows: readonly ScheduleRow[]): Promise<OutcomeWarning | null> {
  const candidates = rows
    .filter((r) => {
      const o = r.outcomes?.lastOutcome;
      return (
        r.state !== "ended" &&
        (r.spec as unknown as ScheduleSettings).overlap === "cancel_previous" &&
        o?.status === "CANCELLED" &&
        o.error?.startsWith(cancelPreviousReason(r.scheduleId)) === true
      );
    })
    .sort((a, b) => a.scheduleId.localeCompare(b.scheduleId))
    .slice(0, REPLACED_CHECKED);
  const replaced: string[] = [];
  for (const r of candidates) {
    // Newest first; the newest may still run (it replaced the one before), and a manual trigger
    // under cancel_previous keeps at most one running too.
    const recent = await tx.listExecutions({ scheduleId: r.scheduleId, limit: REPLACED_RUNS + 2 });
    const ended = recent.filter((e) => e.endedMs !== null).slice(0, REPLACED_RUNS);
    const reason = cancelPreviousReason(r.scheduleId);
    if (ended.length < REPLACED_RUNS) continue;
    if (!ended.every((e) => e.status === "CANCELLED" && e.cancelReason === reason)) continue;
    const ok = r.outcomes?.lastSuccessMs;
    replaced.push(
      `${r.scheduleId} (last ${REPLACED_RUNS} runs replaced, last ok ${ok == null ? "never" : formatInstant(ok)})`,
    );
  }
  if (replaced.length === 0) return null;
  return {
    message: `${replaced.length} schedule(s) whose runs are each replaced by the next occurrence before they complete (overlap cancel_previous): ${named(replaced)}`,
    hint: "a run takes longer than the time between occurrences: lengthen the interval, make the run shorter, or use overlap skip or buffer_one (docs/outcomes.md § Outcomes in doctor)",
  };
}
