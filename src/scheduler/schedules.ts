/**
 * Schedules as a service: create, read, list, update, delete, with the revision fences of docs/design.md § Changes.
 * Pause, resume, trigger and backfill are in actions.ts; the list and search reads in schedule-list.ts. Every write moves `revision` and wakes the
 * firing loop; every read is a view of one row plus its newest ledger rows.
 */

import { isDeepStrictEqual } from "node:util";
import type { Clock } from "../domain/clock.js";
import { OrbitError } from "../domain/errors.js";
import type { JsonObject } from "../domain/json.js";
import { stringifyJsonText } from "../domain/json-text.js";
import { withRequestPatternBudget } from "../domain/safe-pattern.js";
import type { ScheduleSettings } from "../domain/schedule.js";
import { rowIdPage } from "../engine/cursor.js";
import type { Executions } from "../engine/executions.js";
import { runAgainIfAborted } from "../engine/run-again.js";
import type { Workflows } from "../engine/workflows.js";
import type { OccurrenceRow, ScheduleRow } from "../store/rows.js";
import type { Store, StoreOps } from "../store/store.js";
import { type CompiledTiming, compileTiming } from "../time/schedule-timing.js";
import { compiledFor, occurrenceKey } from "./compiled.js";
import { dueTime } from "./decide.js";
import { checkFence, type Fence } from "./fence.js";
import type { FireReport } from "./fire.js";
import { bufferedOf } from "./fire-plan.js";
import type { LoopOptions } from "./loop.js";
import { NOTIFICATIONS_READ, notifyFailure } from "./notify-failure.js";
import { notifiedBy } from "./outcomes.js";
import { decideBeforeChange, lockForPause } from "./pause-decide.js";
import { recomputeFrom } from "./recompute.js";
import { type ListSchedulesQuery, listSchedules, type SchedulePage } from "./schedule-list.js";
import { mergeSettings, type ValidatedSchedule, validateSettings } from "./settings.js";
import { occurrenceView, scheduleViews } from "./view.js";

export type { ListSchedulesQuery, SchedulePage } from "./schedule-list.js";

export interface SchedulesOptions {
  store: Store;
  clock: Clock;
  workflows: Workflows;
  executions: Executions;
  graceMs: number;
  /** Ledger rows kept per schedule (`--ledger-retention`). Default LEDGER_RETENTION. */
  ledgerRetention?: number;
  /**
   * `--cluster shared`: the database clock (the one the firing loop compares due times with), for
   * every instant a write decides with or stamps (docs/cluster.md § shared: every server fires). Default:
   * `clock`.
   */
  dueClock?: LoopOptions["dueClock"];
  /** Called after every committed change, so the firing loop looks again. */
  onChange?: () => void;
  /** A fire a change made first (a pause decides what came due before it), after its commit: the loop's hook. */
  onFire?: LoopOptions["onFire"];
}

/** The input's JSON text as the request wrote it, when JavaScript would write it differently (json-text.ts). */
export interface InputText {
  inputText?: string | undefined;
}

/**
 * The stored settings: the validated ones, plus the input's text. Kept when JavaScript would write
 * a number differently (`120.0`), and whenever the input has keys: PostgreSQL's jsonb stores an
 * object's keys in its own order (shortest first), and a schedule shows its input as it was given
 * on both stores (docs/storage.md § JSON columns).
 */
function withInputText(settings: ScheduleSettings, inputText: string | undefined): JsonObject {
  const spec = { ...settings } as unknown as JsonObject;
  const text = inputText ?? (Object.keys(settings.input).length > 0 ? stringifyJsonText(settings.input) : undefined);
  if (text !== undefined) spec.input_text = text;
  return spec;
}

/**
 * A `compileTiming` that compiles identical timing settings once: compiled timings are pure, so the
 * schedules of one batch (a batch create, an apply) share one compilation and one five-year check.
 */
