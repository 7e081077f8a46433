/**
 * A fire batch: decide each due schedule's occurrences and apply the decisions in the caller's
 * transaction — start (or cancel the previous, buffer, skip), write the ledger, advance next_fire and
 * the counters — each row guarded by a compare-and-set on (revision, next_fire_ms). This is the only
 * firing path: one schedule's fire is a batch of one. A server that dies mid-fire leaves nothing:
 * the transaction rolls back, and the deterministic execution id makes a repeated start a no-op.
 *
 * The shape (docs/design.md § The firing transaction): for each row, read what blocks it and decide
 * purely (fire-plan.ts), then check its starts and queue them (engine/start-batch.ts); then write
 * the queued starts with one statement per table, settle each fire into its ledger rows and its row,
 * and write those with one statement each. What happened to each schedule comes back as a value.
 */

import type { ExecutionStatus } from "../domain/execution.js";
import { isActiveStatus } from "../domain/execution.js";
import type { SkipReason } from "../domain/schedule.js";
import type { Executions } from "../engine/executions.js";
import type { StartBatch } from "../engine/start-batch.js";
import type { NewOccurrence, ScheduleRow } from "../store/rows.js";
import type { DueSchedule, ScheduleAdvance, StoreOps } from "../store/store.js";
import { type CompiledSchedule, compiledFor } from "./compiled.js";
import { type Blocker, dueTime, type FirePlan } from "./decide.js";
import { dueLastActive, existingOf, lastIsActive } from "./fire-existing.js";
import {
  bufferedDeadLetter,
  type DeadLetter,
  decidesAfter,
  LEDGER_RETENTION,
  planOf,
  prunesNow,
  type Retry,
  retryDelayMs,
  type StartsDone,
  settle,
} from "./fire-plan.js";
import { queueDeadLetters } from "./outcomes.js";
import { blockerOf, cancelPreviousReason, occurrenceExecutionId, startRequestOf } from "./start-request.js";
import { settingsOf } from "./view.js";

export { LEDGER_RETENTION } from "./fire-plan.js";

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
  /** Ledger rows kept per schedule (`--ledger-retention`). Default LEDGER_RETENTION. */
  ledgerRetention?: number;
}

/** What one schedule's fire came to. */
export type FireOutcome =
  /** Nothing to decide (paused, ended, a buffer still blocked): at most the due time moved. */
  | { kind: "unchanged"; report: FireReport }
  /** Decided and advanced; `deadLetters` are occurrences that will never start, with why. */
  | { kind: "fired"; report: FireReport; deadLetters: readonly DeadLetter[] }
  /**
   * A start failed for a reason the schedule can wait out: `occurrence` stays undecided and is due
   * again `inMs` later. What was decided before it stands (`report.advanced`); a failed buffered
   * start decides nothing.
   */
  | {
      kind: "retry";
      report: FireReport;
      deadLetters: readonly DeadLetter[];
      occurrence: number;
      error: string;
      inMs: number;
    }
  /** The row changed under the fire (an update, a pause, another server): the change wins. */
  | { kind: "lost_cas"; report: FireReport };

/** Failures a schedule can wait out (429, a missing workflow, an input no longer valid). */
const RETRYABLE: ReadonlySet<string> = new Set([
  "RESOURCE_EXHAUSTED",
  "NOT_FOUND",
  "INVALID_ARGUMENT",
  "INVALID_SCHEDULE",
]);

/** One start of a fire, as far as it got. */
type Attempt = { occurrence: number; fromBuffer: boolean; executionId: string } & (
  | { kind: "queued" }
  | { kind: "exists"; scheduleId: string | null; workflow: string }
  | { kind: "failed"; error: string }
);

/** A fire being carried through the batch. */
interface Fire {
  row: ScheduleRow;
  c: CompiledSchedule;
  plan: FirePlan;
  /** The revision the compare-and-set expects (a cancel's wake-up of the row's own buffer moves it). */
  revision: number;
  attempts: Attempt[];
  retry: Retry | null;
  /**
   * A buffered start failed: nothing of the plan applies; the row waits 5 s, or, for a dead letter,
   * drops the occurrence from its buffer and is due again at once.
   */
  held: (Retry & { deadLetter?: true }) | null;
  /** A due start refused past the grace with decisions after it: the plan stands up to it (StartsDone.stopAfter). */
  stopAfter: number | null;
  /** Occurrences whose execution existed before the fire → still active (see existingOf). */
  existing: ReadonlyMap<number, boolean>;
  /** The schedule's last execution was active when the fire began (read only when `existing` is not empty). */
  lastActive: boolean;
}

