/**
 * The server's half of `orbit doctor` (docs/operations.md § Doctor): the checks only the server can
 * make — the database takes a write, its migrations match this release, this server's clock agrees
 * with the database's, every workflow an active schedule names is registered and polled by a live
 * worker, no schedule is overdue. Each check says ok, warn or fail, what it found, and a fix.
 * Nothing is changed (the write probe is rolled back).
 */
import { randomUUID } from "node:crypto";
import { DatabaseClock } from "../clock/database-clock.js";
import type { NowClock as Clock } from "../domain/clock.js";
import type { ScheduleSettings } from "../domain/schedule.js";
import { isLive, LIVE_WORKER_MS } from "../engine/workers.js";
import { loadMigrations } from "../store/migrations.js";
import type { WorkerRow } from "../store/outcome-store.js";
import type { ScheduleRow } from "../store/rows.js";
import type { Store } from "../store/store.js";
import { formatInstant } from "../time/format.js";
import { heldOffByKey } from "./doctor-held.js";
import { compensationFailures, failingRuns, named, replacedRuns } from "./doctor-outcomes.js";
import { isOverdue, OVERDUE_AFTER_MS } from "./schedule-search.js";

export type CheckStatus = "ok" | "warn" | "fail";

export interface DoctorCheck {
  name: string;
  status: CheckStatus;
  message: string;
  /** What to do about a warn or fail. */
  hint?: string;
}

export interface DoctorReport {
  /** This server's clock, RFC 3339 (the CLI compares its own clock with it). */
  server_time: string;
  checks: DoctorCheck[];
}

/** Clock skew between this server and the database: warn above, fail above. */
export const SKEW_WARN_MS = 1_000;
export const SKEW_FAIL_MS = 30_000;
/**
 * A reading of the database's clock whose round trip is longer than this cannot place the
 * database's instant to within half of it, an eighth of {@link SKEW_WARN_MS}: the clock check then
 * says it did not measure, rather than warn of a skew that may be the wait.
 */
export const SKEW_ROUND_TRIP_MAX_MS = 250;
/** Readings of the database's clock per check: the quickest is used. */
const SKEW_SAMPLES = 3;

class ProbeDone extends Error {}

/**
 * `visible`: access control — the schedule checks consider only schedules of workflows the caller
 * may `schedule` (as GET /v1/schedules lists them), so their messages name no other schedule.
 */
/**
 * The live workers among those given that take no work: no free slot at their last poll, yet no
 * task held (WorkerRegistry.stuck; docs/workflows.md § Cancellation and compensation).
 */
export type StuckWorkers = (live: readonly WorkerRow[]) => Promise<readonly WorkerRow[]>;

export async function runDoctor(
  store: Store,
  clock: Clock,
  visible: (workflow: string) => boolean = () => true,
  dueNow: () => Promise<number> = async () => clock.now(),
  overdueAfterMs = OVERDUE_AFTER_MS,
  stuck: StuckWorkers = async () => [],
): Promise<DoctorReport> {
  const checks: DoctorCheck[] = [];
  checks.push(await writable(store, clock));
  checks.push(await migrations(store));
  checks.push(await clockSkew(store, clock));
  checks.push(...(await schedulesAndWorkers(store, clock, visible, await dueNow(), overdueAfterMs, stuck)));
  return { server_time: formatInstant(clock.now()), checks };
}

async function writable(store: Store, clock: Clock): Promise<DoctorCheck> {
  const started = Date.now();
  try {
    await store.transaction(async (tx) => {
      const probe = { scope: "orbit doctor", key: randomUUID(), requestHash: "", response: null, status: 0 };
      await tx.insertIdempotencyKey({ ...probe, createdMs: clock.now() });
      throw new ProbeDone();
    });
  } catch (err) {
    if (!(err instanceof ProbeDone)) return writeFailed(store, (err as Error).message);
  }
  // A rolled-back write never reaches the file (SQLite's WAL): a disk that filled up shows only in
  // the writes that failed since, which the store remembers and tries again (what /readyz reports).
  const problem = await store.writeProblem?.();
  if (problem) return writeFailed(store, problem);
  const took = `${store.dialect}: a write (rolled back) took ${Date.now() - started} ms`;
  const upkeep = await store.maintenanceProblem?.();
  if (upkeep) {
    // Orbit's rows are rewritten on every fire and report: without vacuum the dead ones pile up
    // (a tester's 10 MB database reached 257 MB in half an hour, with doctor saying all was well).
    return {
      name: "database",
      status: "warn",
      message: `${took}; ${upkeep}: the dead rows of every fire and report are never cleared, so the tables and the fire lag grow`,
      hint: "turn autovacuum on (postgresql.conf `autovacuum = on`, or `ALTER TABLE … RESET (autovacuum_enabled)`); docs/operations.md § Retention",
    };
  }
  return { name: "database", status: "ok", message: took };
}

