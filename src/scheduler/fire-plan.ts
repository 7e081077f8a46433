/**
 * The pure half of a fire (docs/design.md § The firing transaction): the decision for a schedule
 * row (`planOf`), and, once its starts are done, what the fire writes (`settle`): the ledger rows and
 * the row as the fire leaves it. Nothing here reads the store or the clock.
 */
import type { OverlapPolicy, ScheduleSettings, SkipReason } from "../domain/schedule.js";
import type { NewOccurrence, ScheduleRow } from "../store/rows.js";
import type { CompiledSchedule } from "./compiled.js";
import { type Blocker, decide, dueTime, type FirePlan, type LedgerEntry, startBuffered, startsLeft } from "./decide.js";

/** How long a failed start waits before its occurrence is tried again (docs/design.md § The firing transaction). */
export const RETRY_DELAY_MS = 5000;
/** The soonest a failed start is tried again. */
const MIN_RETRY_DELAY_MS = 250;

/**
 * When a failed start with `graceLeftMs` of its grace left is tried again: in 5 s, or at the end of
 * the grace when that comes sooner. With a grace under 5 s the retry always came past the grace,
 * and a 429 made a dead letter without a second try.
 */
export function retryDelayMs(graceLeftMs: number): number {
  if (graceLeftMs < 0) return RETRY_DELAY_MS;
  return Math.max(MIN_RETRY_DELAY_MS, Math.min(RETRY_DELAY_MS, graceLeftMs));
}
/** Ledger rows kept per schedule (docs/design.md § The model). */
export const LEDGER_RETENTION = 1000;

/** A start that failed inside the grace: that occurrence is tried again at `at`. */
export interface Retry {
  occurrence: number;
  at: number;
  error: string;
}

/** An occurrence that will not start, and why (docs/design.md § Every occurrence accounted for). */
export interface DeadLetter {
  occurrence: number;
  error: string;
}

/** What a fire's starts came to, in the order of the plan's starts. */
export interface StartsDone {
  /** Occurrence → execution id of each start that ran (created, or found as this schedule's). */
  started: ReadonlyMap<number, string>;
  /** How many of them the fire created. */
  created: number;
  /** The schedule's last execution after these starts. */
  lastExecutionId: string | null;
  /** Starts that failed for good (past the grace, or an id someone else holds), in order. */
  deadLetters: readonly DeadLetter[];
  /** The start that failed inside the grace: it and everything after it stay undecided. */
  retry: Retry | null;
  /**
   * A start refused past the grace (a dead letter) that the plan decided more after: it is decided,
   * everything after it stays undecided and the row is due again at once (docs/scheduling.md §
   * Decisions). Null when no start stopped the fire.
   */
  stopAfter: number | null;
}

/** What a fire writes: its ledger rows in order, the row as it leaves it, and its skips by reason. */
export interface Settled {
  row: ScheduleRow;
  ledger: NewOccurrence[];
  skipped: Partial<Record<SkipReason, number>>;
}

export const bufferedOf = (row: ScheduleRow): number[] =>
  row.buffered.filter((v): v is number => typeof v === "number");

/** The decision for `row` (active, unpaused) at `now` given what blocks it: pure. */
export function planOf(
  row: ScheduleRow,
  s: ScheduleSettings,
  c: CompiledSchedule,
  blocker: Blocker,
  now: number,
  graceMs: number,
  existing?: ReadonlyMap<number, boolean>,
): FirePlan {
  const buffered = bufferedOf(row);
  return row.nextFireMs === null
    ? drainOnly(buffered, blocker, s.overlap, existing)
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
        existing,
      });
}

/** A schedule whose timing ended still starts what it buffered, one at a time. */
function drainOnly(
  buffered: number[],
  blocker: Blocker,
  overlap: OverlapPolicy,
  existing?: ReadonlyMap<number, boolean>,
): FirePlan {
  const plan: FirePlan = { starts: [], ledger: [], buffered, skipped: 0, nextFireMs: null, advanced: false };
  startBuffered(plan, blocker, overlap, existing);
  return plan;
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
  let drained = 0;
  for (const s of plan.starts) if (s.fromBuffer) drained++;
  const kept = buffered
    .slice(drained)
    .concat(ledger.filter((e) => e.kind === "buffered").map((e) => (e as { occurrence: number }).occurrence));
  return {
    starts: plan.starts.filter((s) => s.occurrence < occurrence),
    ledger,
    buffered: kept,
    skipped,
    nextFireMs: occurrence,
    advanced: true,
  };
}

/** True when `plan` decides an occurrence of the timing later than `occurrence`. */
export function decidesAfter(plan: FirePlan, occurrence: number): boolean {
  for (const e of plan.ledger) if ((e.kind === "missed" ? e.to : e.occurrence) > occurrence) return true;
  return false;
}

