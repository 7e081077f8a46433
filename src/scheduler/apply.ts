/**
 * `POST /v1/schedules/apply` (`orbit schedule apply`, docs/cli.md): make the stored schedules match a
 * file, in ONE transaction: every entry is validated as the write it becomes and written, then
 * (with `prune`) the schedules of the same apply scope that the file does not name are deleted.
 * Any refusal rolls the whole file back, so a file with one bad entry changes nothing; a dry run
 * runs exactly the same code and rolls back at the end, so it refuses exactly what the real run would.
 *
 * The scope is a set of labels (`--owner NAME` is `orbit/owner=NAME`, `--selector k=v`): apply
 * stamps them on every schedule it writes, and prune deletes only schedules that carry all of them.
 * A hand-made schedule, or one of another apply set, is never pruned.
 *
 * The file may declare workflows (`kind: workflow`): they are registered first, in the same
 * transaction, exactly as `POST /v1/workflows` would, so its schedules may name them before any
 * worker has run. `allowUnregistered` accepts schedules whose workflow is not registered at all:
 * they are stored with `last_error` saying so (their input is checked once the workflow is).
 */

import { invalidArgument, OrbitError } from "../domain/errors.js";
import { MAX_PATTERN_WEIGHT, schemaPatternWeight } from "../domain/input-schema.js";
import type { JsonValue } from "../domain/json.js";
import { RawJson } from "../domain/json-text.js";
import { withRequestPatternBudget } from "../domain/safe-pattern.js";
import { DEFAULT_APPLY_OWNER, OWNER_LABEL, type ScheduleSettings } from "../domain/schedule.js";
import { SETTING_KEYS } from "../domain/setting-table.js";
import { runAgainIfAborted } from "../engine/run-again.js";
import type { RegisterWorkflowRequest } from "../engine/workflows.js";
import type { ScheduleRow } from "../store/rows.js";
import type { StoreOps } from "../store/store.js";
import { changedSettings, type SettingChange, scopedLabels } from "./apply-diff.js";
import { type Labels, matchesSelector, selectorText, validateLabels } from "./labels.js";
import { type InputText, insertAll, type Schedules, sharedCompile } from "./schedules.js";
import { validateSettings } from "./settings.js";

export interface ApplyRequest {
  /** The file's entries: a new schedule's settings, or the settings an existing one should have. */
  schedules: readonly Record<string, unknown>[];
  /** The input's JSON text per entry, when it must be kept as written (json-text.ts). */
  inputTexts?: readonly (string | undefined)[];
  /** `kind: workflow` entries: registered first, as `POST /v1/workflows` would. */
  workflows?: readonly Record<string, unknown>[];
  /** Accept schedules naming a workflow (or pinned version) that is not registered. */
  allowUnregistered?: boolean;
  /** The apply set's labels: stamped on every schedule written, and what prune selects by. */
  scope?: unknown;
  prune?: boolean;
  dryRun?: boolean;
  /** Access control: throws when the caller may not write schedules of this workflow. */
  requireWorkflow?: (workflow: string) => void;
  /**
   * Access control: whether the caller may see a stored schedule of this workflow. One it may not
   * see is, to it, an id that is taken (409, as a create answers, without its workflow or labels),
   * and prune leaves it alone (docs/security.md § Objects the caller may not see). Default: all.
   */
  visible?: (workflow: string) => boolean;
}

export type ApplyAction = "create" | "update" | "unchanged" | "delete";

export interface ApplyStep {
  action: ApplyAction;
  schedule_id: string;
  /** update: each changed setting, its stored value and the file's. */
  changes?: SettingChange[];
  /** create/update with allowUnregistered: why the schedule cannot start executions yet. */
  waiting?: string;
}

/** A `kind: workflow` entry: registered now, or already registered identically. */
export interface WorkflowStep {
  action: "register" | "unchanged";
  name: string;
  version: string;
}

export interface ApplyResult {
  dry_run: boolean;
  scope: Labels;
  workflows: WorkflowStep[];
  steps: ApplyStep[];
  created: number;
  updated: number;
  unchanged: number;
  deleted: number;
}

/** Thrown at the end of a dry run so the transaction rolls back; carries the answer out. */
class DryRunDone extends Error {
  constructor(readonly result: ApplyResult) {
    super("dry run");
  }
}

/**
 * An id the apply read as absent was created by another transaction before this one's insert (on
 * PostgreSQL a locking read of a missing row locks nothing): the apply runs again, and finds it.
 */