function writeFailed(store: Store, why: string): DoctorCheck {
  return {
    name: "database",
    status: "fail",
    message: `a write to the ${store.dialect} database failed: ${why}`,
    hint:
      store.dialect === "sqlite"
        ? "check that the data directory and orbit.db are writable by this server's user and the disk is not full"
        : "check the database role's privileges (INSERT, UPDATE, DELETE on Orbit's tables), that the database is not read-only (a replica), and disk space",
  };
}

async function migrations(store: Store): Promise<DoctorCheck> {
  const known = loadMigrations(store.dialect);
  const newestKnown = known[known.length - 1];
  const applied = await store.appliedMigrations();
  const newest = applied[applied.length - 1] ?? 0;
  const label = (v: number): string => {
    const m = known.find((k) => k.version === v);
    return m === undefined ? String(v).padStart(4, "0") : `${String(v).padStart(4, "0")}_${m.name}`;
  };
  if (newest > (newestKnown?.version ?? 0)) {
    return {
      name: "migrations",
      status: "warn",
      message: `the database has migration ${label(newest)}; this server knows up to ${label(newestKnown?.version ?? 0)}: a newer Orbit migrated it`,
      hint: "finish the rolling upgrade: restart this server on the newer orbit-scheduler (docs/operations.md § Upgrade)",
    };
  }
  const missing = known.filter((m) => !applied.includes(m.version));
  if (missing.length > 0) {
    return {
      name: "migrations",
      status: "fail",
      message: `migrations not applied: ${missing.map((m) => label(m.version)).join(", ")}`,
      hint: "restart the server: it applies pending migrations at start (docs/operations.md § Upgrade)",
    };
  }
  return { name: "migrations", status: "ok", message: `current: ${applied.length} applied, newest ${label(newest)}` };
}

async function clockSkew(store: Store, clock: Clock): Promise<DoctorCheck> {
  // A server in a cluster keeps the database's time (docs/cluster.md § One time for the cluster):
  // what is worth telling is its host's clock, which it corrects.
  const corrected = clock instanceof DatabaseClock;
  const host = corrected ? clock.host : clock;
  const { skew, roundTrip } = await readDatabaseClock(store, host);
  if (roundTrip > SKEW_ROUND_TRIP_MAX_MS) {
    return {
      name: "clock",
      status: "ok",
      message: `not measured: the database took ${Math.round(roundTrip)} ms to answer a reading of its clock (more than ${SKEW_ROUND_TRIP_MAX_MS} ms), too long to tell the clocks apart to within ${SKEW_ROUND_TRIP_MAX_MS / 2} ms; run orbit doctor again once it answers quickly`,
    };
  }
  const off = `${Math.abs(skew)} ms ${skew >= 0 ? "ahead of" : "behind"} the database's`;
  const hint =
    "synchronise the clocks with NTP (chrony, systemd-timesyncd) on this host and the database host: schedules fire by this server's clock, and by the database's with --cluster shared";
  if (corrected) {
    const message = `this host's clock is ${off}; this server keeps the database's time (--cluster)`;
    if (Math.abs(skew) > SKEW_WARN_MS)
      return {
        name: "clock",
        status: "warn",
        message,
        hint: "synchronise this host's clock with NTP (chrony, systemd-timesyncd)",
      };
    return { name: "clock", status: "ok", message };
  }
  const text = `this server's clock is ${off}`;
  if (Math.abs(skew) > SKEW_FAIL_MS) return { name: "clock", status: "fail", message: text, hint };
  if (Math.abs(skew) > SKEW_WARN_MS) return { name: "clock", status: "warn", message: text, hint };
  return { name: "clock", status: "ok", message: text };
}

