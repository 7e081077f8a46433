/**
 * A fire: decide a schedule's due occurrences and apply the decision in the caller's transaction —
 * start (or cancel the previous, buffer, skip), write the ledger, advance next_fire and the counters
 * — guarded by a compare-and-set on (revision, next_fire_ms). A server that dies mid-fire leaves
 * nothing: the transaction rolls back, and the deterministic execution id makes a repeated start a
 * no-op.
 */
import { OrbitError } from "../domain/errors.js";
import { isActiveStatus } from "../domain/execution.js";
import type { ScheduleSettings, SkipReason } from "../domain/schedule.js";
import type { Executions, PreparedStart } from "../engine/executions.js";
import type { NewOccurrence, ScheduleRow } from "../store/rows.js";
import type { ScheduleAdvance, StoreOps } from "../store/store.js";
import { type CompiledSchedule, compiledFor } from "./compiled.js";
import { type Blocker, decide, dueTime, type FirePlan, type LedgerEntry, startsLeft } from "./decide.js";
import { queueDeadLetters } from "./outcomes.js";
import { blockerOf, cancelPreviousReason, occurrenceExecutionId, triggerOf } from "./start-request.js";
import { settingsOf } from "./view.js";

/** How long a failed start waits before its occurrence is tried again (docs/design.md § The firing transaction). */
export const RETRY_DELAY_MS = 5000;
/** Ledger rows kept per schedule (docs/design.md § The model). */
export const LEDGER_RETENTION = 1000;

export interface FireReport {
  scheduleId: string;
  started: number;
  skipped: Partial<Record<SkipReason, number>>;
  /** Fire time minus due time of the occurrences started on time, in ms. */
  lagsMs: number[];
  /** The fire changed the schedule row (false: nothing was due, or the CAS lost). */
  advanced: boolean;
  /** A start failed and the occurrence will be retried. */
  retryError: string | null;
}

export interface FireDeps {
  executions: Executions;
  graceMs: number;
}

/** A start that failed for a reason the schedule can wait out (429, missing workflow, invalid input). */
class StartFailed extends Error {
  constructor(
    readonly occurrence: number,
    readonly error: OrbitError,
  ) {
    super(error.message);
  }
}

const RETRYABLE: ReadonlySet<string> = new Set([
  "RESOURCE_EXHAUSTED",
  "NOT_FOUND",
  "INVALID_ARGUMENT",
  "INVALID_SCHEDULE",
]);

const bufferedOf = (row: ScheduleRow): number[] => row.buffered.filter((v): v is number => typeof v === "number");

/** The decision for `row` (active, unpaused) at `now` given what blocks it: pure. */
function planOf(
  row: ScheduleRow,
  s: ScheduleSettings,
  c: CompiledSchedule,
  blocker: Blocker,
  now: number,
  graceMs: number,
): FirePlan {
  const buffered = bufferedOf(row);
  return row.nextFireMs === null
    ? drainOnly(buffered, blocker)
    : decide({
        scheduleId: row.scheduleId,
        timing: c.timing,
        overlap: s.overlap,
        catchup: s.catchup,
        maxCatchUp: s.max_catch_up ?? null,
        catchupWindowMs: c.catchupWindowMs,
        jitterMs: c.jitterMs,
        nextFireMs: row.nextFireMs,
        now,
        graceMs,
        buffered,
        blocker,
        maxStarts: startsLeft(s.max_runs, row.runs, buffered.length),
      });
}

const newReport = (scheduleId: string): FireReport => ({
  scheduleId,
  started: 0,
  skipped: {},
  lagsMs: [],
  advanced: false,
  retryError: null,
});

/**
 * What a fire writes once its starts are done: the ledger rows (after `ledger`, which holds the
 * dead letters of failed starts) and the schedule row as it leaves it; fills `report.skipped`.
 */
