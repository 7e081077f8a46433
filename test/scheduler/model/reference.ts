/**
 * The reference model of the scheduling policies: a deliberately naive simulation, occurrence by
 * occurrence, of what docs/scheduling.md says a schedule does. No arithmetic counting, no batching,
 * no storage: a list of due occurrences, the catch-up policy picks from it, the overlap policy
 * decides each pick in order, and every occurrence gets exactly one account. The model-based test
 * (model.test.ts) drives the real scheduler and this model with the same events and compares them.
 *
 * Interval schedules anchored at the epoch, and cron schedules of minute and hour fields in a time
 * zone whose occurrences come from a minute-by-minute walk of UTC read as local time with
 * Intl.DateTimeFormat (docs/design.md § DST: `once` and `wall_clock`); jitter below the shortest
 * gap between occurrences, so due times keep the occurrences' order. Enough to
 * exercise overlap ×
 * catch-up × grace × buffer × concurrency key × pause/resume × outage × blocked starts × triggers,
 * and the timing's own life: interval changes by update, `end_at` and `max_runs` ending it, delete
 * and create again under the same id, and backfills of past ranges (docs/design.md § Changes,
 * docs/outcomes.md § Run-count limit).
 */
import { createHash } from "node:crypto";
import type { CatchupPolicy, OverlapPolicy } from "../../../src/domain/schedule.js";
import { formatInstant } from "../../../src/time/format.js";
import { cronNextAfter } from "./model-cron.js";

export const RETRY_MS = 5000;
const MAX_BUFFER_ALL = 1000;

/** A cron of minute and hour fields (any, every n-th, or a list), every day, in `zone`. */
export interface ModelCron {
  minutes: string;
  hours: string;
  zone: string;
  dst: "once" | "wall_clock";
}

export interface ModelSettings {
  id: string;
  intervalMs: number;
  /** Set: a cron schedule (intervalMs is then unused). */
  cron: ModelCron | null;
  overlap: OverlapPolicy;
  catchup: CatchupPolicy;
  maxCatchUp: number | null;
  windowMs: number | null;
  key: string | null;
  /** No occurrence after it (`end_at`). */
  endAt: number | null;
  /** `jitter` in ms (0: none). */
  jitterMs: number;
  /** The schedule ends after its timing decided this many starts (`max_runs`). */
  maxRuns: number | null;
}

export interface MSchedule extends ModelSettings {
  /** The first undecided occurrence; null: the timing ended (end_at or max_runs). */
  nextFire: number | null;
  /** Occurrences the timing decided to start (buffered, started, dead letters of a fire): max_runs' count. */
  runs: number;
  /** Occurrence → how many times a backfill started it (a ledger `started` row each, besides its account). */
  backfilled: Map<number, number>;
  /** When the loop fires it; null while paused. */
  due: number | null;
  /** Set while a failed start waits for its retry. */
  retryAt: number | null;
  paused: boolean;
  buffered: number[];
  lastExec: string | null;
  fired: number;
  skipped: number;
  /** Occurrence → started | buffered | dead_letter | skipped:<reason>. */
  accounts: Map<number, string>;
}

export interface MExecution {
  id: string;
  scheduleId: string;
  key: string | null;
  active: boolean;
}

type Blocker = "none" | "schedule" | "key";

export class ReferenceModel {
  readonly schedules = new Map<string, MSchedule>();
  readonly executions = new Map<string, MExecution>();
  /** Starts fail (the latest workflow version refuses the input). */
  blocked = false;

  constructor(
    public now: number,
    readonly graceMs: number,
  ) {}

  /** The first occurrence after `t` (the interval counted from the epoch); null past end_at. */
  nextAfter(s: ModelSettings, t: number): number | null {
    const o = s.cron === null ? (Math.floor(t / s.intervalMs) + 1) * s.intervalMs : cronNextAfter(s.cron, t);
    return s.endAt !== null && o > s.endAt ? null : o;
  }

  /** Occurrences of the timing in [from, to], both ends included. */
  occurrencesIn(s: ModelSettings, from: number, to: number): number[] {
    const out: number[] = [];
    for (let o = this.nextAfter(s, from - 1); o !== null && o <= to; o = this.nextAfter(s, o)) out.push(o);
    return out;
  }

