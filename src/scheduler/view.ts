/**
 * A schedule as the API shows it (docs/api.md): the seed's fields in the seed's order, every optional
 * setting that is set next to its kin, then Orbit's additions (state, revision, last_tick,
 * dead_letters).
 */
import type { OccurrenceJson } from "../domain/api-json.js";
import type { JsonObject } from "../domain/json.js";
import { RawJson } from "../domain/json-text.js";
import { DEAD_LETTERS_SHOWN, type ScheduleSettings } from "../domain/schedule.js";
import { SETTING_KEYS, type SettingKey } from "../domain/setting-table.js";
import { NO_OUTCOMES, type OccurrenceRow, type ScheduleRow } from "../store/rows.js";
import type { StoreOps } from "../store/store.js";
import { formatInstant, formatInstantOrNull } from "../time/format.js";
import { nextOccurrences, type Timing } from "../time/timing.js";
import { compiledFor } from "./compiled.js";
import { settingsOf } from "./stored-settings.js";

/** How many upcoming nominal occurrences a schedule read lists. */
export const NEXT_FIRE_TIMES = 5;

/**
 * The views of schedules read at `now`, each with its `last_tick` (and that execution's status) and
 * newest dead letters: a read of one schedule and a page of the list alike, in three statements.
 */
export async function scheduleViews(tx: StoreOps, rows: readonly ScheduleRow[], now: number): Promise<JsonObject[]> {
  if (rows.length === 0) return [];
  const heads = await tx.ledgerHeads(
    rows.map((r) => r.scheduleId),
    DEAD_LETTERS_SHOWN,
  );
  const started: string[] = [];
  for (const head of heads.values()) {
    if (head.lastTick?.kind === "started" && head.lastTick.executionId !== null)
      started.push(head.lastTick.executionId);
  }
  const statuses = started.length > 0 ? await tx.getExecutionStatuses(started) : undefined;
  return rows.map((row) => {
    const head = heads.get(row.scheduleId);
    return scheduleView(row, now, {
      lastTick: head?.lastTick ?? null,
      deadLetters: head?.deadLetters ?? [],
      ...(statuses ? { statuses } : {}),
    });
  });
}

/** A ledger row as the API shows it (the contract in src/domain/api-json.ts). */
export type OccurrenceView = OccurrenceJson;

/** `statuses`: the current status of the rows' executions, when the caller looked them up. */
export function occurrenceView(
  row: OccurrenceRow,
  statuses?: ReadonlyMap<string, string>,
  errorTypes?: ReadonlyMap<string, string>,
): OccurrenceView {
  const view: OccurrenceView = {
    id: row.id,
    kind: row.kind,
    occurrence: formatInstantOrNull(row.occurrenceMs),
    recorded_at: formatInstant(row.recordedMs),
  };
  if (row.executionId !== null) view.execution_id = row.executionId;
  if (row.reason !== null) view.reason = row.reason;
  if (row.count !== 1 || row.rangeFromMs !== null) view.count = row.count;
  if (row.rangeFromMs !== null) view.range_from = formatInstant(row.rangeFromMs);
  if (row.rangeToMs !== null) view.range_to = formatInstant(row.rangeToMs);
  if (row.error !== null) view.error = row.error;
  if (row.kind === "started" && row.executionId !== null) {
    const status = statuses?.get(row.executionId);
    if (status !== undefined) view.status = status;
    // A run that hit its timeout is FAILED with error type Timeout: the pictures say TIMED OUT.
    const errorType = status === "FAILED" ? errorTypes?.get(row.executionId) : undefined;
    if (errorType !== undefined) view.error_type = errorType;
  }
  return view;
}

export interface ScheduleExtras {
  lastTick: OccurrenceRow | null;
  deadLetters: OccurrenceRow[];
  /** Statuses of the executions the extras name. */
  statuses?: ReadonlyMap<string, string>;
}

/** Writes `last_outcome` and the other outcome fields into `v`, as the API shows them (docs/outcomes.md). */
function writeOutcomes(v: Record<string, unknown>, row: ScheduleRow): void {
  const o = row.outcomes ?? NO_OUTCOMES;
  const last = o.lastOutcome;
  v.last_outcome =
    last === null
      ? null
      : {
          status: last.status,
          execution_id: last.executionId,
          ended_at: formatInstant(last.endedMs),
          error: last.error,
          ...(last.errorType !== null ? { error_type: last.errorType } : {}),
          ...(last.errorStep != null ? { error_step: last.errorStep } : {}),
        };
  v.last_success_at = formatInstantOrNull(o.lastSuccessMs);
  v.last_failure_at = formatInstantOrNull(o.lastFailureMs);
  v.consecutive_failures = o.consecutiveFailures;
  v.failures = o.failures;
}