/** A fire's writes and its outcome, before the compare-and-set says whether they stand. */
interface Planned {
  scheduleId: string;
  outcome: FireOutcome;
  advance: ScheduleAdvance | null;
  ledger: NewOccurrence[];
  prune: boolean;
}

/** Shared by every fire without dead letters (most of them): never written to. */
const NO_DEAD_LETTERS: readonly DeadLetter[] = Object.freeze([]);
/** Shared by every fire whose occurrences have no execution yet (most of them). */
const NO_EXISTING: ReadonlyMap<number, boolean> = new Map();

/** `list` with `item` appended; the list is made on the first item (most fires have none). */
function appended<T>(list: T[] | null, item: T): T[] {
  if (list === null) return [item];
  list.push(item);
  return list;
}

const newReport = (scheduleId: string): FireReport => ({
  scheduleId,
  started: 0,
  skipped: {},
  lagsMs: [],
  advanced: false,
  retryError: null,
});

const hasKey = (row: ScheduleRow): boolean =>
  row.concurrencyKey !== null || settingsOf(row).concurrency_key !== undefined;

/**
 * Fires the due `rows` (read inside `tx`, locked on PostgreSQL) at `now`, in order; returns one
 * outcome per row, in the order of `rows`. When any outcome is `lost_cas`, the starts of that fire
 * are written but its row is not: the caller must roll the transaction back.
 */
export async function fireSchedules(
  tx: StoreOps,
  rows: readonly (ScheduleRow | DueSchedule)[],
  now: number,
  deps: FireDeps,
): Promise<FireOutcome[]> {
  const batch = deps.executions.startBatch(tx);
  // What blocks the schedules without a concurrency key: their last executions' statuses, read with
  // the due rows (DueSchedule), else in one read here.
  const firing = (r: ScheduleRow): boolean => !r.paused && r.state === "active";
  const unread = rows.filter((r) => !("lastStatus" in r) && firing(r) && r.lastExecutionId !== null && !hasKey(r));
  const statuses = await tx.getExecutionStatuses(unread.map((r) => r.lastExecutionId as string));
  // The executions cancel_previous may cancel, and their tasks, locked up front in id order, the
  // order a heartbeat and a batched complete take them in (lockExecutionsAndTasks).
  const replaced = rows
    .filter((r) => firing(r) && settingsOf(r).overlap === "cancel_previous" && r.lastExecutionId !== null)
    .filter((r) => {
      const status = "lastStatus" in r ? r.lastStatus : statuses.get(r.lastExecutionId as string);
      return status == null || isActiveStatus(status);
    })
    .map((r) => r.lastExecutionId as string);
  if (replaced.length > 1) await tx.lockExecutionsAndTasks([...new Set(replaced)].sort());
  const outcomes: FireOutcome[] = [];
  let decided: Array<Fire | ScheduleRow> = [];
  // A cancel's execution-ended hook reads and wakes schedule rows (a buffer waiting on the
  // cancelled execution): the fires decided before it are written first, as if fired one by one.
  const applyDecided = async (): Promise<void> => {
    outcomes.push(...(await apply(tx, decided, batch, now, deps)));
    decided = [];
  };
  for (const row of rows) {
    // Not `decided.push(await …)`: startsOf may apply (and replace) `decided` before it returns.
    const fire = firing(row) ? await startsOf(tx, row, now, deps, batch, statuses, applyDecided) : row;
    decided.push(fire);
  }
  await applyDecided();
  return outcomes;
}

/** Writes the queued starts, then each fire's row under its compare-and-set and its ledger rows. */
async function apply(
  tx: StoreOps,
  fires: ReadonlyArray<Fire | ScheduleRow>,
  batch: StartBatch,
  now: number,
  deps: FireDeps,
): Promise<FireOutcome[]> {
  await batch.flush();
  const planned = fires.map((f) => ("plan" in f ? writesOf(f, batch, now, deps.graceMs) : unchanged(f)));
  const advances: ScheduleAdvance[] = [];
  for (const p of planned) if (p.advance !== null) advances.push(p.advance);
  const matched = new Set(advances.length === 0 ? [] : await tx.advanceSchedules(advances));
  const outcomes = planned.map(
    (p): FireOutcome =>
      p.advance === null || matched.has(p.scheduleId)
        ? p.outcome
        : { kind: "lost_cas", report: newReport(p.scheduleId) },
  );
  if (outcomes.some((o) => o.kind === "lost_cas")) return outcomes;
  const ledger: NewOccurrence[] = [];
  for (const p of planned) for (const e of p.ledger) ledger.push(e);
  await tx.appendOccurrences(ledger);
  await queueDeadLetters(
    tx,
    fires.map((f) => ("plan" in f ? f.row : f)),
    ledger,
    now,
  );
  const prune: string[] = [];
  for (const p of planned) if (p.prune) prune.push(p.scheduleId);
  await tx.pruneOccurrencesOf(prune, deps.ledgerRetention ?? LEDGER_RETENTION);
  return outcomes;
}