export function sharedCompile(): typeof compileTiming {
  const compiled = new Map<string, CompiledTiming>();
  return (t, at) => {
    const key = `${t.cron}\u0000${t.interval}\u0000${t.timezone}\u0000${t.dst}\u0000${t.startAt}\u0000${t.endAt}`;
    let c = compiled.get(key);
    if (c === undefined) {
      c = compileTiming(t, at);
      compiled.set(key, c);
    }
    return c;
  };
}

const alreadyExists = (i: number, id: string): OrbitError =>
  new OrbitError("ALREADY_EXISTS", `schedules[${i}]: schedule ${id} already exists`);

/**
 * Inserts new schedule rows with one statement; a row whose id another transaction inserted
 * meanwhile (after this one read which ids exist) refuses the whole batch as `refuse(index, id)`.
 */
export async function insertAll(
  tx: StoreOps,
  rows: readonly ScheduleRow[],
  refuse: (i: number, id: string) => Error,
): Promise<void> {
  await continueRevisions(tx, rows);
  // In id order, as every lock on schedule rows is taken (docs/storage.md § Locking): on PostgreSQL
  // an insert waits for another transaction's uncommitted row of the same id, and two batches
  // creating the same ids in opposite orders would wait on each other.
  const inserted = await tx.insertSchedules([...rows].sort((a, b) => (a.scheduleId < b.scheduleId ? -1 : 1)));
  if (inserted.length === rows.length) return;
  const done = new Set(inserted);
  const i = rows.findIndex((r) => !done.has(r.scheduleId));
  throw refuse(i, rows[i]?.scheduleId ?? "");
}

/**
 * New rows whose id belonged to a deleted schedule continue past its last revision: an If-Match or
 * expected_revision read from the deleted one cannot pass for the new one (docs/design.md § Changes).
 */
async function continueRevisions(tx: StoreOps, rows: readonly ScheduleRow[]): Promise<void> {
  const deleted = await tx.deletedRevisions(rows.map((r) => r.scheduleId));
  for (const row of rows) row.revision = (deleted.get(row.scheduleId) ?? 0) + 1;
}

export class Schedules {
  constructor(readonly o: SchedulesOptions) {}

  /**
   * The instant a schedule write decides with (start_at past or future, the first next fire, a
   * resume's catch-up) and stamps (created_at, updated_at, the ledger): the database clock in
   * shared mode, so that no server's own clock skew moves a schedule. Inside a transaction, read
   * on its own connection: a second one from the pool while holding the first starved the pool
   * when 50 writes of one schedule waited on its row (test/faults/races.test.ts).
   */
  async now(tx?: StoreOps): Promise<number> {
    return this.o.dueClock ? this.o.dueClock(tx) : this.o.clock.now();
  }

  notFound(id: string): OrbitError {
    return new OrbitError("NOT_FOUND", `schedule ${id} does not exist`);
  }

  /** The row, checked against a fence; NOT_FOUND, PRECONDITION_FAILED or CONFLICT otherwise. */
  async fenced(tx: StoreOps, id: string, fence: Fence): Promise<ScheduleRow> {
    const row = await tx.getSchedule(id, { forUpdate: true });
    if (row === null) throw this.notFound(id);
    return checkFence(row, fence);
  }

  /** Checks what only the database knows: the workflow exists and the input validates. */
  async checkWorkflow(tx: StoreOps, s: ScheduleSettings): Promise<void> {
    const workflow = await this.o.workflows.resolve(s.workflow, s.version ?? null, tx);
    this.o.workflows.validateInput(workflow, s.input);
  }