/** `last_outcome` and the other outcome fields as the API shows them (docs/outcomes.md). */
export function outcomeView(row: ScheduleRow): JsonObject {
  const v: Record<string, unknown> = {};
  writeOutcomes(v, row);
  return v as JsonObject;
}

export { settingsOf } from "./stored-settings.js";

/**
 * The upcoming times last listed for each compiled timing: schedules sharing a timing (compiled.ts
 * shares it by settings) and a next fire list the same five times, so a page of them computes and
 * formats them once. Keyed weakly by the timing, so a timing the cache drops takes its entry along.
 */
const upcomingOf = new WeakMap<object, { from: number; times: readonly string[] }>();

function upcoming(timing: Timing, from: number): string[] {
  const last = upcomingOf.get(timing);
  if (last !== undefined && last.from === from) return last.times.slice();
  const times = nextOccurrences(timing, from, NEXT_FIRE_TIMES).map(formatInstant);
  upcomingOf.set(timing, { from, times });
  return times.slice();
}

/** A setting's value from its column, where the row has one, else as stored in `spec`. */
function settingOf(row: ScheduleRow, s: ScheduleSettings, key: SettingKey): unknown {
  switch (key) {
    case "schedule_id":
      return row.scheduleId;
    case "workflow":
      return row.workflow;
    case "input": {
      const inputText = (row.spec as { input_text?: unknown }).input_text;
      return typeof inputText === "string" ? new RawJson(inputText, row.input) : row.input;
    }
    case "paused":
      return row.paused;
    case "pause_note":
      return row.pauseNote ?? undefined;
    default:
      return s[key];
  }
}

export function scheduleView(row: ScheduleRow, now: number, extras: ScheduleExtras): JsonObject {
  const s = settingsOf(row);
  const { timing } = compiledFor(row);
  // Every setting, in the settings table's order (src/domain/setting-table.ts); unset ones are left out.
  const v: Record<string, unknown> = {};
  for (const key of SETTING_KEYS) {
    const value = settingOf(row, s, key);
    if (value !== undefined) v[key] = value;
  }
  // Occurrences still to start before max_runs ends the schedule (docs/outcomes.md § Run-count limit):
  // a buffered occurrence counts from when it was buffered (it will start).
  if (s.max_runs !== undefined) v.remaining_runs = Math.max(0, s.max_runs - row.runs - row.buffered.length);
  // A paused schedule resumes with the next occurrence after now, so that is what it lists.
  const upcomingFrom = row.paused || row.nextFireMs === null ? now : row.nextFireMs - 1;
  v.next_fire_at = row.paused || row.state === "ended" ? null : formatInstantOrNull(row.dueMs);
  // No next occurrence (the timing or max_runs ended it; a buffer may still drain): none listed.
  // With max_runs, at most the runs left (it listed five that would never fire, as Temporal's future
  // action times are capped by its remaining actions).
  const times = row.state === "ended" || row.nextFireMs === null ? [] : upcoming(timing, upcomingFrom);
  v.next_fire_times = typeof v.remaining_runs === "number" ? times.slice(0, v.remaining_runs) : times;
  v.last_fire_at = formatInstantOrNull(row.lastFireMs);
  v.last_execution_id = row.lastExecutionId;
  v.fired = row.fired;
  v.skipped = row.skipped;
  v.last_error = row.lastError;
  v.created_at = formatInstant(row.createdMs);
  v.updated_at = formatInstant(row.updatedMs);
  v.state = row.state;
  v.revision = row.revision;
  writeOutcomes(v, row);
  v.last_tick = extras.lastTick === null ? null : occurrenceView(extras.lastTick, extras.statuses);
  v.dead_letters = extras.deadLetters.map((d) => occurrenceView(d));
  // Occurrences held by overlap buffer_one / buffer_all, oldest first; last, after the fields in
  // the seed's order (docs/scheduling.md § Pause and the buffer).
  v.buffered = row.buffered.map((ms) => formatInstant(Number(ms)));
  return v as JsonObject;
}