/** Decides `row` and checks and queues its starts, in the plan's order. */
async function startsOf(
  tx: StoreOps,
  row: ScheduleRow,
  now: number,
  deps: FireDeps,
  batch: StartBatch,
  statuses: ReadonlyMap<string, ExecutionStatus>,
  beforeCancel: () => Promise<void>,
): Promise<Fire> {
  const s = settingsOf(row);
  const c = compiledFor(row);
  // Without a concurrency key, the blocker is in `statuses` (no await: this runs once per fire).
  const blocker = hasKey(row) ? await keyedBlocker(tx, row, batch) : scheduleBlocker(row, statuses);
  let plan = planOf(row, s, c, blocker, now, deps.graceMs);
  // Each plan with what it found may decide occurrences the one before did not (max_runs ended it
  // early, or a missed range held them): looked up until a plan asks about nothing new.
  let existing = NO_EXISTING;
  const asked = new Set<number>();
  for (;;) {
    const found = await existingOf(tx, row, c, s.overlap, s.max_runs !== undefined, blocker, plan, asked);
    if (found === null || found.size === 0) break;
    existing = new Map([...existing, ...found]);
    plan = planOf(row, s, c, blocker, now, deps.graceMs, existing);
  }
  const fire: Fire = {
    row,
    c,
    plan,
    revision: row.revision,
    attempts: [],
    retry: null,
    held: null,
    stopAfter: null,
    existing,
    // What a fire starts itself always becomes the last; a backfill's running run only where the
    // last does not run (a start can meet one unread under allow: the model's seed 1076507983).
    lastActive:
      hasKey(row) || existing.size === 0
        ? (dueLastActive(row) ?? (await lastIsActive(tx, row)))
        : blocker === "schedule",
  };
  for (const start of fire.plan.starts) {
    if (start.cancelBefore) {
      // The execution to cancel may be one this fire just queued: write it (and the fires before).
      await beforeCancel();
      await cancelPrevious(tx, fire, batch, now, deps);
    }
    const executionId = occurrenceExecutionId(row.scheduleId, start.occurrence);
    const request = startRequestOf(row, s, c, { type: c.kind, executionId, scheduledFor: start.occurrence, now });
    const attempt = await batch.add(request);
    const { occurrence, fromBuffer } = start;
    if (attempt.kind === "queued") fire.attempts.push({ occurrence, fromBuffer, executionId, kind: "queued" });
    else if (attempt.kind === "exists") {
      const { scheduleId, workflow } = attempt.execution;
      fire.attempts.push({ occurrence, fromBuffer, executionId, kind: "exists", scheduleId, workflow });
    } else {
      const { error } = attempt;
      if (!RETRYABLE.has(error.code)) throw error;
      const graceLeftMs = dueTime(row.scheduleId, start.occurrence, c.jitterMs) + deps.graceMs - now;
      const late = graceLeftMs < 0;
      const retry = { occurrence: start.occurrence, at: now + retryDelayMs(graceLeftMs), error: error.message };
      if (start.fromBuffer) {
        // A buffered one stays buffered and nothing of the fire is kept, retried in 5 s: while the
        // server is full (it waits for room as it waited for its blocker), or inside the grace. A
        // start refused for itself (its input, its workflow) past the grace is a dead letter: it
        // leaves the buffer and the row is due again at once, so what comes after it is decided
        // against what really runs. (Retried every 5 s whatever its age, a start the workflow
        // refuses for good held the buffer, and every occurrence after it, undecided forever.)
        fire.held = late && error.code !== "RESOURCE_EXHAUSTED" ? { ...retry, deadLetter: true } : retry;
        break;
      }
      if (!late) {
        fire.retry = retry; // a due one stays undecided
        break;
      }
      // Refused past the grace: the occurrence is a dead letter. What the plan decided after it
      // assumed it would run (skipped for overlap, buffered behind it): the fire stops here and
      // the row is due again at once, so the rest is decided against what really runs.
      fire.attempts.push({ occurrence, fromBuffer, executionId, kind: "failed", error: error.message });
      if (decidesAfter(fire.plan, occurrence)) {
        fire.stopAfter = occurrence;
        break;
      }
    }
  }
  return fire;
}