  /**
   * Where a schedule stands after a (re)computation from `now`; `runs`: the occurrences it started
   * so far, so a schedule at its `max_runs` stays ended (docs/outcomes.md § Run-count limit).
   */
  timingState(v: ValidatedSchedule, now: number, runs = 0): Pick<ScheduleRow, "nextFireMs" | "dueMs" | "state"> {
    const spent = v.settings.max_runs !== undefined && runs >= v.settings.max_runs;
    const next = spent ? null : v.timing.timing.nextAfter(now);
    const due = next === null ? null : dueTime(v.settings.schedule_id, next, v.jitterMs);
    // Paused and ended (max_runs spent, end_at past) stays ended, as a pause leaves an ended schedule.
    if (v.settings.paused) return { nextFireMs: next, dueMs: null, state: next === null ? "ended" : "paused" };
    return { nextFireMs: next, dueMs: due, state: next === null ? "ended" : "active" };
  }

  async create(body: Record<string, unknown>, text: InputText = {}): Promise<JsonObject> {
    const now = await this.now();
    const v = validateSettings(body, now);
    const exists = () => new OrbitError("ALREADY_EXISTS", `schedule ${v.settings.schedule_id} already exists`);
    const row = await this.o.store.transaction(async (tx) => {
      // An id that exists is the answer before anything about the workflow (as a batch answers).
      if ((await tx.getSchedules([v.settings.schedule_id])).length > 0) throw exists();
      await this.checkWorkflow(tx, v.settings);
      const row = this.newRow(v, text, now);
      await continueRevisions(tx, [row]);
      if (!(await tx.insertSchedule(row))) throw exists();
      return row;
    });
    this.o.onChange?.();
    return this.view(row, this.o.store, now);
  }

  /**
   * Creates many schedules in one transaction, all or none (docs/api.md § Creating many schedules):
   * the first invalid or existing one refuses the whole batch, naming its index, and nothing is
   * created. One transaction instead of one per schedule is what makes 10,000 take about a second;
   * the answer is the ids only (a full view of each would cost as much again to build and send).
   */
  async createMany(items: readonly { body: Record<string, unknown>; text?: InputText }[]): Promise<string[]> {
    // Every input it checks draws from one budget (docs/security.md § Input schemas).
    return withRequestPatternBudget(async () => {
      const now = await this.now();
      const at = <T>(i: number, fn: () => T): T => {
        try {
          return fn();
        } catch (err) {
          if (err instanceof OrbitError) throw new OrbitError(err.code, `schedules[${i}]: ${err.message}`);
          throw err;
        }
      };
      const compile = sharedCompile();
      const validated = items.map((item, i) => at(i, () => validateSettings(item.body, now, compile)));
      const seen = new Set<string>();
      validated.forEach((v, i) => {
        const id = v.settings.schedule_id;
        if (seen.has(id)) throw new OrbitError("INVALID_ARGUMENT", `schedules[${i}]: schedule_id ${id} appears twice`);
        seen.add(id);
      });
      // Run again if PostgreSQL aborts it to break a deadlock: batches creating overlapping ids
      // wait on each other's inserts as applies do (src/scheduler/apply.ts).
      const rows = await runAgainIfAborted(() =>
        this.o.store.transaction(async (tx) => {
          // One read of the ids that exist and one insert for the batch, instead of a statement or two per
          // schedule (a round trip each on PostgreSQL); the checks still run in the order given, so the
          // first refusal is the one the one-by-one loop would have named.
          const existing = new Set((await tx.getSchedules([...seen])).map((r) => r.scheduleId));
          const rows: ScheduleRow[] = [];
          for (const [i, v] of validated.entries()) {
            try {
              await this.checkWorkflow(tx, v.settings);
            } catch (err) {
              if (err instanceof OrbitError) throw new OrbitError(err.code, `schedules[${i}]: ${err.message}`);
              throw err;
            }
            const row = this.newRow(v, items[i]?.text ?? {}, now);
            if (existing.has(row.scheduleId)) throw alreadyExists(i, row.scheduleId);
            rows.push(row);
          }
          await insertAll(tx, rows, (i, id) => alreadyExists(i, id));
          return rows;
        }),
      );
      if (rows.length) this.o.onChange?.();
      return rows.map((row) => row.scheduleId);
    });
  }