function settle(
  row: ScheduleRow,
  c: CompiledSchedule,
  plan: FirePlan,
  now: number,
  report: FireReport,
  started: ReadonlyMap<number, string>,
  lastExecutionId: string | null,
  ledger: NewOccurrence[],
  deadLetters: number,
  retry: Retry | null = null,
): ScheduleRow {
  const base = { scheduleId: row.scheduleId, recordedMs: now };
  // A retried occurrence that catch-up now leaves behind is a dead letter (docs/design.md § The
  // firing transaction, docs/scheduling.md), and only that: the missed row that would cover it
  // starts after it. With a buffer, the failed start was the buffer's (it goes first), not this one.
  const retried = row.retryMs !== null && row.lastError !== null && row.buffered.length === 0 ? row.nextFireMs : null;
  let entries = plan.ledger;
  if (retried !== null && !started.has(retried) && retry?.occurrence !== retried) {
    const i = entries.findIndex((e) => e.kind === "missed" && e.from === retried);
    if (i >= 0) {
      ledger.push({ ...base, kind: "dead_letter", occurrenceMs: retried, error: row.lastError as string });
      const m = entries[i] as Extract<LedgerEntry, { kind: "missed" }>;
      const rest: LedgerEntry[] =
        m.count > 1 ? [{ ...m, count: m.count - 1, from: c.timing.nextAfter(retried) as number }] : [];
      entries = [...entries.slice(0, i), ...rest, ...entries.slice(i + 1)];
    }
  }
  const skipped: Partial<Record<SkipReason, number>> = {};
  for (const entry of entries) {
    switch (entry.kind) {
      case "started": {
        const executionId = started.get(entry.occurrence);
        if (executionId !== undefined) {
          ledger.push({ ...base, kind: "started", occurrenceMs: entry.occurrence, executionId });
        }
        break;
      }
      case "skipped":
        ledger.push({ ...base, kind: "skipped", occurrenceMs: entry.occurrence, reason: entry.reason });
        skipped[entry.reason] = (skipped[entry.reason] ?? 0) + 1;
        break;
      case "missed":
        ledger.push({
          ...base,
          kind: "skipped",
          reason: "missed",
          occurrenceMs: entry.count === 1 ? entry.from : null,
          rangeFromMs: entry.from,
          rangeToMs: entry.to,
          count: entry.count,
        });
        skipped.missed = (skipped.missed ?? 0) + entry.count;
        break;
      case "buffered":
        ledger.push({ ...base, kind: "buffered", occurrenceMs: entry.occurrence });
        break;
    }
  }
  if (deadLetters > 0) skipped.missed = (skipped.missed ?? 0) + deadLetters;
  report.skipped = skipped;
  const nextFireMs = plan.nextFireMs;
  const ended = nextFireMs === null && plan.buffered.length === 0;
  if (retry !== null) report.retryError = retry.error;
  return {
    ...row,
    state: ended ? "ended" : "active",
    nextFireMs,
    dueMs: retry !== null ? retry.at : nextFireMs === null ? null : dueTime(row.scheduleId, nextFireMs, c.jitterMs),
    retryMs: retry?.at ?? null,
    fired: row.fired + report.started,
    // max_runs counts every occurrence the timing decided to start, dead letters included (docs/outcomes.md).
    runs: row.runs + plan.starts.length,
    skipped: row.skipped + plan.skipped + deadLetters,
    lastFireMs: started.size > 0 ? now : row.lastFireMs,
    lastExecutionId,
    lastError: retry !== null ? retry.error : started.size > 0 || deadLetters === 0 ? null : row.lastError,
    buffered: plan.buffered,
  };
}

/** A start that failed inside the grace: that occurrence is tried again at `at`. */
interface Retry {
  occurrence: number;
  at: number;
  error: string;
}

/**
 * The part of `plan` decided before `occurrence` (a start that failed inside the grace): what came
 * before it stands (its starts are done), it and everything after it stay undecided, so a blocked
 * start on a short interval never holds back the decisions about older occurrences.
 */
function planBefore(plan: FirePlan, occurrence: number, buffered: readonly number[]): FirePlan {
  const ledger = plan.ledger.filter((e) => (e.kind === "missed" ? e.to : e.occurrence) < occurrence);
  let skipped = 0;
  for (const e of ledger) skipped += e.kind === "missed" ? e.count : e.kind === "skipped" ? 1 : 0;
  const drained = plan.starts.some((s) => s.fromBuffer);
  const kept = (drained ? buffered.slice(1) : [...buffered]).concat(
    ledger.filter((e) => e.kind === "buffered").map((e) => (e as { occurrence: number }).occurrence),
  );
  return {
    starts: plan.starts.filter((s) => s.occurrence < occurrence),
    ledger,
    buffered: kept,
    skipped,
    nextFireMs: occurrence,
    advanced: true,
  };
}

