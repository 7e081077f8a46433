/**
 * What a fire does, as a pure function (docs/design.md § Policies): given the schedule's timing and policies,
 * the first undecided occurrence, `now`, the misfire grace and whether a running execution blocks,
 * return which occurrences start (oldest first), which are skipped and why, which are buffered,
 * whether the previous execution is cancelled, and where the schedule advances to.
 *
 * Catch-up decides which missed occurrences are still due; the overlap policy then decides each of
 * them in order, oldest first.
 */
import type { CatchupPolicy, OverlapPolicy, SkipReason } from "../domain/schedule.js";
import { jitterDelay } from "../time/jitter.js";
import { kthLast, type Timing } from "../time/timing.js";

/** The most occurrences `buffer_all` keeps pending. */
export const MAX_BUFFERED = 1000;
/** The most occurrences of the late tail (inside grace + jitter) looked at one by one. */
const MAX_TAIL = 10_000;

/** What blocks a start: nothing, the schedule's own running execution, or another holder of its key. */
export type Blocker = "none" | "schedule" | "key";

export interface DecideInput {
  scheduleId: string;
  timing: Timing;
  overlap: OverlapPolicy;
  catchup: CatchupPolicy;
  maxCatchUp: number | null;
  catchupWindowMs: number | null;
  jitterMs: number;
  /** The first occurrence not yet decided (the row's next_fire_ms). */
  nextFireMs: number;
  now: number;
  graceMs: number;
  /** Pending buffered occurrences, oldest first. */
  buffered: readonly number[];
  blocker: Blocker;
  /**
   * `max_runs`: how many more due occurrences this fire may start or buffer ({@link startsLeft});
   * reaching it ends the schedule. Absent or null: no limit.
   */
  maxStarts?: number | null;
  /**
   * Occurrences among the due and buffered ones whose execution exists already (a backfill started
   * it), and whether it is still active. Such an occurrence is accounted `started` (naming that
   * execution) whatever the overlap policy: nothing is started, skipped, buffered or cancelled for
   * it, and only an active one occupies the overlap slot for the occurrences after it. Absent: none.
   */
  existing?: ReadonlyMap<number, boolean>;
}

export type LedgerEntry =
  | { kind: "started"; occurrence: number; buffered: boolean }
  | { kind: "skipped"; occurrence: number; reason: Exclude<SkipReason, "missed"> }
  | { kind: "missed"; count: number; from: number; to: number }
  | { kind: "buffered"; occurrence: number };

export interface FirePlan {
  /**
   * Occurrences to start, in this order. `cancelBefore`: cancel the running previous execution
   * first. `ran`: its execution exists already (a backfill ran it): accounted, not counted toward
   * max_runs, which counts only what the timing starts (docs/outcomes.md § Run-count limit).
   */
  starts: Array<{ occurrence: number; cancelBefore: boolean; fromBuffer: boolean; ran?: true }>;
  /** Ledger rows, in decision order. */
  ledger: LedgerEntry[];
  /** The buffer after this fire. */
  buffered: number[];
  /** Occurrences that count as skipped (missed, overlap, concurrency, buffer_full). */
  skipped: number;
  /** The next occurrence to decide, or null when the timing ended. */
  nextFireMs: number | null;
  /** True when at least one occurrence was decided (the schedule advanced). */
  advanced: boolean;
}

/**
 * What `max_runs` leaves for a fire to start or buffer: the limit less the occurrences already
 * started (`runs`) and those waiting in the buffer (each will start). Null without a limit.
 */
export function startsLeft(maxRuns: number | undefined, runs: number, buffered: number): number | null {
  return maxRuns === undefined ? null : Math.max(0, maxRuns - runs - buffered);
}

export function dueTime(scheduleId: string, occurrence: number, jitterMs: number): number {
  return occurrence + jitterDelay(scheduleId, occurrence, jitterMs);
}

interface Collected {
  /** Occurrences in [nextFire, bulkEnd]: missed whatever their jitter. */
  bulkCount: number;
  bulkFrom: number;
  bulkEnd: number;
  /** Later occurrences that are due, one by one, oldest first, with their lateness verdict. */
  tail: Array<{ occurrence: number; missed: boolean }>;
  /** The last occurrence looked at, or null when none is due yet. */
  last: number | null;
}

function collectDue(inp: DecideInput): Collected {
  const { timing, now, graceMs, jitterMs, nextFireMs } = inp;
  // Anything up to here is more than the grace late whatever its jitter (jitter < jitterMs).
  const bulkEnd = now - graceMs - jitterMs - 1;
  const bulkCount = bulkEnd >= nextFireMs ? timing.countBetween(nextFireMs - 1, bulkEnd) : 0;
  const tail: Collected["tail"] = [];
  let last: number | null = bulkCount > 0 ? kthLast(timing, nextFireMs - 1, bulkEnd, 1) : null;
  let o: number | null = bulkCount > 0 ? timing.nextAfter(bulkEnd) : nextFireMs;
  while (o !== null && o <= now && tail.length < MAX_TAIL) {
    const due = dueTime(inp.scheduleId, o, jitterMs);
    if (due > now) break;
    tail.push({ occurrence: o, missed: now - due > graceMs });
    last = o;
    o = timing.nextAfter(o);
  }
  return { bulkCount, bulkFrom: nextFireMs, bulkEnd, tail, last };
}