/**
 * Appends the ledger rows of the plan's entries to `ledger` and counts its skips by reason into
 * `skipped`. Each row is one object literal (no spread of a shared base: this runs per fire).
 */
function ledgerOf(
  entries: readonly LedgerEntry[],
  started: ReadonlyMap<number, string>,
  scheduleId: string,
  recordedMs: number,
  ledger: NewOccurrence[],
  skipped: Partial<Record<SkipReason, number>>,
): void {
  for (const entry of entries) {
    switch (entry.kind) {
      case "started": {
        const executionId = started.get(entry.occurrence);
        if (executionId !== undefined) {
          ledger.push({ scheduleId, recordedMs, kind: "started", occurrenceMs: entry.occurrence, executionId });
        }
        break;
      }
      case "skipped":
        ledger.push({ scheduleId, recordedMs, kind: "skipped", occurrenceMs: entry.occurrence, reason: entry.reason });
        skipped[entry.reason] = (skipped[entry.reason] ?? 0) + 1;
        break;
      case "missed":
        ledger.push({
          scheduleId,
          recordedMs,
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
        ledger.push({ scheduleId, recordedMs, kind: "buffered", occurrenceMs: entry.occurrence });
        break;
    }
  }
}

/**
 * What a fire writes once its starts are done: the dead letters first, then the plan's ledger rows
 * (only what was decided before a retried start), and the schedule row as it leaves it.
 */
export function settle(f: {
  row: ScheduleRow;
  c: CompiledSchedule;
  plan: FirePlan;
  now: number;
  done: StartsDone;
}): Settled {
  const { row, c, now, done } = f;
  const { retry, started } = done;
  const plan = planDone(f.plan, c, done, row);
  const scheduleId = row.scheduleId;
  const ledger: NewOccurrence[] = [];
  for (const d of done.deadLetters) {
    ledger.push({ scheduleId, recordedMs: now, kind: "dead_letter", occurrenceMs: d.occurrence, error: d.error });
  }
  // A retried occurrence that catch-up now leaves behind is a dead letter (docs/design.md § The
  // firing transaction, docs/scheduling.md), and only that: the missed row that would cover it
  // starts after it. With a buffer, the failed start was the buffer's (it goes first), not this one.
  const retried = row.retryMs !== null && row.lastError !== null && row.buffered.length === 0 ? row.nextFireMs : null;
  let entries = plan.ledger;
  let leftBehind = 0;
  if (retried !== null && !started.has(retried) && retry?.occurrence !== retried) {
    const i = entries.findIndex((e) => e.kind === "missed" && e.from === retried);
    if (i >= 0) {
      ledger.push({
        scheduleId,
        recordedMs: now,
        kind: "dead_letter",
        occurrenceMs: retried,
        error: row.lastError as string,
      });
      const m = entries[i] as Extract<LedgerEntry, { kind: "missed" }>;
      const rest: LedgerEntry[] =
        m.count > 1 ? [{ ...m, count: m.count - 1, from: c.timing.nextAfter(retried) as number }] : [];
      entries = [...entries.slice(0, i), ...rest, ...entries.slice(i + 1)];
      leftBehind = 1;
    }
  }
  const skipped: Partial<Record<SkipReason, number>> = {};
  ledgerOf(entries, started, scheduleId, now, ledger, skipped);
  const deadLetters = done.deadLetters.length;
  // Dead letters count as missed in the metric (docs/server.md), the one catch-up left behind too:
  // the row's `skipped` has it already, in the missed range it was taken out of.
  if (deadLetters + leftBehind > 0) skipped.missed = (skipped.missed ?? 0) + deadLetters + leftBehind;
  const nextFireMs = plan.nextFireMs;
  const ended = nextFireMs === null && plan.buffered.length === 0;
  const next: ScheduleRow = {
    ...row,
    state: ended ? "ended" : "active",
    nextFireMs,
    dueMs: retry !== null ? retry.at : nextFireMs === null ? null : dueTime(row.scheduleId, nextFireMs, c.jitterMs),
    retryMs: retry?.at ?? null,
    fired: row.fired + done.created,
    // max_runs counts every occurrence the timing decided to start, dead letters included (docs/outcomes.md).
    runs: row.runs + runsOf(plan),
    skipped: row.skipped + plan.skipped + deadLetters,
    lastFireMs: started.size > 0 ? now : row.lastFireMs,
    lastExecutionId: done.lastExecutionId,
    // A dead letter, the one catch-up left behind included, keeps the error that refused it: the
    // next start will likely be refused the same way, and the schedule must not look healthy.
    lastError: retry !== null ? retry.error : started.size > 0 || deadLetters + leftBehind === 0 ? null : row.lastError,
    buffered: plan.buffered,
  };
  return { row: next, ledger, skipped };
}

/** What of `plan` a fire decided: all of it, or up to a retried start or a dead letter that stopped it. */
function planDone(plan: FirePlan, c: CompiledSchedule, done: StartsDone, row: ScheduleRow): FirePlan {
  if (done.retry !== null) return planBefore(plan, done.retry.occurrence, bufferedOf(row));
  const after = done.stopAfter === null ? null : c.timing.nextAfter(done.stopAfter);
  return after === null ? plan : planBefore(plan, after, bufferedOf(row));
}

/** The starts of `plan` that count toward max_runs: all but those a backfill ran already. */
function runsOf(plan: FirePlan): number {
  let n = 0;
  for (const s of plan.starts) if (s.ran !== true) n++;
  return n;
}

/** How many ledger rows written apart (at most) a schedule's ledger is pruned. */
const PRUNE_EVERY = 64;

/**
 * A count that grows by at least the ledger rows each fire of the schedule writes, read from the
 * row alone (no COUNT per fire). Each decision is one row (a missed range one for several) and
 * moves `fired` or `skipped`, except an occurrence a buffer policy buffers: that writes a
 * `buffered` row, and later its start or dead letter a second one. Counted by decisions alone, a
 * buffer_all schedule whose key was held wrote rows without counting any (a tester's ledger held
 * 1,142 rows with --ledger-retention 1000, the help's bound being N + 63). Under a buffer policy
 * the count adds `runs` (each start or dead letter the timing decided, from the buffer or not) and
 * the buffer's length: buffering adds one, a start from the buffer adds one (fired + runs − the
 * buffer), a direct start two. Such schedules prune up to twice as often; the others as before.
 */
function ledgerCount(row: ScheduleRow): number {
  const overlap = (row.spec as { overlap?: unknown } | undefined)?.overlap;
  const buffers = overlap === "buffer_one" || overlap === "buffer_all";
  return row.fired + row.skipped + (buffers ? row.runs + row.buffered.length : 0);
}

/**
 * Every 64 ledger rows written (at most: {@link ledgerCount}), not at the first fire (a schedule's
 * first fire has no ledger to prune), at a phase of its own: schedules created together decide in
 * step, and pruning them all in the same fire made every 64th herd do 64 ledger deletes per
 * schedule at once (about 110 µs of CPU per schedule on SQLite: ~1.1 s more for a herd of 10,000,
 * docs/benchmarks.md § Memory). Spread, a herd prunes 1/64 of its schedules; the work and the
 * ledger's bound are the same. The fire prunes when its count crosses a multiple of 64 (with the
 * phase), not only when it lands on one: a fire deciding several occurrences at once (missed,
 * caught up, dead letters) stepped over it, and a schedule whose steps never landed there was
 * never pruned. Between prunes a schedule writes at most 63 rows: it holds up to N + 63.
 */
export const prunesNow = (before: ScheduleRow, after: ScheduleRow): boolean => {
  const was = ledgerCount(before);
  if (was === 0) return false;
  const phase = prunePhase(before.scheduleId);
  return Math.floor((ledgerCount(after) + phase) / PRUNE_EVERY) > Math.floor((was + phase) / PRUNE_EVERY);
};

/** A schedule's phase in 0..63 from its id (FNV-1a over the UTF-16 units): stable and cheap. */
function prunePhase(scheduleId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < scheduleId.length; i++) h = Math.imul(h ^ scheduleId.charCodeAt(i), 0x01000193);
  return (h >>> 0) % PRUNE_EVERY;
}

/**
 * A buffered occurrence whose start was refused past the grace (fire.ts): a dead letter (counted
 * toward max_runs, as a start, and as a skip), out of the buffer, and the row due again now so that
 * the rest is decided in a fire of its own, against what really runs.
 */
export function bufferedDeadLetter(
  row: ScheduleRow,
  held: Retry,
  now: number,
): { row: ScheduleRow; ledger: NewOccurrence[] } {
  const buffered = row.buffered.filter((o) => Number(o) !== held.occurrence);
  const over = row.nextFireMs === null && buffered.length === 0;
  return {
    row: {
      ...row,
      buffered,
      state: over ? "ended" : row.state,
      dueMs: over ? null : now,
      retryMs: null,
      lastError: held.error,
      runs: row.runs + 1,
      skipped: row.skipped + 1,
    },
    ledger: [
      {
        scheduleId: row.scheduleId,
        recordedMs: now,
        kind: "dead_letter",
        occurrenceMs: held.occurrence,
        error: held.error,
      },
    ],
  };
}