/** Every 64th fire, not the first: a schedule's first fire has (almost) no ledger to prune. */
const prunesNow = (row: ScheduleRow): boolean => {
  const decided = row.fired + row.skipped;
  return decided > 0 && decided % 64 === 0;
};

/**
 * Fires `row` (read inside `tx`, locked on PostgreSQL) at `now`. Throws when the CAS loses (the
 * caller rolls back). A start failure inside the grace rolls back too: the caller then records the
 * retry with {@link recordRetry}.
 */
export async function fireSchedule(tx: StoreOps, row: ScheduleRow, now: number, deps: FireDeps): Promise<FireReport> {
  const s = settingsOf(row);
  const c = compiledFor(row);
  const report = newReport(row.scheduleId);
  if (row.paused || row.state !== "active") return report;
  const blocker = await blockerOf(tx, row, s);
  const plan = planOf(row, s, c, blocker, now, deps.graceMs);
  if (!plan.advanced && plan.starts.length === 0) {
    // Nothing to decide (a woken buffer whose blocker still runs, a retry of nothing): the row must
    // still stop being due now, or the loop would find it due again at once, forever.
    const due = row.nextFireMs === null ? null : dueTime(row.scheduleId, row.nextFireMs, c.jitterMs);
    if (row.dueMs !== null && row.dueMs <= now && due !== row.dueMs) {
      const updated = await tx.updateSchedule(
        { ...row, dueMs: due, retryMs: null },
        { expectedRevision: row.revision, expectedNextFireMs: row.nextFireMs },
      );
      if (updated === null) throw new ConcurrentChange(row.scheduleId);
    }
    return report;
  }

  const ledger: NewOccurrence[] = [];
  const base = { scheduleId: row.scheduleId, recordedMs: now };
  let lastExecutionId = row.lastExecutionId;
  let deadLetters = 0;
  let retry: Retry | null = null;
  let revision = row.revision;
  const started = new Map<number, string>();
  for (const start of plan.starts) {
    if (start.cancelBefore && lastExecutionId !== null) {
      await deps.executions.cancel(lastExecutionId, { reason: cancelPreviousReason(row.scheduleId) }, tx);
      // The cancel's execution-ended hook may have woken this row's own buffer (moving its
      // revision): that is this fire's own doing, not a concurrent change; the row stays locked.
      revision = (await tx.getSchedule(row.scheduleId))?.revision ?? revision;
    }
    const executionId = occurrenceExecutionId(row.scheduleId, start.occurrence);
    try {
      const result = await deps.executions.start(
        {
          execution_id: executionId,
          workflow: row.workflow,
          version: row.version,
          input: row.input,
          schedule_id: row.scheduleId,
          concurrency_key: s.concurrency_key ?? null,
          timeouts: { run_timeout: s.run_timeout, start_timeout: s.start_timeout },
          trigger: triggerOf(row, s, c, c.kind, executionId, start.occurrence, now),
        },
        tx,
      );
      if (!result.created && result.execution.scheduleId !== row.scheduleId) {
        // The id was taken by someone else's execution (docs/security.md): the occurrence did not
        // run, so it is a dead letter rather than a start that never happened.
        const other = result.execution.workflow;
        const error = `execution id ${executionId} is taken by an execution of workflow ${other} that this schedule did not start; the occurrence was not started`;
        ledger.push({ ...base, kind: "dead_letter", occurrenceMs: start.occurrence, error });
        deadLetters++;
        continue;
      }
      if (result.created) report.started++;
      started.set(start.occurrence, executionId);
      lastExecutionId = executionId;
      const lag = now - dueTime(row.scheduleId, start.occurrence, c.jitterMs);
      if (!start.fromBuffer && lag <= deps.graceMs) report.lagsMs.push(lag);
    } catch (err) {
      if (!(err instanceof OrbitError) || !RETRYABLE.has(err.code)) throw err;
      const late = now - dueTime(row.scheduleId, start.occurrence, c.jitterMs);
      if (start.fromBuffer) throw new StartFailed(start.occurrence, err);
      if (late <= deps.graceMs) {
        retry = { occurrence: start.occurrence, at: now + RETRY_DELAY_MS, error: err.message };
        break;
      }
      // Blocked past the grace: the occurrence is a dead letter, the rest of the fire goes on.
      ledger.push({ ...base, kind: "dead_letter", occurrenceMs: start.occurrence, error: err.message });
      deadLetters++;
    }
  }
  const decided = retry === null ? plan : planBefore(plan, retry.occurrence, bufferedOf(row));
  const next = settle(row, c, decided, now, report, started, lastExecutionId, ledger, deadLetters, retry);
  const updated = await tx.updateSchedule(next, {
    expectedRevision: revision,
    expectedNextFireMs: row.nextFireMs,
  });
  if (updated === null) throw new ConcurrentChange(row.scheduleId);
  for (const entry of ledger) await tx.appendOccurrence(entry);
  await queueDeadLetters(tx, [row], ledger, now);
  if (prunesNow(row)) await tx.pruneOccurrences(row.scheduleId, LEDGER_RETENTION);
  report.advanced = true;
  return report;
}