class CreatedMeanwhile extends Error {
  constructor(readonly refusal: OrbitError) {
    super(refusal.message);
  }
}

/** The pattern weight the workflows of one apply may register in all: five schemas at their limit. */
const MAX_APPLY_PATTERN_WEIGHT = 5 * MAX_PATTERN_WEIGHT;

/** How many times an apply runs again after losing a create to another writer. */
const CREATE_RACE_RETRIES = 3;

export async function applySchedules(schedules: Schedules, req: ApplyRequest): Promise<ApplyResult> {
  // Every input it checks draws from one budget (docs/security.md § Input schemas).
  return withRequestPatternBudget(async () => {
    const scope = validateLabels(req.scope ?? {}, "scope") ?? {};
    if (req.prune === true && Object.keys(scope).length === 0) {
      throw invalidArgument(
        "prune needs a scope (orbit schedule apply --owner NAME or --selector key=value): it deletes only the schedules that carry all of its labels",
      );
    }
    let result: ApplyResult | undefined;
    for (let attempt = 0; result === undefined; attempt++) {
      try {
        // Run again when PostgreSQL aborted it to break a deadlock: concurrent applies creating
        // overlapping new ids deadlocked in their ordered insert … ON CONFLICT (a tester: 6 of 120
        // answered 503), which the documented "every apply of such a race answers 200" rules out.
        result = await runAgainIfAborted(() => applyOnce(schedules, req, scope));
      } catch (err) {
        if (err instanceof DryRunDone) return err.result;
        if (!(err instanceof CreatedMeanwhile)) throw err;
        if (attempt === CREATE_RACE_RETRIES) throw err.refusal;
      }
    }
    if (result.created + result.updated + result.deleted > 0) schedules.o.onChange?.();
    return result;
  });
}

/** One try of an apply, in one transaction. */
function applyOnce(schedules: Schedules, req: ApplyRequest, scope: Labels): Promise<ApplyResult> {
  const requireWorkflow = req.requireWorkflow ?? (() => undefined);
  const visible = req.visible ?? (() => true);
  return schedules.o.store.transaction(async (tx) => {
    const workflows: WorkflowStep[] = [];
    // Each schema is compiled as it is registered: their patterns together are bounded as one
    // schema's are (40 schemas just under that limit held the server 20 s, a dry run too).
    const weight = (req.workflows ?? []).reduce(
      (n: number, w) => n + schemaPatternWeight((w as { input_schema?: unknown }).input_schema),
      0,
    );
    if (weight > MAX_APPLY_PATTERN_WEIGHT) {
      throw invalidArgument(
        `the workflows of this apply have patterns ${weight.toLocaleString("en-US")} characters long in all (each \\p{…} counted as 50), and one apply may register at most ${MAX_APPLY_PATTERN_WEIGHT.toLocaleString("en-US")}: registering compiles them while the server waits; register them over several applies`,
      );
    }
    for (const [i, w] of (req.workflows ?? []).entries()) {
      try {
        const { workflow, created } = await schedules.o.workflows.register(w as unknown as RegisterWorkflowRequest, tx);
        workflows.push({
          action: created ? "register" : "unchanged",
          name: workflow.name,
          version: workflow.version,
        });
      } catch (err) {
        if (err instanceof OrbitError) throw new OrbitError(err.code, `workflows[${i}]: ${err.message}`, err.details);
        throw err;
      }
    }
    const check = checkOf(schedules, req.allowUnregistered === true);
    const steps: ApplyStep[] = [];
    const named = new Set<string>();
    // The stored rows of every id the file names, in one locking read, and the new rows written with
    // one insert after the loop (a statement or two per entry is a round trip each on PostgreSQL).
    const ids = new Set(req.schedules.map((e) => e.schedule_id).filter((id): id is string => typeof id === "string"));
    // With prune, the rows it may delete are locked in the same read, all in id order: locked after
    // the named ones, two applies naming different rows of one scope took them in opposite orders,
    // and on PostgreSQL 42 of 80 concurrent applies deadlocked (503), others read a revision that
    // changed before their delete (409) (docs/storage.md § Locking).
    // And two applies that prune one scope run one after the other: locking rows alone, each
    // missed the rows the other was creating, and the scope ended as both files together.
    if (req.prune === true) {
      await tx.lockApplyScope(JSON.stringify(Object.entries(scope).sort(([a], [b]) => (a < b ? -1 : 1))));
    }
    const candidates = req.prune === true ? await scopeIds(tx, scope) : [];
    const locked = await tx.getSchedules([...new Set([...ids, ...candidates])], { forUpdate: true });
    // Read once the rows are held, as a PATCH does (docs/design.md § Changes): read before, while a
    // fire held a row, it fell before the occurrence that fire decided, and the recomputed timing
    // decided it again (a second `started` row, or `skipped` beside `started`; a tester's apply at
    // a second's boundary on PostgreSQL).
    const now = await schedules.now(tx);
    const stored = new Map(locked.filter((r) => ids.has(r.scheduleId)).map((r) => [r.scheduleId, r]));
    const batch: Batch = { stored, compile: sharedCompile(), creates: [], where: [] };
    for (const [i, entry] of req.schedules.entries()) {
      const id = entry.schedule_id;
      const where = `schedules[${i}]${typeof id === "string" ? ` (${id})` : ""}`;
      try {
        if (typeof id !== "string" || id === "") throw invalidArgument("schedule_id is required");
        if (named.has(id)) throw invalidArgument(`schedule_id ${id} appears twice`);
        named.add(id);
        const text = { inputText: req.inputTexts?.[i] };
        const step = await applyEntry(
          schedules,
          tx,
          entry,
          scope,
          now,
          text,
          { requireWorkflow, visible },
          check,
          batch,
        );
        if (step.action === "create") batch.where.push(where);
        steps.push(step);
      } catch (err) {
        if (err instanceof OrbitError) throw new OrbitError(err.code, `${where}: ${err.message}`, err.details);
        throw err;
      }
    }
    await insertAll(
      tx,
      batch.creates,
      (i, id) =>
        new CreatedMeanwhile(new OrbitError("ALREADY_EXISTS", `${batch.where[i]}: schedule ${id} already exists`)),
    );
    if (req.prune === true) {
      const others = locked.filter((r) => !named.has(r.scheduleId));
      steps.push(...(await prune(tx, others, scope, requireWorkflow, visible)));
    }
    const n = (a: ApplyAction): number => steps.filter((s) => s.action === a).length;
    const out: ApplyResult = {
      dry_run: req.dryRun === true,
      scope,
      workflows,
      steps,
      created: n("create"),
      updated: n("update"),
      unchanged: n("unchanged"),
      deleted: n("delete"),
    };
    if (req.dryRun === true) throw new DryRunDone(out);
    return out;
  });
}