/**
 * The occurrences catch-up lets start, oldest first. The freshest due occurrence still inside the
 * grace always starts; every other due occurrence is missed (more than the grace late, or
 * superseded by a fresher one) and goes to the catch-up policy: `skip_missed` starts none,
 * `run_once` the most recent one when nothing fresh starts, `catch_up` the most recent
 * `max_catch_up` ones, all inside `catchup_window`.
 */
function chooseStarts(inp: DecideInput, c: Collected): number[] {
  let freshAt = -1;
  for (let i = c.tail.length - 1; i >= 0; i--) {
    if (!(c.tail[i] as { missed: boolean }).missed) {
      freshAt = i;
      break;
    }
  }
  const fresh = freshAt >= 0 ? [(c.tail[freshAt] as { occurrence: number }).occurrence] : [];
  if (inp.catchup === "skip_missed") return fresh;
  if (inp.catchup === "run_once" && fresh.length > 0) return fresh;
  const want = inp.catchup === "run_once" ? 1 : (inp.maxCatchUp ?? 1);
  const oldest = inp.catchupWindowMs === null ? Number.NEGATIVE_INFINITY : inp.now - inp.catchupWindowMs;
  const tailMissed = c.tail
    .filter((t, i) => i !== freshAt && t.occurrence >= oldest)
    .map((t) => t.occurrence)
    .slice(-want);
  const picked: number[] = [];
  // Then the most recent eligible ones of the bulk, newest first until `want` are picked.
  const bulkLo = Math.max(c.bulkFrom - 1, oldest - 1);
  for (let k = 1; picked.length + tailMissed.length < want && c.bulkCount > 0; k++) {
    const o = kthLast(inp.timing, bulkLo, c.bulkEnd, k);
    if (o === null) break;
    picked.unshift(o);
  }
  return [...picked, ...tailMissed, ...fresh].sort((a, b) => a - b);
}

/**
 * `chosen` with the due occurrences whose execution exists already (a backfill ran them), in order:
 * each is accounted as that execution (a `started` row naming it), never folded into a missed
 * range, whatever the catch-up policy would have started (docs/scheduling.md § Backfill).
 */
function withRan(chosen: number[], inp: DecideInput, c: Collected): number[] {
  if (inp.existing === undefined || inp.existing.size === 0 || c.last === null) return chosen;
  const last = c.last;
  const ran = [...inp.existing.keys()].filter(
    (o) => o >= inp.nextFireMs && o <= last && !chosen.includes(o) && !inp.buffered.includes(o),
  );
  return ran.length === 0 ? chosen : [...chosen, ...ran].sort((a, b) => a - b);
}

/**
 * The missed rows: one per run of consecutive due occurrences that do not start, each with its
 * exact count and ends, so the ledger accounts for every occurrence once.
 */
function missedRuns(inp: DecideInput, c: Collected, starts: readonly number[]): LedgerEntry[] {
  if (c.last === null) return [];
  const out: LedgerEntry[] = [];
  let after = inp.nextFireMs - 1;
  for (const s of starts) {
    missedRun(out, inp.timing, after, s - 1);
    after = s;
  }
  missedRun(out, inp.timing, after, c.last);
  return out;
}

/** The missed row of the occurrences in (after, upTo], if any. */
function missedRun(out: LedgerEntry[], timing: Timing, after: number, upTo: number): void {
  if (upTo <= after) return;
  const count = timing.countBetween(after, upTo);
  if (count <= 0) return;
  const from = timing.nextAfter(after) as number;
  const to = count === 1 ? from : (kthLast(timing, after, upTo, 1) as number);
  out.push({ kind: "missed", count, from, to });
}

