/**
 * How `orbit schedule` prints schedules and ledger rows, to the character as the seed shows them:
 * the block of `create` / `get` / `update`, the table of `list`, and the table of `occurrences`.
 */

import type { OccurrenceJson, ScheduleJson, WorkerJson, WorkflowJson } from "../client/types.js";
import { stringifyJsonText } from "../domain/json-text.js";
import { DEAD_LETTERS_SHOWN } from "../domain/schedule.js";
import { parseDuration } from "../time/interval.js";
import { jitterDelay } from "../time/jitter.js";
import { thrownValueText, withStep } from "./execution-format.js";
import { oneLine } from "./safe-text.js";
import { type Column, table } from "./table.js";

/** `cron "0 2 * * *" Europe/Berlin` or `every 1h` (a cron without a time zone runs in UTC). */
export function timingText(s: ScheduleJson): string {
  if (s.cron !== undefined) return `cron "${s.cron}" ${s.timezone ?? "UTC"}`;
  return `every ${s.interval ?? "?"}`;
}

/** `OrderProcessing` for the list, with `@1.0.0` when the version is pinned. */
function workflowText(s: ScheduleJson): string {
  return s.version === undefined ? s.workflow : `${s.workflow}@${s.version}`;
}

/**
 * `  label:   value`: labels padded so values line up at column 14, longer ones push on. The value
 * is the server's text, shown on one line with its control characters escaped ({@link oneLine}).
 */
function line(label: string, value: string): string {
  return `  ${`${label}:`.padEnd(11)} ${oneLine(value)}\n`;
}