/**
 * The database's clock read on a connection held for the purpose (one transaction), the host's
 * clock read just before and after: what is timed is the statement's round trip alone. Timed from
 * before `store.databaseNow()`, the wait for a pooled connection counted as well, and near the end
 * of a 90 s table lock doctor said "this server's clock is 10244 ms behind the database's" of two
 * clocks on one host (a tester). The quickest of {@link SKEW_SAMPLES} readings.
 */
async function readDatabaseClock(store: Store, host: Clock): Promise<{ skew: number; roundTrip: number }> {
  return store.transaction(async (tx) => {
    let best = { skew: 0, roundTrip: Number.POSITIVE_INFINITY };
    for (let i = 0; i < SKEW_SAMPLES; i++) {
      const before = host.now();
      const sent = performance.now();
      const db = await tx.databaseNow();
      const roundTrip = performance.now() - sent;
      const after = host.now();
      // The database read its clock somewhere in [before, after]: compare with the middle.
      if (roundTrip < best.roundTrip) best = { skew: Math.round((before + after) / 2 - db), roundTrip };
    }
    return best;
  });
}

async function allSchedules(store: Store): Promise<ScheduleRow[]> {
  const all: ScheduleRow[] = [];
  for (;;) {
    const after = all[all.length - 1]?.scheduleId;
    const rows = await store.listSchedules({ ...(after !== undefined ? { afterId: after } : {}), limit: 5000 });
    all.push(...rows);
    if (rows.length < 5000) return all;
  }
}

/**
 * `dueAt`: now by the clock occurrences come due by (the database's with --cluster shared), and
 * `overdueAfterMs` the misfire grace, as orbit_schedules_overdue judges.
 */
