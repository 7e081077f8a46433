/**
 * Pause, resume, trigger and backfill (docs/design.md § Changes, § Catch-up). Each is one
 * transaction on the schedule row and moves its revision, unless it changes nothing (a pause of a
 * paused schedule, a resume of an active one).
 */
import { OrbitError } from "../domain/errors.js";
import { isJsonObject, type JsonObject } from "../domain/json.js";
import { own } from "../domain/own.js";
import { runAgainIfAborted } from "../engine/run-again.js";
import type { ScheduleRow } from "../store/rows.js";
import { formatInstant, parseInstant } from "../time/format.js";
import { FIELD_ALIASES } from "./aliases.js";
import { compiledFor, occurrenceKey } from "./compiled.js";
import { decideTrigger, dueTime } from "./decide.js";
import { checkFence, type Fence } from "./fence.js";
import type { FireReport } from "./fire.js";
import { LEDGER_RETENTION } from "./fire-plan.js";
import { decideBeforeChange, lockForPause } from "./pause-decide.js";
import { recomputeFrom } from "./recompute.js";
import type { Schedules } from "./schedules.js";
import { refuseSecretReferences, refuseUnknownKeys } from "./settings.js";
import { blockerOf, cancelPreviousReason, occurrenceExecutionId, startRequestOf } from "./start-request.js";
import { settingsOf } from "./view.js";

/** The most occurrences one backfill request may start. */
export const MAX_BACKFILL = 10_000;
/** Occurrences per backfill transaction; the loop and the API get a turn between batches. */
const BACKFILL_BATCH = 100;

export interface TriggerResult {
  started: boolean;
  execution_id: string | null;
  /** Why nothing started (overlap). */
  message?: string;
  overlap: string;
}

export interface BackfillResult {
  start_at: string;
  end_at: string;
  occurrences: number;
  started: number;
  already_existed: number;
}

function bodyObject(body: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (!isJsonObject(body)) throw new OrbitError("INVALID_ARGUMENT", "the request body must be a JSON object");
  for (const key of Object.keys(body)) {
    const hint = own(FIELD_ALIASES, key);
    if (!allowed.includes(key) && hint !== undefined && allowed.includes(hint)) {
      throw new OrbitError("INVALID_ARGUMENT", `unknown field "${key}"; did you mean "${hint}"?`);
    }
  }
  refuseUnknownKeys(body, allowed);
  return body;
}

export class ScheduleActions {
  constructor(private readonly schedules: Schedules) {}

  private get o() {
    return this.schedules.o;
  }

  /**
   * `pausing`: the change pauses, so what came due before it is decided first (pause-decide.ts).
   * `recomputes`: the change recomputes the next occurrence, from `from` (recomputeFrom: now, or
   * past what the schedule decided); else `from` is now. `unchanged`: the change would change
   * nothing of `row`, which is then answered as it is, its revision and updated_at kept.
   */
  private async write(
    id: string,
    fence: Fence,
    change: (row: ScheduleRow, now: number, from: number) => ScheduleRow,
    {
      pausing = false,
      recomputes = false,
      unchanged = () => false,
    }: { pausing?: boolean; recomputes?: boolean; unchanged?: (row: ScheduleRow) => boolean } = {},
  ): Promise<JsonObject> {
    let wrote = false;
    const fires: FireReport[] = [];
    let at = 0;
    const attempt = () =>
      this.o.store.transaction(async (tx) => {
        fires.length = 0;
        wrote = false;
        if (pausing) await lockForPause(tx, id);
        let row = await this.schedules.fenced(tx, id, fence);
        // The time is read once the row is held: read before, while a fire held the row, it could be
        // earlier than occurrences that fire decided, and a resume would decide them again.
        const now = await this.schedules.now(tx);
        at = now;
        // A write that changes nothing is no change (docs/design.md § Changes): moving the revision
        // failed other clients' If-Match fences for nothing. A paused schedule has nothing to decide.
        if (unchanged(row)) return this.schedules.view(row, tx, now);
        wrote = true;
        if (pausing) {
          const decided = await decideBeforeChange(tx, row, now, this.o);
          fires.push(...decided.reports);
          row = decided.row;
        }
        const from = recomputes ? await recomputeFrom(tx, row, now) : now;
        const updated = await tx.updateSchedule(
          { ...change(row, now, from), updatedMs: now },
          { expectedRevision: row.revision },
        );
        if (updated === null) throw new OrbitError("CONFLICT", `schedule ${id} changed meanwhile; read it again`);
        return this.schedules.view(updated, tx, now);
      });
    // A pause's fire may cancel a previous execution: on PostgreSQL a deadlock with a racing fire or
    // trigger is broken by aborting one side, and the pause, which changed nothing, runs again.
    const out = pausing ? await runAgainIfAborted(attempt) : await attempt();
    if (!wrote) return out;
    this.schedules.reportFires(fires, at);
    this.o.onChange?.();
    return out;
  }