/** What blocks a start of `row` (with a concurrency key) now (docs/design.md § Overlap). */
async function keyedBlocker(tx: StoreOps, row: ScheduleRow, batch: StartBatch): Promise<Blocker> {
  // Another fire of this batch may have queued a start holding the key: write it first.
  await batch.flush();
  return blockerOf(tx, row, settingsOf(row));
}

/** Whether the schedule's last execution is active. */
/** What blocks a start of `row` (without a concurrency key): its last execution, if still active. */
function scheduleBlocker(row: ScheduleRow | DueSchedule, statuses: ReadonlyMap<string, ExecutionStatus>): Blocker {
  if (row.lastExecutionId === null) return "none";
  const status = "lastStatus" in row ? row.lastStatus : statuses.get(row.lastExecutionId);
  return status != null && isActiveStatus(status) ? "schedule" : "none";
}

/**
 * cancel_previous: cancels the schedule's last execution, and the runs of a backfill this fire
 * found still running beside it (written: the batch was applied so far).
 */
async function cancelPrevious(tx: StoreOps, fire: Fire, batch: StartBatch, now: number, deps: FireDeps): Promise<void> {
  const id = fire.row.scheduleId;
  const { lastExecutionId, alsoRunning } = startsDone(fire, batch, now, deps.graceMs);
  const previous = lastExecutionId === null ? alsoRunning : [lastExecutionId, ...alsoRunning];
  if (previous.length === 0) return;
  for (const executionId of previous)
    await deps.executions.cancel(executionId, { reason: cancelPreviousReason(id) }, tx);
  // The cancel's execution-ended hook may have woken this row's own buffer (moving its revision):
  // that is this fire's own doing, not a concurrent change; the row stays locked.
  fire.revision = (await tx.getSchedule(id))?.revision ?? fire.revision;
  batch.recount();
}

/**
 * What the fire's starts came to (the queued ones as far as the batch has written them), with the
 * runs of a backfill it found still running that did not become the schedule's last execution
 * (`alsoRunning`: cancel_previous replaces them too).
 */
function startsDone(
  fire: Fire,
  batch: StartBatch,
  now: number,
  graceMs: number,
): StartsDone & { lagsMs: number[]; alsoRunning: string[] } {
  const { row, c } = fire;
  const started = new Map<number, string>();
  let deadLetters: DeadLetter[] | null = null;
  const lagsMs: number[] = [];
  let created = 0;
  let lastExecutionId = row.lastExecutionId;
  let lastActive = fire.lastActive;
  const alsoRunning: string[] = [];
  for (const a of fire.attempts) {
    let owner: string | null = row.scheduleId;
    let workflow = row.workflow;
    /** This fire made the execution (not a backfill before it): only then is its lag a fire's. */
    let made = false;
    /** A backfill made it and it has ended (read by the plan, or met by this fire's insert). */
    let ended = fire.existing.get(a.occurrence) === false;
    if (a.kind === "failed") {
      deadLetters = appended(deadLetters, { occurrence: a.occurrence, error: a.error });
      continue;
    }
    if (a.kind === "exists") ({ scheduleId: owner, workflow } = a);
    else {
      const result = batch.result(a.executionId);
      if (result === undefined) continue; // not written yet
      if (result.created) {
        created++;
        made = true;
      } else {
        ({ scheduleId: owner, workflow } = result.execution);
        ended ||= !isActiveStatus(result.execution.status);
      }
    }
    if (owner !== row.scheduleId) {
      // The id was taken by someone else's execution (docs/security.md): the occurrence did not
      // run, so it is a dead letter rather than a start that never happened.
      const error = `execution id ${a.executionId} is taken by an execution of workflow ${workflow} that this schedule did not start; the occurrence was not started`;
      deadLetters = appended(deadLetters, { occurrence: a.occurrence, error });
      continue;
    }
    started.set(a.occurrence, a.executionId);
    // A backfill's run that has ended is accounted, but is not the schedule's last execution: the
    // next fire would read "nothing runs" beside a start of this fire still running. One still
    // running becomes the last only where no run of the schedule is active: taking the place of
    // one that runs, it let the next fire start beside it once the backfill's run ended (two
    // RUNNING under skip and buffer_*, docs/scheduling.md § Backfill).
    if (!ended) {
      if (made || !lastActive) {
        lastExecutionId = a.executionId;
        lastActive = true;
      } else alsoRunning.push(a.executionId);
    }
    const lag = now - dueTime(row.scheduleId, a.occurrence, c.jitterMs);
    if (made && !a.fromBuffer && lag <= graceMs) lagsMs.push(lag);
  }
  return {
    started,
    created,
    lastExecutionId,
    deadLetters: deadLetters ?? NO_DEAD_LETTERS,
    retry: fire.retry,
    stopAfter: fire.stopAfter,
    lagsMs,
    alsoRunning,
  };
}