  newRow(v: ValidatedSchedule, text: InputText, now: number): ScheduleRow {
    // An update or a resume drops the note of a schedule that is not paused; a create refuses it.
    if (!v.settings.paused && v.settings.pause_note !== undefined) {
      throw new OrbitError(
        "INVALID_ARGUMENT",
        "pause_note is why a schedule is paused: give it with paused: true, or leave it out",
      );
    }
    return {
      scheduleId: v.settings.schedule_id,
      workflow: v.settings.workflow,
      version: v.settings.version ?? null,
      input: v.settings.input,
      spec: withInputText(v.settings, text.inputText),
      paused: v.settings.paused,
      pauseNote: v.settings.pause_note ?? null,
      ...this.timingState(v, now),
      retryMs: null,
      revision: 1,
      fired: 0,
      skipped: 0,
      runs: 0,
      lastFireMs: null,
      lastExecutionId: null,
      lastError: null,
      buffered: [],
      concurrencyKey: v.settings.concurrency_key ?? null,
      createdMs: now,
      updatedMs: now,
    };
  }

  async get(id: string): Promise<JsonObject> {
    const row = await this.o.store.getSchedule(id);
    if (row === null) throw this.notFound(id);
    const view = await this.view(row);
    // Only the webhooks it still calls: one taken out of its settings (or its workflow's) no longer says anything.
    const urls = new Set((await notifiedBy(this.o.store, row.spec.notify, row.workflow)).map((t) => t.url));
    if (urls.size > 0) {
      // Not a deleted predecessor's of the same id: a new schedule said "notify failing" for them (a tester).
      const own = (await this.o.store.listNotifications(id, { limit: NOTIFICATIONS_READ })).filter(
        (n) => n.createdMs >= row.createdMs,
      );
      const failure = notifyFailure(own, urls);
      if (failure !== null) view.notify_failure = failure;
    }
    return view;
  }

  /** The stored row (for access checks that need the workflow before acting). */
  async row(id: string): Promise<ScheduleRow> {
    const row = await this.o.store.getSchedule(id);
    if (row === null) throw this.notFound(id);
    return row;
  }

  async view(row: ScheduleRow, tx: StoreOps = this.o.store, now?: number): Promise<JsonObject> {
    const [view] = await scheduleViews(tx, [row], now ?? (await this.now()));
    if (view === undefined) throw new Error(`no view of schedule ${row.scheduleId}`);
    return view;
  }

  /** A page of schedules, or a search (schedule-list.ts). */
  list(query: ListSchedulesQuery = {}): Promise<SchedulePage> {
    // Overdue as orbit_schedules_overdue counts it: due longer ago than the misfire grace.
    return listSchedules(this.o.store, () => this.now(), { ...query, overdueAfterMs: this.o.graceMs });
  }

  /**
   * PATCH: the settings merged with the patch are validated as a whole; the next occurrence is
   * recomputed from now; counters, the last execution and the buffer stay.
   */
  async update(
    id: string,
    patch: Record<string, unknown>,
    fence: Fence = {},
    text: InputText = {},
  ): Promise<JsonObject> {
    const fires: FireReport[] = [];
    let at = 0;
    const pausing = patch.paused === true;
    const attempt = () =>
      this.o.store.transaction(async (tx) => {
        fires.length = 0;
        if (pausing) await lockForPause(tx, id);
        const row = await this.fenced(tx, id, fence);
        // Read once the row is held (see Actions.write): never before the occurrences a fire decided.
        const now = await this.now(tx);
        at = now;
        return this.view(await this.updateIn(tx, row, patch, now, text, undefined, fires), tx, now);
      });
    // As Actions.write: a pause that PostgreSQL aborted to break a deadlock runs again.
    const out = pausing ? await runAgainIfAborted(attempt) : await attempt();
    this.reportFires(fires, at);
    this.o.onChange?.();
    return out;
  }

  /** Gives the fires a committed change made first to the loop's hook (the metrics, the polls' wake-up). */
  reportFires(fires: readonly FireReport[], at: number): void {
    for (const report of fires) this.o.onFire?.(report, at);
  }