/** The lines for optional settings that are set, after `description:` (the seed shows none). */
function optionalLines(s: ScheduleJson, lastRun: LastRun | undefined): string {
  let out = "";
  // Absent from servers before the field: nothing buffered to say then.
  const buffered = s.buffered ?? [];
  if (s.dst !== undefined) out += line("dst", s.dst);
  if (s.concurrency_key !== undefined) out += line("concurrency key", s.concurrency_key);
  if (s.max_catch_up !== undefined) out += line("max catch up", String(s.max_catch_up));
  if (s.catchup_window !== undefined) out += line("catchup window", s.catchup_window);
  if (s.start_at !== undefined) out += line("start at", s.start_at);
  if (s.end_at !== undefined) out += line("end at", s.end_at);
  if (s.jitter !== undefined) {
    const next = s.next_fire_at === null ? "" : ` (next fire ${s.next_fire_at})`;
    out += line("jitter", `${s.jitter}${next}`);
  }
  if (s.run_timeout !== undefined) out += line("run timeout", s.run_timeout);
  if (s.start_timeout !== undefined) out += line("start timeout", s.start_timeout);
  if (s.pause_on_failure !== undefined) out += line("pause on failure", String(s.pause_on_failure));
  if (s.max_runs !== undefined) {
    const left = s.remaining_runs ?? s.max_runs;
    const none =
      buffered.length === 0
        ? "all started: the schedule ended"
        : s.paused
          ? "none left: the last is buffered, held while paused"
          : "none left: the last is buffered";
    out += line("max runs", `${s.max_runs} (${left === 0 ? none : `${left} to go`})`);
  }
  for (const n of s.notify ?? []) out += line("notify", n.events?.length ? `${n.url} (${n.events.join(", ")})` : n.url);
  const f = s.notify_failure;
  if (f !== undefined) {
    const fate = f.state === "failed" ? "given up" : "retrying";
    out += line("notify failing", `the ${f.event} alert to ${f.url} failed ${f.attempts} time(s), ${fate}: ${f.error}`);
  }
  if (s.labels !== undefined && Object.keys(s.labels).length > 0) {
    out += line(
      "labels",
      Object.entries(s.labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(","),
    );
  }
  if (s.pause_note !== undefined) out += line("paused", s.pause_note);
  if (buffered.length > 0) {
    const when = bufferWaitText(s, lastRun);
    out += line(
      "buffered",
      buffered.length === 1 ? `${buffered[0]} (${when})` : `${buffered.length}, oldest ${buffered[0]} (${when})`,
    );
  }
  if (s.last_error !== null) out += line("last error", s.last_error);
  if (s.dead_letters.length > 0) {
    const latest = s.dead_letters[0];
    const detail = latest?.error === undefined ? "" : `, latest: ${latest.error}`;
    // The schedule lists its newest five: five means "five or more" (the ledger has them all).
    const count =
      s.dead_letters.length >= DEAD_LETTERS_SHOWN ? `${DEAD_LETTERS_SHOWN} or more` : `${s.dead_letters.length}`;
    out += line("dead letters", `${count}${detail}`);
  }
  return out;
}

/** The schedule's last execution as `get` read it: its status and run, and why it waits to start. */
type LastRun = { status: string; run: number; waiting?: string };

/**
 * What a buffered occurrence waits for. Paused, the resume (docs/scheduling.md § Pause and the
 * buffer). With a concurrency key, the schedule's own running execution or another's holding the
 * key: a buffer held off by another schedule's `allow` runs on the same key (fired 0, skipped
 * 1008) said it started "when the running execution ends", of a schedule with none (a tester).
 * Told by the last execution's status (`lastRun`, read by `get`), else by whether it may not have
 * ended ({@link lastRunPending}); when neither tells, both are named.
 */
function bufferWaitText(s: ScheduleJson, lastRun: LastRun | undefined): string {
  if (s.paused) return "held while paused; starts after a resume once nothing runs";
  const key = s.concurrency_key;
  if (key === undefined) return "starts when the running execution ends";
  const ownRuns =
    lastRun !== undefined
      ? lastRun.status === "RUNNING" || lastRun.status === "COMPENSATING"
      : lastRunPending(s)
        ? null
        : false;
  if (ownRuns === true) return "starts when its running execution ends";
  if (ownRuns === false) return `waits for the concurrency key ${key}, held by another schedule's execution`;
  return `starts when its slot is free (its running execution, or concurrency key ${key})`;
}

/**
 * The pending fire is a refused start's retry (docs/scheduling.md § Every occurrence accounted
 * for): `next_fire_at` is then a few seconds after the refusal (`18:07:00.286Z`), not the first of
 * `next_fire_times` (with its jitter), and the schedule holds the refusal as `last_error`. The list
 * showed that odd time without a word (the web UI labels it).
 */
export function retryingRefusedStart(s: ScheduleJson): boolean {
  if (s.last_error === null || s.next_fire_at === null) return false;
  const first = s.next_fire_times[0];
  if (first === undefined) return true;
  const nominal = Date.parse(first);
  let jitterMs = 0;
  try {
    jitterMs = s.jitter === undefined ? 0 : parseDuration(s.jitter, "jitter");
  } catch {
    return false; // a jitter this CLI cannot read: the time may be its own
  }
  return Date.parse(s.next_fire_at) !== nominal + jitterDelay(s.schedule_id, nominal, jitterMs);
}

/**
 * The seed's block:
 * ```
 * active nightly-orders  cron "0 2 * * *" Europe/Berlin
 *   workflow:   OrderProcessing (latest version)
 *   …
 *   next fires:
 *     2026-11-16T01:00:00Z
 * ```
 * The input is the server's JSON re-serialized, so `120.0` in a request reads back as `120`.
 */
export function scheduleBlock(s: ScheduleJson, lastRun?: LastRun): string {
  const version = s.version === undefined ? `${s.workflow} (latest version)` : `${s.workflow}@${s.version}`;
  let out = `${oneLine(`${s.state} ${s.schedule_id}  ${timingText(s)}`)}\n`;
  out += line("workflow", version);
  out += line("input", stringifyJsonText(s.input));
  out += line("overlap", `${s.overlap}   catchup: ${s.catchup}`);
  if (s.description !== undefined) out += line("description", s.description);
  out += optionalLines(s, lastRun);
  out += line("fired", `${s.fired}   skipped: ${s.skipped}`);
  out += line("last fire", s.last_fire_at ?? "-");
  // A retried last run (its outcome below is the run before): which run, and that it runs. Told
  // by the outcome being this execution's own: a run after a continue-as-new is run 2 or more too,
  // with no outcome of its own before it, and read "RUNNING after a retry; the outcome below is
  // run 4's" over another execution's outcome (a tester).
  const retried =
    lastRun !== undefined &&
    lastRun.status === "RUNNING" &&
    lastRun.run > 1 &&
    s.last_outcome?.execution_id === s.last_execution_id;
  const runText = retried
    ? ` (run ${lastRun.run}, RUNNING after a retry; the outcome below is run ${lastRun.run - 1}'s)`
    : "";
  out += line("last run", `${s.last_execution_id ?? "-"}${runText}`);
  // Why the last run has not started, when it waits (no worker for its workflow, all busy, …): the
  // occurrences after it are skipped meanwhile, and `skipped` alone does not say why.
  if (lastRun?.waiting !== undefined) out += line("waiting", lastRun.waiting);
  const notStarted = notStartedText(s);
  if (notStarted !== null) out += line("not started", notStarted);
  out += outcomeLines(s);
  // The pending fire is not the first listed below: say why its time is odd.
  if (retryingRefusedStart(s)) out += line("next fire", `${s.next_fire_at} (retrying a refused start)`);
  if (s.next_fire_times.length === 0) return `${out}  next fires: -\n`;
  // A paused schedule fires none of them until resumed: its list is what a resume now would fire.
  const heading = s.state === "paused" ? "next fires (after a resume now):" : "next fires:";
  return `${out}  ${heading}\n${s.next_fire_times.map((t) => `    ${oneLine(t)}\n`).join("")}`;
}

/** `COMPLETED`, `FAILED ×3` (consecutive), `TIMED OUT`, `CANCELLED`, or `-` before any ended. */
export function outcomeText(s: ScheduleJson): string {
  const o = s.last_outcome ?? null;
  if (o === null) return "-";
  if (o.status !== "FAILED") return o.status;
  const label = o.error_type === "Timeout" ? "TIMED OUT" : "FAILED";
  const n = s.consecutive_failures ?? 0;
  return n > 1 ? `${label} x${n}` : label;
}

/**
 * The lists' word for how the schedule fares: {@link outcomeText}, except that a CANCELLED run
 * does not end a streak of failures (it counts neither way, docs/outcomes.md): while
 * `consecutive_failures` is above 0 it is `FAILED xN`. A `cancel_previous` schedule whose every
 * run failed read CANCELLED, its replaced run having ended last, and looked healthy (a tester).
 */
export function healthText(s: ScheduleJson): string {
  const n = s.consecutive_failures ?? 0;
  if (s.last_outcome?.status === "CANCELLED" && n > 0) return n > 1 ? `FAILED x${n}` : "FAILED";
  // The latest occurrence was lost (the server was down past the grace or the catch-up window):
  // a schedule whose only occurrence was missed read `-`, as one that never came due (a tester).
  // A cancel whose compensation (or onCancel) failed left something done and not undone: it
  // read CANCELLED, as a clean cancel, and looked healthy (a tester).
  if (compensationFailed(s)) return "COMPENSATION FAILED";
  if (n === 0 && s.last_tick?.kind === "skipped" && s.last_tick.reason === "missed") return "MISSED";
  return outcomeText(s);
}

/** The last outcome is a cancel whose compensation or `onCancel` failed (`error_type: "CompensationFailed"`). */
function compensationFailed(s: ScheduleJson): boolean {
  return s.last_outcome?.status === "CANCELLED" && s.last_outcome.error_type === "CompensationFailed";
}

/**
 * The schedule's latest occurrence when it did not start (its last ledger row, `last_tick`, a
 * skip): `2026-12-07T02:00:00Z missed`, or a range's count. `schedule get` said only `skipped: 1`.
 */
function notStartedText(s: ScheduleJson): string | null {
  const t = s.last_tick;
  if (t === null || t === undefined || t.kind !== "skipped") return null;
  // A skip for overlap or a concurrency key is the policy at work, with the run it waits on shown
  // (`last run:`, `waiting:`): said again it only repeated them.
  if (t.reason === "overlap" || t.reason === "concurrency") return null;
  const what =
    t.count !== undefined && t.count > 1 && t.range_from !== undefined
      ? `${t.count} occurrences from ${t.range_from} to ${t.range_to ?? "?"}`
      : (t.occurrence ?? t.range_from ?? "-");
  return `${what} ${t.reason ?? "skipped"} (orbit schedule occurrences ${s.schedule_id})`;
}

/**
 * The schedule's last execution may not have ended: the last outcome is an earlier one's, or
 * none. (An earlier run can also end after the last one, under `allow`, `cancel_previous` or a
 * backfill: a caller that must know asks for the execution.)
 */
export function lastRunPending(s: ScheduleJson): boolean {
  if (s.last_execution_id === null) return false;
  // A FAILED or CANCELLED last run may have been retried since (`orbit retry`: run 2 of the same
  // id): the views showed the old outcome while the retry waited for a worker (a tester).
  const o = s.last_outcome;
  return o?.execution_id !== s.last_execution_id || o.status === "FAILED" || o.status === "CANCELLED";
}

/** The workflows a live worker polls (`GET /v1/workers`): each name, and each `name@version`. */
export function polledWorkflows(workers: readonly WorkerJson[]): ReadonlySet<string> {
  const names = new Set<string>();
  for (const w of workers) {
    if (w.status !== "live") continue;
    for (const f of w.workflows) names.add(f.name).add(`${f.name}@${f.version}`);
  }
  return names;
}

/**
 * The version an unpinned schedule's starts take, per workflow (`GET /v1/workflows`, highest
 * first): the highest not deprecated, else the highest.
 */
export function latestVersions(workflows: readonly WorkflowJson[]): ReadonlyMap<string, string> {
  const latest = new Map<string, string>();
  const highest = new Map<string, string>();
  for (const w of workflows) {
    if (!highest.has(w.name)) highest.set(w.name, w.version);
    if (w.deprecated_at === null && !latest.has(w.name)) latest.set(w.name, w.version);
  }
  for (const [name, version] of highest) if (!latest.has(name)) latest.set(name, version);
  return latest;
}

/** Every registered version of each workflow (`GET /v1/workflows`). */
export function registeredVersions(workflows: readonly WorkflowJson[]): ReadonlyMap<string, readonly string[]> {
  const versions = new Map<string, string[]>();
  for (const w of workflows) versions.set(w.name, [...(versions.get(w.name) ?? []), w.version]);
  return versions;
}

/**
 * The schedules that may show NO WORKER: a last run that may not have ended ({@link lastRunPending})
 * of a workflow no live worker polls, or of which some registered version is polled by none (the
 * run may be on it: started before the workers moved to a newer version, it waits for a worker of
 * its own). Whether that run still waits, and on which version, is the execution's to say
 * (schedule-crud.ts asks for it).
 */
export function noWorkerCandidates(
  schedules: readonly ScheduleJson[],
  polled: ReadonlySet<string>,
  latest: ReadonlyMap<string, string> | null,
  versions: ReadonlyMap<string, readonly string[]> | null = null,
): ScheduleJson[] {
  const unpolled = (name: string) => versions?.get(name)?.some((v) => !polled.has(`${name}@${v}`)) === true;
  return schedules.filter(
    (s) => s.last_error === null && lastRunPending(s) && (!polledFor(s, polled, latest, null) || unpolled(s.workflow)),
  );
}

/**
 * Whether a live worker runs what the schedule starts: its workflow, the version its starts take
 * when that is known (its pin, else the latest in `latest`), and the version its last execution
 * runs on (`version`, when known). A version registered before any worker runs it stalls an
 * unpinned schedule as surely as no worker at all, and so does a run left on a version the workers
 * no longer poll (docs/outcomes.md).
 */
function polledFor(
  s: ScheduleJson,
  polled: ReadonlySet<string>,
  latest: ReadonlyMap<string, string> | null,
  version: string | null,
): boolean {
  if (!polled.has(s.workflow)) return false;
  const takes = s.version ?? latest?.get(s.workflow);
  if (takes !== undefined && !polled.has(`${s.workflow}@${takes}`)) return false;
  return version === null || polled.has(`${s.workflow}@${version}`);
}

/**
 * The OUTCOME column of `--wide`, and the note after LAST EXECUTION without it: `START FAILED` while the schedule's occurrences cannot start
 * (`last_error`: the workflow is missing, the input no longer validates, too many executions run),
 * `NO WORKER` while its last execution waits and no live worker polls its workflow (`polled`; null
 * when the workers could not be listed), each of which a list of otherwise healthy rows would
 * hide; else {@link outcomeText}.
 */
function listOutcomeText(
  s: ScheduleJson,
  polled: ReadonlySet<string> | null,
  latest: ReadonlyMap<string, string> | null,
  waits: ReadonlyMap<string, string>,
): string {
  if (s.last_error !== null) return "START FAILED";
  const waitsOn = waits.get(s.schedule_id);
  if (polled !== null && waitsOn !== undefined && !polledFor(s, polled, latest, waitsOn)) return "NO WORKER";
  return healthText(s);
}

/**
 * After the seed's `last run:`, once an execution of the schedule ended:
 * ```
 *   outcome:    FAILED x3  nightly-orders:2026-11-15T01:00:00Z at 2026-11-15T01:00:02.120Z
 *   error:      card declined (in step charge-payment)
 *   last ok:    2026-11-12T01:00:01.870Z
 * ```
 */
function outcomeLines(s: ScheduleJson): string {
  const o = s.last_outcome ?? null;
  if (o === null) return "";
  let out = line("outcome", `${outcomeText(s)}  ${o.execution_id} at ${o.ended_at}`);
  if (o.error !== null) {
    const said = thrownValueText(o.error, o.error_type);
    const error = o.error_step === undefined ? said : withStep(said, o.error_step);
    out += line(o.status === "CANCELLED" ? "reason" : "error", error);
  }
  const failures = s.consecutive_failures ?? 0;
  if (o.status === "CANCELLED" && failures > 0) {
    out += line("failing", `${failures} run(s) in a row failed before it; a cancelled run counts neither way`);
  }
  if (o.status !== "COMPLETED") out += line("last ok", s.last_success_at ?? "never");
  return out;
}

/** The seed's `orbit schedule list` columns, to the character (widths measured from the seed). */
export const SCHEDULE_COLUMNS: readonly Column[] = [
  { header: "SCHEDULE", width: 25 },
  { header: "WORKFLOW", width: 21 },
  { header: "TIMING", width: 33 },
  { header: "STATE", width: 9 },
  { header: "NEXT FIRE", width: 23 },
  { header: "LAST EXECUTION", width: 0 },
];

/** `--wide`: the seed's columns with OUTCOME (the last ended run, as `schedule get` shows it) after STATE. */
const WIDE_COLUMNS: readonly Column[] = [
  ...SCHEDULE_COLUMNS.slice(0, 4),
  { header: "OUTCOME", width: 14 },
  ...SCHEDULE_COLUMNS.slice(4),
];

/**
 * LAST EXECUTION of the default list: the id, and after it what went wrong when something did, as
 * `--wide`'s OUTCOME says it (`nightly-orders:2026-11-15T01:00:00Z (FAILED x2)`, `- (START FAILED)`,
 * `- (MISSED)`, `(NO WORKER)`, `(COMPENSATION FAILED)`), so a failing schedule does not look healthy
 * without `--wide`. A healthy row (`COMPLETED`, `CANCELLED`, none ended) is the seed's, to the character.
 */
function lastExecutionText(s: ScheduleJson, outcome: string): string {
  const id = s.last_execution_id ?? "-";
  if (outcome === "-" || outcome === "COMPLETED" || outcome === "CANCELLED") return id;
  // NEXT FIRE is then the retry's odd time (`18:07:00.286Z`), later than the occurrence it retries.
  return outcome === "START FAILED" && retryingRefusedStart(s)
    ? `${id} (START FAILED, retrying at NEXT FIRE)`
    : `${id} (${outcome})`;
}

export function scheduleTable(
  schedules: readonly ScheduleJson[],
  opts: {
    wide?: boolean;
    polled?: ReadonlySet<string> | null;
    latest?: ReadonlyMap<string, string> | null;
    /** The schedules whose last execution is RUNNING, with its workflow version: NO WORKER needs one. */
    waits?: ReadonlyMap<string, string>;
  } = {},
): string {
  const wide = opts.wide === true;
  const polled = opts.polled ?? null;
  const latest = opts.latest ?? null;
  const waits = opts.waits ?? new Map<string, string>();
  return table(
    wide ? WIDE_COLUMNS : SCHEDULE_COLUMNS,
    schedules.map((s) => {
      const outcome = listOutcomeText(s, polled, latest, waits);
      return [
        s.schedule_id,
        workflowText(s),
        timingText(s),
        s.state,
        ...(wide ? [outcome] : []),
        s.next_fire_at ?? "-",
        wide ? (s.last_execution_id ?? "-") : lastExecutionText(s, outcome),
      ];
    }),
  );
}

export const OCCURRENCE_COLUMNS: readonly Column[] = [
  { header: "RECORDED", width: 26 },
  { header: "KIND", width: 13 },
  { header: "OCCURRENCE", width: 26 },
  { header: "DETAIL", width: 0 },
];

/** What a ledger row says beyond its kind: execution id, reason, the range of a count, error. */
export function occurrenceDetail(o: OccurrenceJson): string {
  const parts: string[] = [];
  if (o.execution_id !== undefined) parts.push(o.execution_id);
  if (o.reason !== undefined) parts.push(o.reason);
  // One occurrence missed is the row's occurrence: "count 1 (from T to T)" said it three times.
  const single = o.count === 1 && o.range_from !== undefined && o.range_from === o.range_to;
  if (o.count !== undefined && !single) {
    const range = o.range_from === undefined ? "" : ` (from ${o.range_from} to ${o.range_to ?? "?"})`;
    parts.push(`count ${o.count}${range}`);
  }
  // A started row's execution no longer stored (retention deleted it): the status column was blank.
  if (o.kind === "started" && o.execution_id !== undefined && o.status === undefined) {
    parts.push("execution deleted (retention)");
  }
  // A run that hit its timeout reads TIMED OUT, as `schedule get` and `orbit status` say it.
  if (o.status !== undefined) parts.push(o.status === "FAILED" && o.error_type === "Timeout" ? "TIMED OUT" : o.status);
  if (o.error !== undefined) parts.push(o.error);
  return parts.length === 0 ? "-" : parts.join("  ");
}

/** Ledger rows as the server lists them (newest first); a manual trigger has no occurrence (`-`). */
export function occurrenceTable(rows: readonly OccurrenceJson[]): string {
  return table(
    OCCURRENCE_COLUMNS,
    rows.map((o) => [o.recorded_at, o.kind, o.occurrence ?? "-", occurrenceDetail(o)]),
  );
}