/** A row that is not firing (paused, ended): nothing to write. */
function unchanged(row: ScheduleRow): Planned {
  const outcome: FireOutcome = { kind: "unchanged", report: newReport(row.scheduleId) };
  return { scheduleId: row.scheduleId, outcome, advance: null, ledger: [], prune: false };
}

/** The fire's plan of writes: its row under the compare-and-set, its ledger rows, and its outcome. */
function writesOf(fire: Fire, batch: StartBatch, now: number, graceMs: number): Planned {
  const { row, c, plan } = fire;
  const id = row.scheduleId;
  const cas = { expectedRevision: fire.revision, expectedNextFireMs: row.nextFireMs };
  const report = newReport(id);
  const held = fire.held;
  if (held?.deadLetter) {
    const dead = bufferedDeadLetter(row, held, now);
    const outcome: FireOutcome = {
      kind: "fired",
      report: { ...report, skipped: { missed: 1 }, advanced: true },
      deadLetters: [{ occurrence: held.occurrence, error: held.error }],
    };
    return {
      scheduleId: id,
      outcome,
      advance: { row: dead.row, ...cas },
      ledger: dead.ledger,
      prune: prunesNow(row, dead.row),
    };
  }
  if (held !== null) {
    // Keep the occurrence, show the error, try again at held.at.
    const advance = { row: { ...row, dueMs: held.at, retryMs: held.at, lastError: held.error }, ...cas };
    return { scheduleId: id, outcome: retried(report, NO_DEAD_LETTERS, held, now), advance, ledger: [], prune: false };
  }
  if (!plan.advanced && plan.starts.length === 0) {
    // Nothing to decide (a woken buffer whose blocker still runs, a retry of nothing): the row must
    // still stop being due now, or the loop would find it due again at once, forever.
    const due = row.nextFireMs === null ? null : dueTime(id, row.nextFireMs, c.jitterMs);
    const moves = row.dueMs !== null && row.dueMs <= now && due !== row.dueMs;
    const advance = moves ? { row: { ...row, dueMs: due, retryMs: null }, ...cas } : null;
    return { scheduleId: id, outcome: { kind: "unchanged", report }, advance, ledger: [], prune: false };
  }
  const done = startsDone(fire, batch, now, graceMs);
  const settled = settle({ row, c, plan, now, done });
  report.started = done.created;
  report.skipped = settled.skipped;
  report.lagsMs = done.lagsMs;
  report.advanced = true;
  report.retryError = done.retry?.error ?? null;
  // Every dead letter the fire writes, also a retried occurrence that catch-up left behind.
  let deadLetters: DeadLetter[] | null = null;
  for (const e of settled.ledger) {
    if (e.kind === "dead_letter" && e.occurrenceMs != null)
      deadLetters = appended(deadLetters, { occurrence: e.occurrenceMs, error: e.error ?? "" });
  }
  const dead = deadLetters ?? NO_DEAD_LETTERS;
  const outcome: FireOutcome =
    done.retry === null ? { kind: "fired", report, deadLetters: dead } : retried(report, dead, done.retry, now);
  const prune = prunesNow(row, settled.row);
  return { scheduleId: id, outcome, advance: { row: settled.row, ...cas }, ledger: settled.ledger, prune };
}

/** The outcome of a fire whose start of `r.occurrence` failed and is tried again at `r.at`. */
function retried(report: FireReport, deadLetters: readonly DeadLetter[], r: Retry, now: number): FireOutcome {
  return { kind: "retry", report, deadLetters, occurrence: r.occurrence, error: r.error, inMs: r.at - now };
}