/**
 * The workflow check of each written schedule: the engine's (registered, input valid), or, with
 * allowUnregistered, a missing workflow turned into the reason the schedule waits.
 */
type Check = (tx: StoreOps, s: ScheduleSettings) => Promise<string | undefined>;

function checkOf(schedules: Schedules, allowUnregistered: boolean): Check {
  return async (tx, s) => {
    try {
      await schedules.checkWorkflow(tx, s);
      return undefined;
    } catch (err) {
      if (!allowUnregistered || !(err instanceof OrbitError) || err.code !== "NOT_FOUND") throw err;
      return `${err.message}; no execution starts until it is (applied with --allow-unregistered)`;
    }
  };
}

/** What the entries of one apply share: the stored rows read at the start, the rows to create. */
interface Batch {
  stored: ReadonlyMap<string, ScheduleRow>;
  compile: ReturnType<typeof sharedCompile>;
  creates: ScheduleRow[];
  /** Each create's `schedules[i] (id)`, for a refusal of the insert. */
  where: string[];
}

async function applyEntry(
  schedules: Schedules,
  tx: StoreOps,
  entry: Record<string, unknown>,
  scope: Labels,
  now: number,
  text: InputText,
  access: { requireWorkflow: (workflow: string) => void; visible: (workflow: string) => boolean },
  check: Check,
  batch: Batch,
): Promise<ApplyStep> {
  const { requireWorkflow } = access;
  const id = entry.schedule_id as string;
  const row = batch.stored.get(id) ?? null;
  if (row !== null && !access.visible(row.workflow))
    throw new OrbitError("ALREADY_EXISTS", `schedule ${id} already exists`);
  const stored = row === null ? undefined : (row.spec as unknown as ScheduleSettings);
  if (row !== null) refuseForeign(row, stored?.labels, scope);
  const labels = scopedLabels(entry.labels, stored?.labels, scope);
  const body = labels === undefined ? entry : { ...entry, labels };
  if (row === null) {
    const v = validateSettings(body, now, batch.compile);
    requireWorkflow(v.settings.workflow);
    const waiting = await check(tx, v.settings);
    const row = schedules.newRow(v, text, now);
    if (waiting !== undefined) row.lastError = waiting;
    batch.creates.push(row);
    return { action: "create", schedule_id: id, ...(waiting !== undefined ? { waiting } : {}) };
  }
  requireWorkflow(row.workflow);
  const compared = changedSettings(body, stored as unknown as Record<string, unknown>, SETTING_KEYS);
  if (compared.length === 0) return { action: "unchanged", schedule_id: id };
  const changes = inputAsWritten(compared, row, text);
  const patch: Record<string, unknown> = {};
  for (const c of changes) patch[c.setting] = body[c.setting] ?? null;
  if (typeof patch.workflow === "string") requireWorkflow(patch.workflow);
  let waiting: string | undefined;
  await schedules.updateIn(tx, row, patch, now, text, async (t, s) => {
    waiting = await check(t, s);
  });
  return { action: "update", schedule_id: id, changes, ...(waiting !== undefined ? { waiting } : {}) };
}