async function schedulesAndWorkers(
  store: Store,
  clock: Clock,
  visible: (workflow: string) => boolean,
  dueAt: number,
  overdueAfterMs: number,
  stuckWorkers: StuckWorkers,
): Promise<DoctorCheck[]> {
  const now = clock.now();
  const every = await allSchedules(store);
  const visibleRows = every.filter((r) => visible(r.workflow));
  const active = visibleRows.filter((r) => r.state === "active");
  // Said, where the checks leave schedules out: an identity that may not schedule them read
  // "0 active schedules … ok" while two had no worker (a tester).
  const hidden = every.length - visibleRows.length;
  const unseen =
    hidden === 0 ? "" : ` (${hidden} schedule(s) of workflows this identity may not schedule are not checked)`;
  const workflows = await store.listWorkflows();
  const registered = new Set(workflows.map((w) => `${w.name}@${w.version}`));
  // Listed by name, highest version first: an unpinned schedule starts the latest not deprecated.
  const latest = new Map<string, string>();
  for (const w of workflows) if (!latest.has(w.name) && w.deprecatedMs == null) latest.set(w.name, w.version);
  const live = (await store.listWorkers(now - LIVE_WORKER_MS)).filter((w) => isLive(w, now));
  const polled = new Set(live.flatMap((w) => w.workflows.map((f) => `${f.name}@${f.version}`)));
  // A stuck worker polls but takes nothing: a version only such workers poll runs nothing either.
  const stuck = new Set((await stuckWorkers(live)).map((w) => w.workerId));
  const takes = new Set(
    live.filter((w) => !stuck.has(w.workerId)).flatMap((w) => w.workflows.map((f) => `${f.name}@${f.version}`)),
  );

  // Per version the active schedules start (pinned, or the latest; a workflow without one by
  // name): registered? polled by a live worker? One line per version, however the schedules name it.
  const byTarget = new Map<string, { ids: string[]; latest: boolean; pinned: boolean }>();
  for (const row of active) {
    const pinned = (row.spec as unknown as ScheduleSettings).version;
    const newest = latest.get(row.workflow);
    const target =
      pinned !== undefined
        ? `${row.workflow}@${pinned}`
        : newest !== undefined
          ? `${row.workflow}@${newest}`
          : row.workflow;
    const entry = byTarget.get(target) ?? { ids: [], latest: false, pinned: false };
    entry.ids.push(row.scheduleId);
    if (pinned === undefined) entry.latest = true;
    else entry.pinned = true;
    byTarget.set(target, entry);
  }
  const unregistered: string[] = [];
  // Registered, but every version deprecated: an unpinned schedule's starts are refused all the
  // same. Said apart: "not registered: Ghost2 (every version deprecated)" contradicted itself.
  const deprecated: string[] = [];
  const unpolled: string[] = [];
  const stuckOnly: string[] = [];
  for (const [target, { ids, latest: asLatest, pinned }] of [...byTarget].sort(([a], [b]) => a.localeCompare(b))) {
    const known = target.includes("@") && registered.has(target);
    const allDeprecated = !target.includes("@") && workflows.some((w) => w.name === target);
    const how = target.includes("@") ? namedAs(asLatest, pinned) : allDeprecated ? " (every version deprecated)" : "";
    const line = `${target}${how}, ${ids.length} schedule${ids.length === 1 ? "" : "s"}: ${named(ids)}`;
    if (allDeprecated) deprecated.push(line);
    else if (!known) unregistered.push(line);
    else if (!polled.has(target)) unpolled.push(line);
    else if (!takes.has(target)) stuckOnly.push(line);
  }
  const checks: DoctorCheck[] = [];
  if (unregistered.length > 0 || deprecated.length > 0) {
    const said = [
      unregistered.length > 0
        ? `active schedules name workflows that are not registered: ${unregistered.join("; ")}`
        : "",
      deprecated.length > 0
        ? `active schedules name workflows with no version that can start: ${deprecated.join("; ")}`
        : "",
    ];
    const fixes = [
      unregistered.length > 0
        ? "start a worker that runs them (it registers them), or `orbit workflow register`; until then each occurrence is a dead letter"
        : "",
      deprecated.length > 0
        ? "undeprecate a version (`orbit workflow undeprecate <name> <version>`), register a newer one, or pin the schedules to a version; until then each occurrence is a dead letter"
        : "",
    ];
    checks.push({
      name: "workflows",
      status: "fail",
      message: said.filter((x) => x !== "").join("; "),
      hint: fixes.filter((x) => x !== "").join("; "),
    });
  } else {
    checks.push({
      name: "workflows",
      status: "ok",
      message: `every workflow of the ${active.length} active schedules is registered${unseen}`,
    });
  }
  // Only the workers that run a workflow whose schedules the caller may see (the `schedule` action,
  // as every check here; GET /v1/workers goes by `read`), docs/security.md § Identities: it
  // counted every live worker for any caller.
  const shown = live.filter((w) => w.workflows.some((f) => visible(f.name)));
  const stuckShown = shown.filter((w) => stuck.has(w.workerId)).map((w) => w.workerId);
  const stuckSaid =
    stuckShown.length === 0
      ? ""
      : `stuck (no free slot, yet no task held: code of runs that has not returned keeps the slots): ${named(stuckShown)}`;
  const restart = "restart the stuck workers (their log names the runs that did not return)";
  if (unpolled.length > 0 || stuckOnly.length > 0) {
    const said = [
      unpolled.length > 0
        ? `no live worker (seen in the last ${LIVE_WORKER_MS / 1000} s) polls: ${unpolled.join("; ")}`
        : "",
      stuckOnly.length > 0 ? `only stuck workers poll: ${stuckOnly.join("; ")}` : "",
      stuckSaid,
    ];
    checks.push({
      name: "workers",
      status: "fail",
      message: said.filter((s) => s !== "").join("; "),
      hint: [
        unpolled.length > 0
          ? "start a worker with these workflows (new Worker({ server, workflows: [...] }).run()) pointed at this server; `orbit workers` lists the ones seen"
          : "",
        stuckShown.length > 0 ? restart : "",
      ]
        .filter((s) => s !== "")
        .join("; "),
    });
  } else {
    const n = byTarget.size - unregistered.length - deprecated.length;
    checks.push({
      name: "workers",
      status: stuckShown.length > 0 ? "warn" : "ok",
      message: `${shown.length} live worker(s); every scheduled workflow (${n}) is polled${stuckSaid === "" ? "" : `; ${stuckSaid}`}`,
      ...(stuckShown.length > 0 ? { hint: restart } : {}),
    });
  }
  // One rule with orbit_schedules_overdue and the overdue=true search (docs/design.md § Overdue):
  // a schedule woken for its oldest buffered occurrence is not overdue, nor is a paused one. How
  // late: since its due time, or, waiting to retry a refused start, since it last started anything.
  const lateBy = (r: ScheduleRow): number =>
    dueAt - Math.min(r.dueMs ?? dueAt, r.retryMs !== null ? (r.lastFireMs ?? r.createdMs) : dueAt);
  const overdue = active
    .filter((r) => isOverdue(r, dueAt, overdueAfterMs))
    .sort((a, b) => lateBy(b) - lateBy(a) || a.scheduleId.localeCompare(b.scheduleId));
  // Fired, but their starts are refused (an input the latest version refuses, too many running):
  // each occurrence is retried, then a dead letter (docs/design.md § The fire).
  const refused = active.filter((r) => r.lastError !== null).sort((a, b) => a.scheduleId.localeCompare(b.scheduleId));
  const found: string[] = [];
  const hints: string[] = [];
  if (overdue.length > 0) {
    const oldest = overdue[0];
    const late = Math.round((oldest === undefined ? 0 : lateBy(oldest)) / 1000);
    found.push(
      `${overdue.length} schedule(s) overdue (due over ${overdueAfterMs / 1000} s ago and not fired): ${named(overdue.map((r) => r.scheduleId))}; the oldest is ${late} s late`,
    );
    hints.push(
      "the firing loop is behind or not running: check /readyz (a standby does not fire), this server's log lines with component scheduler, and orbit_schedule_fire_lag_seconds",
    );
  }
  if (refused.length > 0) {
    const first = refused[0];
    found.push(
      `${refused.length} schedule(s) cannot start their occurrences: ${named(refused.map((r) => r.scheduleId))} (${first?.scheduleId}: ${first?.lastError})`,
    );
    hints.push(
      "`orbit schedule get <id>` shows the error and the dead letters: fix the schedule's input (or pin a --version); when too many executions run, let them end or raise the server's --max-active-executions",
    );
  }
  // Firing is healthy, but what it starts fails: said as a warning, with the schedules
  // pause_on_failure stopped (doctor said "ok … none overdue" while three schedules failed every run).
  // So are cancels whose compensation failed, and cancel_previous runs all replaced before they
  // complete (src/scheduler/doctor-outcomes.ts).
  const warned: string[] = [];
  const outcomes = [
    failingRuns(visibleRows),
    compensationFailures(visibleRows),
    await replacedRuns(store, visibleRows),
    // Starved: occurrences skipped or buffered because another schedule keeps the key.
    await heldOffByKey(store, active, dueAt, overdueAfterMs),
  ];
  for (const w of outcomes) {
    if (w === null) continue;
    warned.push(w.message);
    hints.push(w.hint);
  }
  const ahead = firedAhead(active, dueAt, overdueAfterMs);
  if (ahead !== null) {
    warned.push(ahead);
    hints.push(
      "a clock that ran ahead fired those occurrences early, each once; they start again after their last fire: check the host's time synchronisation (timedatectl, chronyc tracking)",
    );
  }
  if (found.length > 0) {
    checks.push({
      name: "schedules",
      status: "fail",
      message: [...found, ...warned].join("; "),
      hint: hints.join("; "),
    });
  } else if (warned.length > 0) {
    const message = `${active.length} active, none overdue; ${warned.join("; ")}`;
    checks.push({ name: "schedules", status: "warn", message, hint: hints.join("; ") });
  } else {
    checks.push({ name: "schedules", status: "ok", message: `${active.length} active, none overdue` });
  }
  return checks;
}