/** A fire of the batched path: decided, its starts checked, nothing written yet. */
interface PendingFire {
  index: number;
  row: ScheduleRow;
  c: CompiledSchedule;
  plan: FirePlan;
  starts: PreparedStart[];
}

/**
 * Fires the due `rows` (read inside `tx`, locked on PostgreSQL) at `now`, with the same outcome as
 * {@link fireSchedule} on each in turn, and the same reports (in the order of `rows`), but with the
 * writes of the plain fires batched: one statement per table for the whole batch on PostgreSQL.
 *
 * A fire is plain when its schedule has no concurrency key, cancels no previous execution, and
 * every start it decides would simply create (the workflow resolves, the input validates).
 * Everything else goes through fireSchedule, first. Then the plain fires' starts are written at
 * once (when admission refuses any of them, they too go through fireSchedule), their ledger rows,
 * and their schedule rows under the same compare-and-set. An existing execution id or a lost CAS
 * throws, like fireSchedule's lost CAS: the caller rolls the batch back and fires one by one.
 */
export async function fireSchedules(
  tx: StoreOps,
  rows: readonly ScheduleRow[],
  now: number,
  deps: FireDeps,
): Promise<FireReport[]> {
  const reports: FireReport[] = new Array(rows.length);
  const plain = (row: ScheduleRow): boolean =>
    !row.paused &&
    row.state === "active" &&
    row.concurrencyKey === null &&
    settingsOf(row).concurrency_key === undefined;
  // What blocks the plain candidates: their previous executions' statuses, in one read.
  const previous = rows.filter((r) => plain(r) && r.lastExecutionId !== null).map((r) => r.lastExecutionId as string);
  const statuses = await tx.getExecutionStatuses(previous);

  const pending: PendingFire[] = [];
  for (const [index, row] of rows.entries()) {
    if (!plain(row)) {
      reports[index] = await fireSchedule(tx, row, now, deps);
      continue;
    }
    const s = settingsOf(row);
    const c = compiledFor(row);
    const last = row.lastExecutionId === null ? undefined : statuses.get(row.lastExecutionId);
    const blocker: Blocker = last !== undefined && isActiveStatus(last) ? "schedule" : "none";
    const plan = planOf(row, s, c, blocker, now, deps.graceMs);
    if (!plan.advanced && plan.starts.length === 0) {
      // Nothing to decide: fireSchedule moves due_ms off "now" (a woken buffer still blocked).
      reports[index] = await fireSchedule(tx, row, now, deps);
      continue;
    }
    let starts: PreparedStart[] | null = [];
    for (const start of plan.starts) {
      if (start.cancelBefore) {
        starts = null;
        break;
      }
      const executionId = occurrenceExecutionId(row.scheduleId, start.occurrence);
      const prepared = await deps.executions.prepareStart(
        {
          execution_id: executionId,
          workflow: row.workflow,
          version: row.version,
          input: row.input,
          schedule_id: row.scheduleId,
          concurrency_key: null,
          timeouts: { run_timeout: s.run_timeout, start_timeout: s.start_timeout },
          trigger: triggerOf(row, s, c, c.kind, executionId, start.occurrence, now),
        },
        tx,
      );
      if (prepared === null) {
        starts = null;
        break;
      }
      starts.push(prepared);
    }
    if (starts === null) reports[index] = await fireSchedule(tx, row, now, deps);
    else pending.push({ index, row, c, plan, starts });
  }
  if (pending.length === 0) return reports;

  const admitted = await deps.executions.startPrepared(
    pending.flatMap((p) => p.starts),
    tx,
  );
  if (!admitted) {
    // Admission refuses some: one by one, as ever (the first refused start fails its fire).
    for (const p of pending) reports[p.index] = await fireSchedule(tx, p.row, now, deps);
    return reports;
  }
  const advances: ScheduleAdvance[] = [];
  const ledger: NewOccurrence[] = [];
  for (const { index, row, c, plan, starts } of pending) {
    const report = newReport(row.scheduleId);
    const started = new Map<number, string>();
    let lastExecutionId = row.lastExecutionId;
    for (const [k, start] of plan.starts.entries()) {
      const executionId = (starts[k] as PreparedStart).executionId;
      report.started++;
      started.set(start.occurrence, executionId);
      lastExecutionId = executionId;
      const lag = now - dueTime(row.scheduleId, start.occurrence, c.jitterMs);
      if (!start.fromBuffer && lag <= deps.graceMs) report.lagsMs.push(lag);
    }
    const next = settle(row, c, plan, now, report, started, lastExecutionId, ledger, 0);
    advances.push({ row: next, expectedRevision: row.revision, expectedNextFireMs: row.nextFireMs });
    report.advanced = true;
    reports[index] = report;
  }
  const matched = new Set(await tx.advanceSchedules(advances));
  const lost = pending.find((p) => !matched.has(p.row.scheduleId));
  if (lost !== undefined) throw new ConcurrentChange(lost.row.scheduleId);
  await tx.appendOccurrences(ledger);
  await queueDeadLetters(
    tx,
    pending.map((p) => p.row),
    ledger,
    now,
  );
  for (const p of pending) if (prunesNow(p.row)) await tx.pruneOccurrences(p.row.scheduleId, LEDGER_RETENTION);
  return reports;
}