export function decide(inp: DecideInput): FirePlan {
  const c = collectDue(inp);
  const toStart = withRan(chooseStarts(inp, c), inp, c);
  const plan: FirePlan = {
    starts: [],
    ledger: missedRuns(inp, c, toStart),
    buffered: [...inp.buffered],
    skipped: 0,
    nextFireMs: inp.nextFireMs,
    advanced: c.last !== null,
  };
  for (const m of plan.ledger) if (m.kind === "missed") plan.skipped += m.count;

  const existing = inp.existing;
  let blocker = startBuffered(plan, inp.blocker, inp.overlap, existing);
  const limit = inp.maxStarts ?? null;
  let left = limit;
  /** The last occurrence decided before max_runs ended the schedule. */
  let lastCounted: number | null = null;
  // No closures in here: this loop runs for every due occurrence of every fire.
  for (const occurrence of toStart) {
    if (left !== null && left <= 0) break;
    const active = existing?.get(occurrence);
    if (active !== undefined) {
      // It ran already (a backfill): accounted as that execution, no overlap decision about it,
      // and not a run of the timing's (max_runs does not count backfills).
      plan.starts.push({ occurrence, cancelBefore: false, fromBuffer: false, ran: true });
      plan.ledger.push({ kind: "started", occurrence, buffered: false });
      if (active && blocker === "none") blocker = "schedule";
      continue;
    }
    const verdict = overlapVerdict(inp.overlap, blocker, plan.buffered.length);
    if (verdict === "start" || verdict === "cancel_and_start") {
      plan.starts.push({ occurrence, cancelBefore: verdict === "cancel_and_start", fromBuffer: false });
      plan.ledger.push({ kind: "started", occurrence, buffered: false });
      blocker = "schedule";
    } else if (verdict === "buffer") {
      plan.buffered.push(occurrence);
      plan.ledger.push({ kind: "buffered", occurrence });
    } else {
      plan.ledger.push({ kind: "skipped", occurrence, reason: verdict });
      plan.skipped++;
      continue;
    }
    // Started or buffered: it counts toward max_runs.
    if (left !== null) {
      left--;
      lastCounted = occurrence;
    }
  }
  if (c.last !== null) plan.nextFireMs = inp.timing.nextAfter(c.last);
  if (left !== null && left <= 0) endByMaxRuns(plan, lastCounted);
  return plan;
}

/**
 * Starts the buffer's oldest occurrence when nothing blocks, and the next one after it as long as
 * the one started is an execution that exists and has ended (a backfill ran it: it blocks nothing).
 * Under a policy that no longer buffers (an update switched to `allow` or `cancel_previous`) the
 * buffer is settled by that policy, oldest first, before the due occurrences: `allow` starts them
 * all, `cancel_previous` starts each cancelling the one before (they waited behind the running
 * execution, and left there they started after newer occurrences, out of order). Returns what
 * blocks the occurrences decided after.
 */
export function startBuffered(
  plan: FirePlan,
  blocker: Blocker,
  overlap: OverlapPolicy,
  existing?: ReadonlyMap<number, boolean>,
): Blocker {
  let blocking = blocker;
  while (plan.buffered.length > 0) {
    const verdict = decideTrigger(overlap, blocking);
    if (verdict === "not_started") break;
    const occurrence = plan.buffered.shift() as number;
    plan.starts.push({ occurrence, cancelBefore: verdict === "cancel_and_start", fromBuffer: true });
    plan.ledger.push({ kind: "started", occurrence, buffered: true });
    if (existing?.get(occurrence) !== false) blocking = "schedule";
  }
  return blocking;
}

/**
 * `max_runs` is reached (docs/outcomes.md § Run-count limit): the schedule ends. What was decided up
 * to the last counted occurrence stands; the due occurrences after it are not decided and not
 * recorded (not missed: the schedule had ended), and there is no next occurrence. `last` is null
 * when the limit was reached before this fire (nothing of it counts; a buffered start still goes).
 */
function endByMaxRuns(plan: FirePlan, last: number | null): void {
  plan.ledger = plan.ledger.filter((e) =>
    e.kind === "started" && e.buffered ? true : last !== null && (e.kind === "missed" ? e.to : e.occurrence) <= last,
  );
  plan.skipped = 0;
  for (const e of plan.ledger) plan.skipped += e.kind === "missed" ? e.count : e.kind === "skipped" ? 1 : 0;
  plan.nextFireMs = null;
  plan.advanced = true;
}

/** What the overlap policy does with one due occurrence, given what blocks it and the buffer's length. */
function overlapVerdict(
  overlap: OverlapPolicy,
  blocker: Blocker,
  buffered: number,
): "start" | "cancel_and_start" | "buffer" | Exclude<SkipReason, "missed"> {
  const verdict = decideTrigger(overlap, blocker);
  if (verdict !== "not_started") return verdict;
  if (overlap === "buffer_one" || overlap === "buffer_all") {
    return buffered < (overlap === "buffer_one" ? 1 : MAX_BUFFERED) ? "buffer" : "buffer_full";
  }
  return overlap === "skip" && blocker !== "key" ? "overlap" : "concurrency";
}

/** A manual trigger under the overlap policy: start, cancel-then-start, or not start. */
export function decideTrigger(overlap: OverlapPolicy, blocker: Blocker): "start" | "cancel_and_start" | "not_started" {
  if (blocker === "none" || overlap === "allow") return "start";
  if (overlap === "cancel_previous" && blocker === "schedule") return "cancel_and_start";
  return "not_started";
}