/**
 * The schedules that last fired more than `graceMs` ahead of `dueAt`, said with the largest lead;
 * null when none. A clock stepped forward and corrected leaves them fired at instants still to come,
 * so they stay silent until this clock passes their last fire, while every other check read healthy
 * (a tester's +1 h step and its correction: an hour without a fire, doctor "ok").
 */
function firedAhead(active: readonly ScheduleRow[], dueAt: number, graceMs: number): string | null {
  const ahead = active
    .filter((r) => r.lastFireMs !== null && r.lastFireMs > dueAt + graceMs)
    .sort((a, b) => (b.lastFireMs ?? 0) - (a.lastFireMs ?? 0));
  const first = ahead[0];
  if (first?.lastFireMs == null) return null;
  const leadS = Math.round((first.lastFireMs - dueAt) / 1000);
  return `${ahead.length} schedule(s) last fired ahead of this clock, by up to ${leadS} s (the clock stepped back after they fired): ${named(ahead.map((r) => r.scheduleId))}; they fire again only once this clock passes their last fire`;
}

/** How the schedules of one version name it: ` (latest)`, ` (latest, and pinned)`, or pinned only. */
function namedAs(latest: boolean, pinned: boolean): string {
  if (!latest) return "";
  return pinned ? " (latest, and pinned)" : " (latest)";
}