/** A schedule whose timing ended still starts what it buffered, one at a time. */
function drainOnly(buffered: number[], blocker: Blocker): FirePlan {
  const plan: FirePlan = { starts: [], ledger: [], buffered, skipped: 0, nextFireMs: null, advanced: false };
  if (blocker === "none" && buffered.length > 0) {
    const occurrence = buffered[0] as number;
    plan.starts.push({ occurrence, cancelBefore: false, fromBuffer: true });
    plan.ledger.push({ kind: "started", occurrence, buffered: true });
    plan.buffered = buffered.slice(1);
  }
  return plan;
}

/** The schedule row changed under a fire (an update, a pause, another server): the change wins. */
export class ConcurrentChange extends Error {
  constructor(readonly scheduleId: string) {
    super(`schedule ${scheduleId} changed while it was firing; the change wins`);
  }
}

export function isStartFailed(err: unknown): err is StartFailed {
  return err instanceof StartFailed;
}

/**
 * After a start failed inside the grace: keep the occurrence, show the error, try again in 5 s.
 * Runs in its own transaction, after the fire's was rolled back.
 */
export async function recordRetry(tx: StoreOps, scheduleId: string, error: string, now: number): Promise<boolean> {
  const row = await tx.getSchedule(scheduleId, { forUpdate: true });
  if (row === null || row.state !== "active" || row.paused) return false;
  const retryMs = now + RETRY_DELAY_MS;
  const updated = await tx.updateSchedule(
    { ...row, dueMs: retryMs, retryMs, lastError: error },
    { expectedRevision: row.revision, expectedNextFireMs: row.nextFireMs },
  );
  return updated !== null;
}