  /**
   * When an occurrence is due: the occurrence plus its jitter, the first 48 bits of SHA-256 over
   * `<schedule_id>\n<occurrence RFC 3339>` modulo the jitter (docs/design.md § Jitter).
   */
  dueOf(s: ModelSettings, o: number): number {
    if (s.jitterMs <= 0) return o;
    const digest = createHash("sha256")
      .update(`${s.id}\n${formatInstant(o)}`)
      .digest();
    return o + (digest.readUIntBE(0, 6) % s.jitterMs);
  }

  /** A refused start inside its grace is tried again in 5 s, or at the grace's end when sooner (at least 0.25 s). */
  private retryIn(s: ModelSettings, o: number, now: number): number {
    return Math.max(250, Math.min(RETRY_MS, this.dueOf(s, o) + this.graceMs - now));
  }

  private dueOfNext(s: MSchedule): number | null {
    return s.nextFire === null ? null : this.dueOf(s, s.nextFire);
  }

  private ended(s: MSchedule): boolean {
    return s.maxRuns !== null && s.runs >= s.maxRuns;
  }

  create(settings: ModelSettings): void {
    const nextFire = this.nextAfter(settings, this.now);
    this.schedules.set(settings.id, {
      ...settings,
      nextFire,
      due: nextFire === null ? null : this.dueOf(settings, nextFire),
      runs: 0,
      backfilled: new Map(),
      retryAt: null,
      paused: false,
      buffered: [],
      lastExec: null,
      fired: 0,
      skipped: 0,
      accounts: new Map(),
    });
  }

  /** The earliest instant any schedule is due, or null. */
  nextDue(): number | null {
    let min: number | null = null;
    for (const s of this.schedules.values()) if (s.due !== null && (min === null || s.due < min)) min = s.due;
    return min;
  }

  private blockerOf(s: MSchedule): Blocker {
    // Another schedule's hold of the key comes first, even while the schedule's own last runs.
    if (s.key !== null) {
      const holders = [...this.executions.values()].filter((e) => e.active && e.key === s.key);
      if (holders.some((e) => e.scheduleId !== s.id)) return "key";
      if (holders.length > 0) return "schedule";
    }
    if (s.lastExec !== null && this.executions.get(s.lastExec)?.active) return "schedule";
    return "none";
  }

  private end(executionId: string): void {
    const e = this.executions.get(executionId);
    if (e === undefined || !e.active) return;
    e.active = false;
    // Buffers waiting behind it become due now.
    for (const s of this.schedules.values()) {
      const mine = s.id === e.scheduleId || (e.key !== null && s.key === e.key);
      // Due at the oldest buffered occurrence, so the oldest waiter on a key goes first.
      const at = Math.min(this.now, s.buffered[0] ?? this.now);
      if (mine && !s.paused && s.buffered.length > 0 && (s.due === null || s.due > at)) s.due = at;
    }
  }

  complete(executionId: string): void {
    this.end(executionId);
  }