  /**
   * The update of `row` by `patch` inside `tx` (PATCH, and `apply` for many at once): validated as
   * a whole, the workflow checked by `check`, written with a compare-and-set on the revision.
   */
  async updateIn(
    tx: StoreOps,
    row: ScheduleRow,
    patch: Record<string, unknown>,
    now: number,
    text: InputText = {},
    check: (tx: StoreOps, s: ScheduleSettings) => Promise<void> = (t, s) => this.checkWorkflow(t, s),
    fires: FireReport[] = [],
  ): Promise<ScheduleRow> {
    const id = row.scheduleId;
    const { input_text: keptText, ...current } = row.spec as unknown as ScheduleSettings & { input_text?: string };
    const v = validateSettings(mergeSettings(current, patch), now);
    const pausing = patch.paused === true && !row.paused;
    const retimed = occurrenceKey(current) !== occurrenceKey(v.settings);
    const spentBy = (r: ScheduleRow): boolean =>
      v.settings.max_runs !== undefined && r.runs + r.buffered.length >= v.settings.max_runs;
    const ends = spentBy(row);
    // A pause, a new timing or a max_runs that ends the schedule decides first what came due before
    // it under the settings it replaces (pause-decide.ts): what is due fires, a refused start waiting
    // for its retry becomes a dead letter. Recomputed without it, a new timing dropped both with no record.
    if (pausing || retimed || (ends && v.settings.max_runs !== current.max_runs)) {
      const decided = await decideBeforeChange(tx, row, now, this.o, retimed);
      fires.push(...decided.reports);
      row = decided.row;
    }
    // The workflow and the input are checked when the update names one of them: a pause or a new
    // description of a schedule whose latest workflow version no longer takes its stored input was
    // refused with the input's error (its fires record that error, docs/outcomes.md).
    if ("workflow" in patch || "version" in patch || "input" in patch) await check(tx, v.settings);
    const pauseChange = patch.paused !== undefined && v.settings.paused !== row.paused;
    // Same timing, same pause and run limit (a description, the input, a policy): the next
    // occurrence stays where the fires left it. Recomputed from now, an update dropped what a loop
    // running behind had not fired yet, with no account in the ledger; a start being retried is
    // tried again at once, with the new settings.
    // A new jitter or catch-up window keeps the occurrences too: recomputed, a paused schedule's
    // span was dropped, and a catch-up resume then found nothing to catch up.
    // A new max_runs keeps them too unless it is spent already (recomputed, a refused start waiting
    // for its retry and the occurrences due behind it were dropped without a record).
    // A pause keeps the next occurrence too, as POST …/pause does: recomputed from now, an occurrence
    // whose jitter put its due time after the pause was dropped, and `resume {"catch_up": true}`
    // then found nothing of it.
    const keepTiming = !retimed && (v.settings.paused === row.paused || pausing) && row.state !== "ended";
    const spent = spentBy(row);
    const rejittered =
      row.dueMs !== null && row.nextFireMs !== null && row.retryMs === null && current.jitter !== v.settings.jitter
        ? dueTime(id, row.nextFireMs, v.jitterMs)
        : row.dueMs;
    const timing = keepTiming
      ? spent
        ? { nextFireMs: null, dueMs: null, state: "ended" as const }
        : v.settings.paused
          ? { nextFireMs: row.nextFireMs, dueMs: null, state: "paused" as const }
          : {
              nextFireMs: row.nextFireMs,
              dueMs: row.retryMs !== null && row.dueMs !== null ? Math.min(row.dueMs, now) : rejittered,
              state: row.state,
            }
      : this.timingState(v, await recomputeFrom(tx, row, now), row.runs + row.buffered.length);
    const next: ScheduleRow = {
      ...row,
      workflow: v.settings.workflow,
      version: v.settings.version ?? null,
      // The input as stored unless the patch gives one: the settings' copy comes from the spec,
      // which PostgreSQL keeps as JSONB (keys reordered), and executions are started from this.
      input: "input" in patch ? v.settings.input : row.input,
      spec: withInputText(v.settings, "input" in patch ? text.inputText : keptText),
      paused: v.settings.paused,
      // A note given, or cleared (`"pause_note": null`, `--unset pause_note`: it was kept), else the
      // one it had unless the pause itself changed.
      pauseNote: v.settings.paused
        ? "pause_note" in patch
          ? (v.settings.pause_note ?? null)
          : pauseChange
            ? null
            : row.pauseNote
        : null,
      // Buffered occurrences count toward max_runs already (`runs` counts them when they start).
      ...timing,
      retryMs: null,
      concurrencyKey: v.settings.concurrency_key ?? null,
      updatedMs: now,
    };
    // Ended by max_runs with occurrences still buffered: it lives on until they drain, paused if it
    // is (a paused one read `state: active` with `paused: true` after any update: a tester's model).
    if (next.state === "ended" && row.buffered.length > 0) next.state = next.paused ? "paused" : "active";
    // What the buffer holds is due at once after an update that leaves the schedule firing, as after
    // a resume (docs/scheduling.md § Decisions): the update may have removed what blocked it (an
    // unpause, `allow`, no concurrency key) or come between its blocker's end and its fire; left to
    // the new timing's next fire, it waited that long (a day for a daily schedule). A fire that
    // finds it still blocked changes nothing but the due time.
    const oldest = bufferedOf(row)[0];
    if (oldest !== undefined && next.state === "active" && !next.paused) {
      const woken = Math.min(oldest, now);
      if (next.dueMs === null || woken < next.dueMs) next.dueMs = woken;
    }
    // Nothing changes (an empty PATCH, the values it has): nothing is written and the revision stays,
    // or other clients' If-Match fences failed for nothing (a tester).
    if (isDeepStrictEqual({ ...next, updatedMs: row.updatedMs }, row)) return row;
    const updated = await tx.updateSchedule(next, { expectedRevision: row.revision });
    if (updated === null) throw new OrbitError("CONFLICT", `schedule ${id} changed meanwhile; read it again`);
    return updated;
  }