  /**
   * Stops firing; the next occurrence is kept, so a resume with catch_up knows what was missed. Of a
   * paused schedule, with no note or the note it has, it changes nothing.
   */
  pause(id: string, body: unknown, fence: Fence = {}): Promise<JsonObject> {
    const { note } = bodyObject(body, ["note"]);
    if (note !== undefined && (typeof note !== "string" || note.length > 1000)) {
      throw new OrbitError("INVALID_ARGUMENT", "note must be text of at most 1000 characters");
    }
    return this.write(
      id,
      fence,
      (row) => ({
        ...row,
        paused: true,
        // A pause of a schedule paused already keeps its note unless it gives one: a bare pause
        // erased why it was paused (`pause_on_failure`'s note, a tester).
        pauseNote: note !== undefined ? (note as string) : row.paused ? row.pauseNote : null,
        state: row.state === "ended" ? "ended" : "paused",
        dueMs: null,
        spec: { ...row.spec, paused: true, ...(note !== undefined ? { pause_note: note as string } : {}) },
      }),
      { pausing: true, unchanged: (row) => row.paused && (note === undefined || note === row.pauseNote) },
    );
  }

  /**
   * Pausing is not downtime: resume continues with the next occurrence after now, unless the body
   * says `{"catch_up": true}`, which hands the paused span to the schedule's catch-up policy. Of a
   * schedule not paused, with or without catch_up, it changes nothing.
   */
  resume(id: string, body: unknown, fence: Fence = {}): Promise<JsonObject> {
    const { catch_up: catchUp } = bodyObject(body, ["catch_up"]);
    if (catchUp !== undefined && typeof catchUp !== "boolean")
      throw new OrbitError("INVALID_ARGUMENT", "catch_up must be true or false");
    return this.write(
      id,
      fence,
      (row, now, from) => {
        const c = compiledFor(row);
        const { pause_note: _dropped, ...rest } = row.spec;
        const spec = { ...rest, paused: false };
        const keep = catchUp === true && row.nextFireMs !== null && row.nextFireMs <= now;
        const maxRuns = (row.spec as { max_runs?: number }).max_runs;
        // Stays ended (docs/outcomes.md): buffered occurrences count, though `runs` counts them at their start.
        const spent = maxRuns !== undefined && row.runs + row.buffered.length >= maxRuns;
        const next = spent ? null : keep ? row.nextFireMs : c.timing.nextAfter(from);
        const state = next === null && row.buffered.length === 0 ? "ended" : "active";
        return {
          ...row,
          spec,
          paused: false,
          pauseNote: null,
          state,
          nextFireMs: next,
          // What the pause held in the buffer is due at once (at its occurrence, as an execution's end
          // wakes it): it starts now if nothing runs, instead of waiting for the next occurrence.
          dueMs:
            row.buffered.length > 0
              ? Math.min(Number(row.buffered[0]), now)
              : next === null
                ? null
                : keep
                  ? now
                  : dueTime(row.scheduleId, next, c.jitterMs),
          retryMs: null,
        };
      },
      // Not paused: nothing to resume. Its timing stays as the fires left it (recomputed from now, it
      // dropped the occurrences a loop running behind had not fired yet, with no account).
      { recomputes: true, unchanged: (row) => !row.paused },
    );
  }