/**
 * The plan's input change with both sides as written (`120.0`, `12345678901234567890`): the parsed
 * values showed `120` and `12345678901234567000`, a number never stored.
 */
function inputAsWritten(changes: SettingChange[], row: ScheduleRow, text: InputText): SettingChange[] {
  const storedText = (row.spec as { input_text?: unknown }).input_text;
  return changes.map((c) => {
    if (c.setting !== "input") return c;
    const from = typeof storedText === "string" ? new RawJson(storedText, c.from) : c.from;
    const to = text.inputText !== undefined && c.to !== null ? new RawJson(text.inputText, c.to) : c.to;
    return { ...c, from: from as JsonValue, to: to as JsonValue };
  });
}

/**
 * A schedule that carries one of the scope's label names with another value belongs to another
 * apply set; the default set's (`orbit/owner=default`, an apply without `--owner`) are taken over
 * by a named owner, so naming the set later needs no relabelling.
 */
function refuseForeign(row: ScheduleRow, labels: Labels | undefined, scope: Labels): void {
  for (const [key, value] of Object.entries(scope)) {
    const have = labels?.[key];
    if (have === undefined || have === value) continue;
    if (key === OWNER_LABEL && have === DEFAULT_APPLY_OWNER) continue;
    const hint = key === OWNER_LABEL ? `apply it with --owner ${have}, ` : "";
    throw new OrbitError(
      "CONFLICT",
      `schedule ${row.scheduleId} belongs to another apply set (${key}=${have}, not ${value}): ${hint}rename it in this file, or remove it from the other set first`,
    );
  }
}

/** The ids of the schedules that carry every scope label (read without a lock: the caller locks them). */
async function scopeIds(tx: StoreOps, scope: Labels): Promise<string[]> {
  const ids: string[] = [];
  let after: string | undefined;
  for (;;) {
    const rows = await tx.listSchedules({ ...(after !== undefined ? { afterId: after } : {}), limit: 1000 });
    for (const row of rows) {
      if (matchesSelector((row.spec as unknown as ScheduleSettings).labels, scope)) ids.push(row.scheduleId);
    }
    if (rows.length < 1000) return ids;
    after = rows[rows.length - 1]?.scheduleId;
  }
}

/**
 * Deletes the locked rows the file does not name that carry every scope label (their labels read
 * again now that they are locked: an update meanwhile may have moved one out of the scope).
 */
async function prune(
  tx: StoreOps,
  others: readonly ScheduleRow[],
  scope: Labels,
  requireWorkflow: (workflow: string) => void,
  visible: (workflow: string) => boolean,
): Promise<ApplyStep[]> {
  const steps: ApplyStep[] = [];
  for (const row of others) {
    if (!matchesSelector((row.spec as unknown as ScheduleSettings).labels, scope)) continue;
    if (!visible(row.workflow)) continue; // not the caller's to see, so not its to prune
    requireWorkflow(row.workflow);
    if (!(await tx.deleteSchedule(row.scheduleId, row.revision))) {
      throw new OrbitError(
        "CONFLICT",
        `schedule ${row.scheduleId} changed meanwhile (${selectorText(scope)}); apply again`,
      );
    }
    steps.push({ action: "delete", schedule_id: row.scheduleId });
  }
  return steps;
}