  async delete(id: string, fence: Fence = {}): Promise<void> {
    await this.o.store.transaction(async (tx) => {
      const row = await this.fenced(tx, id, fence);
      if (!(await tx.deleteSchedule(id, row.revision))) {
        throw new OrbitError("CONFLICT", `schedule ${id} changed meanwhile; read it again`);
      }
    });
    this.o.onChange?.();
  }

  async occurrences(
    id: string,
    query: { cursor?: string; limit?: number } = {},
  ): Promise<{ occurrences: ReturnType<typeof occurrenceView>[]; next_cursor: string | null }> {
    await this.row(id);
    const { limit, beforeId } = rowIdPage(query);
    const rows: OccurrenceRow[] = await this.o.store.listOccurrences(id, {
      limit: limit + 1,
      ...(beforeId !== undefined ? { beforeId } : {}),
    });
    const page = rows.slice(0, limit);
    // The ledger links each started row to its execution's status (a started run that failed shows FAILED).
    const ids = page.flatMap((r) => (r.kind === "started" && r.executionId !== null ? [r.executionId] : []));
    const statuses = await this.o.store.getExecutionStatuses(ids);
    const failed = ids.filter((id) => statuses.get(id) === "FAILED");
    const errorTypes = await this.o.store.getExecutionErrorTypes(failed);
    return {
      occurrences: page.map((r) => occurrenceView(r, statuses, errorTypes)),
      next_cursor: rows.length > limit ? String(page[page.length - 1]?.id) : null,
    };
  }

  /** The compiled timing of a stored schedule (for previews of stored schedules). */
  compiled(row: ScheduleRow): ReturnType<typeof compiledFor> {
    return compiledFor(row);
  }
}