  /**
   * Starts an execution now with the schedule's workflow, version and input (or `input` from the
   * body), also while paused, under the overlap policy. Does not touch the timing.
   */
  /** `skipped`: told why, when the overlap policy or a concurrency key left it unstarted (the metrics' reason). */
  async trigger(
    id: string,
    body: unknown,
    fence: Fence = {},
    skipped?: (reason: "overlap" | "concurrency") => void,
  ): Promise<TriggerResult> {
    const { input } = bodyObject(body, ["input"]);
    if (input !== undefined) {
      if (!isJsonObject(input)) throw new OrbitError("INVALID_ARGUMENT", "input must be a JSON object");
      refuseSecretReferences(input);
    }
    // Triggers of schedules sharing a concurrency key under cancel_previous can still deadlock on
    // PostgreSQL (the cancel wakes the others' buffers; docs/storage.md § Locking, what is left):
    // run again, as the fire does, rather than answer 503 for a trigger that will go through.
    const result = await runAgainIfAborted(() =>
      this.o.store.transaction(async (tx): Promise<TriggerResult> => {
        // cancel_previous ends the previous execution: the schedule rows its end writes (this row, and
        // those sharing its concurrency key with a buffer to wake) are taken first, in one ordered
        // statement, before the cancel locks the execution: the order of a fire and of every end
        // (docs/storage.md § Locking). The row may move between the read and the lock; the cancel
        // below then takes what the new last execution's end writes, after this row.
        const seen = await tx.getSchedule(id);
        if (seen?.lastExecutionId && settingsOf(seen).overlap === "cancel_previous")
          await tx.lockSchedulesForEnd({ executionIds: [seen.lastExecutionId] });
        const row = await this.schedules.fenced(tx, id, fence);
        // Read once the row is held: triggers of one schedule take their instants (their ids, the
        // ledger's recorded_at) in the order the row lock serializes them; read before it, eight
        // concurrent triggers on PostgreSQL were created out of the order of their ids.
        const now = await this.schedules.now(tx);
        const s = settingsOf(row);
        // An override that could never start is bad input whatever the overlap policy decides: refused
        // before the decision, so a skip is not counted for it (docs/design.md § Changes).
        if (input !== undefined) await this.schedules.checkWorkflow(tx, { ...s, input });
        const blocker = await blockerOf(tx, row, s);
        const decision = decideTrigger(s.overlap, blocker);
        if (decision === "not_started") {
          const message =
            blocker === "key"
              ? `not started: another schedule's execution holds concurrency key ${s.concurrency_key}`
              : `not started: the previous execution of ${id} is still running (overlap: ${s.overlap})`;
          await tx.appendOccurrence({
            scheduleId: id,
            kind: "skipped",
            occurrenceMs: null,
            reason: blocker === "key" ? "concurrency" : "overlap",
            recordedMs: now,
          });
          const updated = await tx.updateSchedule(
            { ...row, skipped: row.skipped + 1 },
            { expectedRevision: row.revision },
          );
          if (updated === null) throw new OrbitError("CONFLICT", `schedule ${id} changed meanwhile; try again`);
          skipped?.(blocker === "key" ? "concurrency" : "overlap");
          return { started: false, execution_id: null, message, overlap: s.overlap };
        }
        let current = row;
        if (decision === "cancel_and_start" && row.lastExecutionId !== null) {
          await this.o.executions.cancel(row.lastExecutionId, { reason: cancelPreviousReason(id) }, tx);
          // The cancel may have woken this schedule's own buffer (a new due time and revision): keep it.
          current = (await tx.getSchedule(id)) ?? row;
        }
        // Triggers in the same millisecond get distinct ids (-2, -3, …): every "started" answer is
        // one execution. The row lock above serializes triggers of one schedule, so the check holds.
        // The probe starts after the schedule's last execution when that was one of them: probing
        // from the base made the n-th trigger of a millisecond look up n ids inside the row lock, and
        // 50 triggers of one millisecond (a burst, or a test's frozen clock) took 25-57 s on
        // PostgreSQL at load 15, past the pool's wait (test/faults/races.test.ts).
        const base = `${id}:manual:${new Date(now).toISOString()}`;
        let k = sameInstantSuffix(row.lastExecutionId, base);
        let executionId = k === 1 ? base : `${base}-${k}`;
        while ((await tx.getExecution(executionId)) !== null) executionId = `${base}-${++k}`;
        const c = compiledFor(row);
        const started = await this.o.executions.start(
          startRequestOf(row, s, c, { type: "manual", executionId, scheduledFor: now, now, input }),
          tx,
        );
        await tx.appendOccurrence({
          scheduleId: id,
          kind: "started",
          occurrenceMs: null,
          executionId,
          recordedMs: now,
        });
        const updated = await tx.updateSchedule(
          {
            ...current,
            fired: current.fired + (started.created ? 1 : 0),
            lastFireMs: now,
            lastExecutionId: executionId,
          },
          { expectedRevision: current.revision },
        );
        if (updated === null) throw new OrbitError("CONFLICT", `schedule ${id} changed meanwhile; try again`);
        return { started: true, execution_id: executionId, overlap: s.overlap };
      }),
    );
    // The ledger's bound holds for every writer, not only the fire: a paused schedule's triggers grew it.
    await this.pruneLedger(id);
    this.o.onChange?.();
    return result;
  }

  /** Keeps the newest --ledger-retention rows of the schedule's ledger, as a fire does. */
  private async pruneLedger(id: string): Promise<void> {
    await this.o.store.pruneOccurrences(id, this.o.ledgerRetention ?? LEDGER_RETENTION);
  }