  /** One round of the loop at `now`: every schedule due then, by due time then id. */
  fireDue(now: number): void {
    this.now = now;
    const due = [...this.schedules.values()]
      .filter((s) => !s.paused && s.due !== null && s.due <= now)
      .sort((a, b) => (a.due as number) - (b.due as number) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (const s of due) this.fire(s, now);
  }

  private fire(s: MSchedule, now: number): void {
    const dueList: number[] = [];
    if (s.nextFire !== null)
      for (let o: number | null = s.nextFire; o !== null && this.dueOf(s, o) <= now; o = this.nextAfter(s, o))
        dueList.push(o);
    const blocker0 = this.blockerOf(s);
    // What the overlap policy does with a buffered occurrence now: a policy that no longer buffers
    // (an update to allow or cancel_previous) settles the buffer its own way, oldest first.
    const bufferVerdict = (b: Blocker): "start" | "cancel_start" | null =>
      b === "none" || s.overlap === "allow"
        ? "start"
        : s.overlap === "cancel_previous" && b === "schedule"
          ? "cancel_start"
          : null;
    if (dueList.length === 0 && !(bufferVerdict(blocker0) !== null && s.buffered.length > 0)) {
      s.due = this.dueOfNext(s);
      s.retryAt = null;
      return;
    }
    // Catch-up: the freshest due occurrence inside the grace starts; the others are missed.
    const last = dueList[dueList.length - 1];
    const fresh = last !== undefined && now - this.dueOf(s, last) <= this.graceMs ? last : null;
    const missed = fresh === null ? dueList : dueList.slice(0, -1);
    const eligible = missed.filter((o) => s.windowMs === null || o >= now - s.windowMs);
    let picks: number[] = [];
    if (s.catchup === "run_once") picks = fresh !== null ? [] : eligible.slice(-1);
    if (s.catchup === "catch_up") picks = eligible.slice(-(s.maxCatchUp ?? 1));
    if (fresh !== null) picks.push(fresh);
    const ran = (o: number) => this.executions.get(`${s.id}:${formatInstant(o)}`);
    // A due occurrence a backfill ran is accounted as that execution whatever the catch-up policy
    // picks: never part of a missed range.
    const ranDue = dueList.filter((o) => ran(o) !== undefined && !picks.includes(o));
    if (ranDue.length > 0) picks = [...picks, ...ranDue].sort((a, b) => a - b);

    // The plan, decided as if every start succeeds. An occurrence whose execution exists (a
    // backfill ran it) is accounted as that execution whatever the overlap policy, and occupies
    // the overlap slot only while it runs.
    type Step = { o: number; act: "start" | "cancel_start" | "buffer" | `skip:${string}`; fromBuffer: boolean };
    const plan: Step[] = [];
    let blocker = blocker0;
    let bufferLen = s.buffered.length;
    for (let k = 0; k < s.buffered.length; k++) {
      const act = bufferVerdict(blocker);
      if (act === null) break;
      const o = s.buffered[k] as number;
      plan.push({ o, act, fromBuffer: true });
      bufferLen--;
      if (ran(o)?.active !== false) blocker = "schedule";
    }
    for (const o of picks) {
      const existing = ran(o);
      if (existing !== undefined) {
        plan.push({ o, act: "start", fromBuffer: false });
        if (existing.active && blocker === "none") blocker = "schedule";
      } else if (blocker === "none" || s.overlap === "allow") {
        plan.push({ o, act: "start", fromBuffer: false });
        blocker = "schedule";
      } else if (s.overlap === "skip") {
        plan.push({ o, act: blocker === "key" ? "skip:concurrency" : "skip:overlap", fromBuffer: false });
      } else if (s.overlap === "cancel_previous") {
        if (blocker === "schedule") plan.push({ o, act: "cancel_start", fromBuffer: false });
        else plan.push({ o, act: "skip:concurrency", fromBuffer: false });
      } else if (bufferLen < (s.overlap === "buffer_one" ? 1 : MAX_BUFFER_ALL)) {
        plan.push({ o, act: "buffer", fromBuffer: false });
        bufferLen++;
      } else plan.push({ o, act: "skip:buffer_full", fromBuffer: false });
    }

    // Carry it out; a failed start inside the grace stops the fire there.
    const accounts = new Map<number, string>();
    const cancels: string[] = [];
    const starts: MExecution[] = [];
    let buffered = [...s.buffered];
    let lastExec = s.lastExec;
    /** What cancel_previous replaces: the last execution started or found still running. */
    let running = s.lastExec;
    /** The last execution runs: a backfill's run found still running does not take its place. */
    let lastActive = s.lastExec !== null && this.executions.get(s.lastExec)?.active === true;
    /** A backfill's runs found still running beside the last: cancel_previous replaces them too. */
    const alsoRunning: string[] = [];
    let retryOccurrence: number | null = null;
    // max_runs: each decided start, buffering or dead letter of the timing counts; at the limit the
    // schedule ends and what comes after that occurrence is neither decided nor recorded.
    let runs = s.runs;
    let endedAfter: number | null = null;
    /** A dead letter past the grace that stopped the fire (decisions after it are not kept). */
    let stoppedAt: number | null = null;
    for (const step of plan) {
      if (endedAfter !== null && !step.fromBuffer) break;
      // An occurrence a backfill ran counts toward nothing: max_runs counts the timing's own starts.
      const counts = !step.fromBuffer && !step.act.startsWith("skip:") && ran(step.o) === undefined;
      if (counts && s.maxRuns !== null && runs >= s.maxRuns) break;
      if (step.act.startsWith("skip:")) {
        accounts.set(step.o, `skipped:${step.act.slice(5)}`);
        continue;
      }
      if (step.act === "buffer") {
        buffered.push(step.o);
        accounts.set(step.o, "buffered");
        runs++;
        if (s.maxRuns !== null && runs >= s.maxRuns) endedAfter = step.o;
        continue;
      }
      if (step.act === "cancel_start") {
        if (running !== null) cancels.push(running);
        cancels.push(...alsoRunning);
      }
      const id = `${s.id}:${formatInstant(step.o)}`;
      // An existing id is the answer before the workflow is looked at: it never fails to start.
      if (this.blocked && !this.executions.has(id)) {
        const inGrace = now - this.dueOf(s, step.o) <= this.graceMs;
        if (step.fromBuffer && inGrace) {
          // Nothing of this fire stays: the buffered occurrence is tried again in 5 s.
          for (const id of cancels) this.end(id);
          s.due = now + this.retryIn(s, step.o, now);
          s.retryAt = s.due;
          return;
        }
        if (inGrace) {
          retryOccurrence = step.o;
          break;
        }
        if (step.fromBuffer) {
          // Past the grace: a dead letter out of the buffer (it counted when it was buffered), and
          // nothing else of this fire; the row is due again at once and its next fire (the loop's
          // next round) decides the rest afresh.
          for (const id of cancels) this.end(id);
          s.accounts.set(step.o, "dead_letter");
          s.skipped++;
          s.buffered = s.buffered.slice(1);
          s.retryAt = null;
          s.due = s.nextFire === null && s.buffered.length === 0 ? null : now;
          return;
        }
        accounts.set(step.o, "dead_letter");
        runs++;
        if (s.maxRuns !== null && runs >= s.maxRuns) endedAfter = step.o;
        // What the plan decided after it assumed it would run: the fire stops here, and the
        // loop's next round decides the rest against what really runs.
        if (endedAfter === null && dueList.some((o) => o > step.o)) {
          stoppedAt = step.o;
          break;
        }
        continue;
      }
      starts.push({ id, scheduleId: s.id, key: s.key, active: true });
      accounts.set(step.o, "started");
      // A backfill's run that has ended is accounted, but is neither replaced nor the last execution;
      // one still running becomes the last only where no run of the schedule is active.
      const endedBackfill = this.executions.get(id)?.active === false;
      const takesLast = !endedBackfill && (!this.executions.has(id) || !lastActive);
      if (takesLast) {
        running = id;
        lastActive = true;
      } else if (!endedBackfill) alsoRunning.push(id);
      if (step.fromBuffer) buffered = buffered.slice(1);
      else if (counts) {
        runs++;
        if (s.maxRuns !== null && runs >= s.maxRuns) endedAfter = step.o;
      }
      if (takesLast) lastExec = id;
    }
    const decidedUpTo =
      retryOccurrence ??
      (stoppedAt !== null ? stoppedAt + 1 : endedAfter !== null ? endedAfter + 1 : Number.POSITIVE_INFINITY);
    for (const o of dueList)
      if (o < decidedUpTo && !accounts.has(o) && !picks.includes(o)) accounts.set(o, "skipped:missed");
    // A retried occurrence that catch-up leaves behind is a dead letter, not missed.
    const retried = s.retryAt !== null && s.buffered.length === 0 ? s.nextFire : null;
    if (retried !== null && accounts.get(retried) === "skipped:missed") accounts.set(retried, "dead_letter");

    // A start under an id that exists (a backfill ran it) starts nothing new and counts nothing.
    const existed = new Set(starts.filter((e) => this.executions.has(e.id)).map((e) => e.id));
    for (const e of starts) if (!existed.has(e.id)) this.executions.set(e.id, e);
    for (const id of cancels) this.end(id);
    for (const [o, a] of accounts) {
      if (o >= decidedUpTo) continue;
      s.accounts.set(o, a);
      if (a === "started") {
        if (!existed.has(`${s.id}:${formatInstant(o)}`)) s.fired++;
      } else if (a !== "buffered") s.skipped++;
    }
    s.buffered = buffered;
    s.lastExec = lastExec;
    s.runs = runs;
    if (retryOccurrence !== null) {
      s.nextFire = retryOccurrence;
      s.due = now + this.retryIn(s, retryOccurrence, now);
      s.retryAt = s.due;
    } else if (stoppedAt !== null) {
      s.nextFire = this.nextAfter(s, stoppedAt);
      s.due = this.dueOfNext(s);
      s.retryAt = null;
    } else {
      if (last !== undefined) s.nextFire = this.nextAfter(s, last);
      if (this.ended(s)) s.nextFire = null;
      s.due = this.dueOfNext(s);
      s.retryAt = null;
    }
  }

  /**
   * A pause decides first what came due before it: a fire, as the loop's; then a refused start still
   * waiting for its retry is a dead letter, and the occurrences due after it up to now are missed.
   */
  pause(id: string): void {
    const s = this.get(id);
    this.decideBeforeChange(s);
    s.paused = true;
    s.due = null;
  }

  /**
   * Records as missed the occurrences from `from` on that are due by now, by due time (a jittered
   * one due after now is not), oldest first; returns the last one, or null.
   */
  private missDue(s: MSchedule, from: number): number | null {
    let last: number | null = null;
    for (const o of this.occurrencesIn(s, from, this.now)) {
      if (this.dueOf(s, o) > this.now) break;
      s.accounts.set(o, "skipped:missed");
      s.skipped++;
      last = o;
    }
    return last;
  }

  /** What a pause, a new timing or a max_runs that ends the schedule decide first (see pause). */
  private decideBeforeChange(s: MSchedule): void {
    if (!s.paused && !(s.nextFire === null && s.buffered.length === 0)) {
      if (s.due !== null && s.due <= this.now) this.fire(s, this.now);
      if (s.retryAt !== null && s.buffered.length === 0 && s.nextFire !== null) {
        const refused = s.nextFire;
        s.accounts.set(refused, "dead_letter");
        s.skipped++; // not a turn of max_runs: it was not decided yet (docs/outcomes.md)
        const last = this.missDue(s, refused + 1);
        s.nextFire = this.ended(s) ? null : this.nextAfter(s, last ?? refused);
        s.retryAt = null;
      } else if (s.retryAt !== null && s.nextFire !== null) {
        // A buffered start refused and waiting: the buffer keeps it; what came due behind it is missed.
        const last = this.missDue(s, s.nextFire);
        if (last !== null) s.nextFire = this.nextAfter(s, last);
      }
    }
  }

  resume(id: string, catchUp: boolean): void {
    const s = this.get(id);
    if (!s.paused) return; // nothing to resume: the timing stays as the fires left it
    const keep = catchUp && s.nextFire !== null && s.nextFire <= this.now;
    s.paused = false;
    // An ended schedule stays ended.
    if (!keep && s.nextFire !== null) s.nextFire = this.nextAfter(s, this.now);
    // What the pause held in the buffer is due at once, at its oldest occurrence (as a wake-up).
    const held = s.buffered[0];
    s.due = held !== undefined ? Math.min(held, this.now) : keep ? this.now : this.dueOfNext(s);
    s.retryAt = null;
  }

  /**
   * A change of timing (or of max_runs): the timing restarts from now (unless max_runs has ended
   * it). A change of policies only leaves the next occurrence where the fires left it; a start
   * being retried is then due at once.
   */
  update(
    id: string,
    patch: Partial<
      Pick<
        ModelSettings,
        "overlap" | "catchup" | "maxCatchUp" | "intervalMs" | "cron" | "endAt" | "maxRuns" | "jitterMs"
      >
    >,
  ): void {
    const s = this.get(id);
    // The jitter moves when an occurrence is due, not which instants are occurrences: kept.
    // So does max_runs, unless it is spent already: then the timing ends.
    const timing = (m: MSchedule) => JSON.stringify([m.intervalMs, m.cron, m.endAt]);
    const before = timing(s);
    // A new timing, or a max_runs that ends the schedule, first decides under the old settings what
    // came due before it, as a pause does.
    const retimed = timing({ ...s, ...patch }) !== before;
    const ends =
      patch.maxRuns !== undefined &&
      patch.maxRuns !== s.maxRuns &&
      patch.maxRuns !== null &&
      s.runs + s.buffered.length >= patch.maxRuns;
    const jitterBefore = s.jitterMs;
    // A new timing restarts from now: an occurrence whose instant has passed is decided first,
    // its jitter waived (between its instant and its due time it belonged to neither timing).
    const passed = s.nextFire !== null && s.nextFire <= this.now && s.due !== null && s.due > this.now;
    if (retimed && passed && !s.paused && s.retryAt === null) {
      s.jitterMs = 0;
      s.due = s.nextFire;
    }
    if (retimed || ends) this.decideBeforeChange(s);
    s.jitterMs = jitterBefore;
    Object.assign(s, patch);
    if (timing(s) === before && !(s.nextFire === null && s.buffered.length === 0)) {
      if (this.ended(s)) {
        s.nextFire = null;
        s.due = null;
      } else if (s.retryAt !== null && s.due !== null) s.due = Math.min(s.due, this.now);
      else if (s.jitterMs !== jitterBefore && s.due !== null) s.due = this.dueOfNext(s);
    } else {
      s.nextFire = this.ended(s) ? null : this.nextAfter(s, this.now);
      s.due = s.paused ? null : this.dueOfNext(s);
    }
    s.retryAt = null;
    // What the buffer holds is due at once after an update (as after a resume): the update may have
    // removed what blocked it; a fire that finds it still blocked only moves the due time.
    const held = s.buffered[0];
    if (held !== undefined && !s.paused) s.due = Math.min(s.due ?? Number.POSITIVE_INFINITY, held, this.now);
  }

  /** A manual trigger: "started" (its id), "not_started", or "failed" (a start the workflow refuses). */
  trigger(id: string, executionId: string): "started" | "not_started" | "failed" {
    const s = this.get(id);
    const blocker = this.blockerOf(s);
    const cancel = blocker === "schedule" && s.overlap === "cancel_previous";
    if (blocker !== "none" && s.overlap !== "allow" && !cancel) {
      s.skipped++;
      return "not_started";
    }
    if (this.blocked) return "failed";
    if (cancel && s.lastExec !== null) this.end(s.lastExec);
    this.executions.set(executionId, { id: executionId, scheduleId: id, key: s.key, active: true });
    s.fired++;
    s.lastExec = executionId;
    return "started";
  }

  /** Delete: the schedule and its ledger go; its executions stay (and keep running). */
  delete(id: string): void {
    this.get(id);
    this.schedules.delete(id);
  }

  /**
   * Backfill of [from, to]: "past" when no occurrence of it is after now ("refused" otherwise);
   * each occurrence whose nominal id does not exist yet starts (no overlap policy, no max_runs
   * count), the others are counted as already existing.
   */
  backfill(id: string, from: number, to: number): { started: number; already_existed: number } | "refused" {
    const s = this.get(id);
    const all = this.occurrencesIn(s, from, to);
    // Still to come: not due yet (its jitter included), so its own fire would start it.
    if (all.some((o) => this.dueOf(s, o) > this.now)) return "refused";
    const out = { started: 0, already_existed: 0 };
    for (const o of all) {
      const executionId = `${s.id}:${formatInstant(o)}`;
      if (this.executions.has(executionId)) {
        out.already_existed++;
        continue;
      }
      this.executions.set(executionId, { id: executionId, scheduleId: s.id, key: s.key, active: true });
      s.backfilled.set(o, (s.backfilled.get(o) ?? 0) + 1);
      s.fired++;
      out.started++;
    }
    return out;
  }

  get(id: string): MSchedule {
    const s = this.schedules.get(id);
    if (s === undefined) throw new Error(`model has no schedule ${id}`);
    return s;
  }
}