  /**
   * Starts the occurrences of a past range (both ends inclusive) under their nominal ids, oldest
   * first, in batches so other work gets a turn; ids that exist are skipped, so a repeated backfill
   * starts nothing twice.
   */
  async backfill(id: string, body: unknown, fence: Fence = {}): Promise<BackfillResult> {
    const { start_at: startText, end_at: endText } = bodyObject(body, ["start_at", "end_at"]);
    if (typeof startText !== "string" || typeof endText !== "string") {
      throw new OrbitError("INVALID_ARGUMENT", "backfill needs start_at and end_at (RFC 3339)");
    }
    const from = parseInstant(startText, "start_at", "up");
    const to = parseInstant(endText, "end_at");
    if (to < from) throw new OrbitError("INVALID_ARGUMENT", "end_at is before start_at");
    const row = checkFence(await this.schedules.row(id), fence);
    const c = compiledFor(row);
    // Backfill is for the past: an occurrence still to come fires when it is due (or `trigger` now).
    // Starting it here would run it early and make its real fire a no-op.
    // Still to come means not due yet: with jitter, an occurrence a little before now may be due after it.
    const now = await this.schedules.now();
    let future = c.timing.nextAfter(Math.max(from - 1, now - c.jitterMs));
    while (future !== null && future <= now && dueTime(id, future, c.jitterMs) <= now)
      future = c.timing.nextAfter(future);
    if (future !== null && future <= to) {
      throw new OrbitError(
        "INVALID_ARGUMENT",
        `backfill starts past occurrences only: ${formatInstant(future)} is still to come; end the range before it (trigger starts one now)`,
      );
    }
    const total = c.timing.countBetween(from - 1, to);
    if (total > MAX_BACKFILL) {
      throw new OrbitError(
        "INVALID_ARGUMENT",
        `the range holds ${total} occurrences; one backfill starts at most ${MAX_BACKFILL}: split it`,
      );
    }
    const result: BackfillResult = {
      start_at: formatInstant(from),
      end_at: formatInstant(to),
      occurrences: total,
      started: 0,
      already_existed: 0,
    };
    let cursor = from - 1;
    let progressed = true;
    // The fence holds for the backfill's first batch: its own batches move the revision after it.
    // Every batch locks the schedule row before it starts anything (the order a fire and a trigger
    // take, docs/storage.md § Locking), so a change between two batches (a PATCH, a fire, another
    // backfill) is waited for and then built on, not a conflict.
    let first = true;
    while (progressed && result.started + result.already_existed < total) {
      progressed = false;
      await this.o.store.transaction(async (tx) => {
        const current = first
          ? await this.schedules.fenced(tx, id, fence)
          : await tx.getSchedule(id, { forUpdate: true });
        first = false;
        if (current === null || current.createdMs !== row.createdMs) {
          throw new OrbitError(
            "NOT_FOUND",
            `schedule ${id} was deleted during the backfill, after ${result.started} of its ${total} occurrences started (they stay)`,
          );
        }
        const s = settingsOf(current);
        // A new timing between two batches: the rest of the range would start the old timing's
        // occurrences with the new settings (a tester's PATCH of cron and input: 9,900 per-second
        // executions of a daily schedule). The batches built so far stay, as after a delete.
        if (occurrenceKey(s) !== occurrenceKey(settingsOf(row))) {
          throw new OrbitError(
            "CONFLICT",
            `schedule ${id}'s timing changed during the backfill, after ${result.started} of its ${total} occurrences started (they stay); backfill the rest again under the new timing`,
          );
        }
        let fired = 0;
        for (let i = 0; i < BACKFILL_BATCH; i++) {
          const o = c.timing.nextAfter(cursor);
          if (o === null || o > to) break;
          cursor = o;
          progressed = true;
          const executionId = occurrenceExecutionId(id, o);
          const now = await this.schedules.now(tx);
          const r = await this.o.executions.start(
            startRequestOf(current, s, c, { type: "backfill", executionId, scheduledFor: o, now }),
            tx,
          );
          if (r.created) {
            result.started++;
            fired++;
            await tx.appendOccurrence({
              scheduleId: id,
              kind: "started",
              occurrenceMs: o,
              executionId,
              recordedMs: now,
            });
          } else result.already_existed++;
        }
        if (fired > 0) {
          const updated = await tx.updateSchedule(
            { ...current, fired: current.fired + fired },
            { expectedRevision: current.revision },
          );
          if (updated === null) throw new OrbitError("CONFLICT", `schedule ${id} changed meanwhile; try again`);
        }
      });
      await new Promise((resolve) => setImmediate(resolve));
    }
    // Up to 10,000 rows at once: the ledger keeps its newest --ledger-retention rows, as after a fire.
    if (result.started > 0) await this.pruneLedger(id);
    return result;
  }
}

/**
 * The suffix a trigger's id probe tries first (1: `base` itself): the one after `last` when the
 * schedule's last execution is `base` (2) or `base-k` (k + 1).
 */
function sameInstantSuffix(last: string | null, base: string): number {
  if (last === base) return 2;
  if (last === null || !last.startsWith(`${base}-`)) return 1;
  const k = Number(last.slice(base.length + 1));
  return Number.isSafeInteger(k) && k >= 2 ? k + 1 : 1;
}
