/**
 * Prometheus metrics of one server (docs/server.md § Metrics), on a registry of its own (never prom-client's global
 * one), from zero at start. Counters and the lag histogram come from the firing loop's reports;
 * the overdue and per-status gauges are read from the database on each scrape, apart from the
 * server's pool and within {@link SCRAPE_READ_MS} (Store.readApart). With the database away or
 * slower than that (a lock held on an Orbit table), a scrape still answers: what it could not read
 * has no series (the overdue gauge is NaN), `orbit_scrape_read_success` says which, and what the
 * process holds itself (counters, histograms, the firing loop's wait, process_*) is there as always.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { OrbitError } from "../domain/errors.js";
import { EXECUTION_STATUSES, type ExecutionStatus } from "../domain/execution.js";
import type { SkipReason } from "../domain/schedule.js";
import type { FireReport } from "../scheduler/fire.js";
import type { ScheduleOutcomeAggregate, ScheduleOutcomeFigures } from "../store/outcome-store.js";
import type { Store, StoreOps } from "../store/store.js";
import type { ReadyTasks } from "../store/task-store.js";
import { taskBacklogMetrics } from "./metrics-tasks.js";

const SKIP_REASONS: readonly SkipReason[] = ["overlap", "concurrency", "missed", "buffer_full"];

export interface MetricsOptions {
  store: Store;
  /** Misfire grace: a schedule due longer ago than this is overdue. */
  graceMs: number;
  /** The instant due times are compared with (the database clock in shared mode, read with `ops`). */
  now: (ops?: StoreOps) => Promise<number>;
  /**
   * Most schedules exported with a `schedule` label (docs/outcomes.md § Metrics); with more, the
   * per-schedule metrics lose the label and aggregate. Default {@link DEFAULT_SCHEDULE_LABELS}.
   */
  scheduleLabels?: number;
  /** How long a scrape waits for the database's values. Default {@link SCRAPE_READ_MS}. */
  readMs?: number;
}

/**
 * How long a scrape waits for its reads of the database: well inside Prometheus's default scrape
 * timeout (10 s). A scrape behind a lock on orbit_schedules answered after 30 s, when at all.
 */
export const SCRAPE_READ_MS = 5000;

/** Default of `--metrics-schedule-labels`: enough for most fleets, bounded for Prometheus. */
export const DEFAULT_SCHEDULE_LABELS = 1000;

export class ServerMetrics {
  readonly registry = new Registry();
  private readonly fired: Counter;
  private readonly skipped: Counter<"reason">;
  private readonly lag: Histogram;
  private readonly http: Histogram<"method" | "route" | "status">;
  private readonly notifyFailed: Counter;
  private readonly fireWaiting: Gauge;
  /** This scrape's reads of the database, shared by its metrics. */
  private reads: Promise<DatabaseReads> | null = null;

  constructor(o: MetricsOptions) {
    const registers = [this.registry];
    // One read of the database per scrape serves every metric: the first collect() reads, the others reuse it.
    const scrape = (): Promise<DatabaseReads> => {
      if (this.reads !== null) return this.reads;
      const reads = readDatabase(o);
      this.reads = reads;
      // Read afresh at the next scrape, also for a caller of registry.metrics() itself.
      const done = (): void => {
        setImmediate(() => {
          if (this.reads === reads) this.reads = null;
        });
      };
      reads.then(done, done);
      return reads;
    };
    collectDefaultMetrics({ register: this.registry });
    this.fired = new Counter({
      name: "orbit_schedules_fired_total",
      help: "Executions this server started for schedules, including triggers and backfills",
      registers,
    });
    this.skipped = new Counter({
      name: "orbit_schedules_skipped_total",
      help: "Occurrences not started, by reason (overlap, concurrency, missed, buffer_full)",
      labelNames: ["reason"],
      registers,
    });
    // Every reason's series exists from the start (at 0), so rate() and alerts see it before the first skip.
    for (const reason of SKIP_REASONS) this.skipped.inc({ reason }, 0);
    this.notifyFailed = new Counter({
      name: "orbit_notifications_failed_total",
      help: "Webhook deliveries given up after their last attempt (GET /v1/schedules/{id}/notifications)",
      registers,
    });
    this.lag = new Histogram({
      name: "orbit_schedule_fire_lag_seconds",
      help: "Fire time minus due time of the occurrences started on time",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.http = new Histogram({
      name: "orbit_http_request_duration_seconds",
      help: "HTTP requests by method, route pattern and status",
      labelNames: ["method", "route", "status"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    new Gauge({
      name: "orbit_schedules_overdue",
      help: "Active, unpaused schedules not starting: due longer ago than the misfire grace, or retrying a refused start with nothing started for as long",
      registers,
      async collect() {
        // A gauge without labels always has its one series: NaN, Prometheus's "not known", not 0.
        this.set((await scrape()).overdue ?? Number.NaN);
      },
    });
    this.fireWaiting = new Gauge({
      name: "orbit_schedule_fire_waiting_seconds",
      help: "How long the fire batch in progress has waited for the database (a lock held on an Orbit table, an overloaded database); 0 when none waits. Known without the database",
      registers,
    });
    this.scheduleMetrics(registers, scrape);
    taskBacklogMetrics(registers, async () => {
      const r = await scrape();
      return { tasks: r.tasks, nowMs: r.nowMs };
    });
    new Gauge({
      name: "orbit_executions",
      help: "Executions in the database by status",
      labelNames: ["status"],
      registers,
      async collect() {
        const counts = (await scrape()).executions;
        this.reset();
        if (counts !== null) for (const status of EXECUTION_STATUSES) this.set({ status }, counts[status] ?? 0);
      },
    });
    new Gauge({
      name: "orbit_database_up",
      help: "1 when this server's database answered every read of this scrape (or stopped one behind a lock), 0 when a read could not reach it or its time was not read in time",
      registers,
      async collect() {
        this.set((await scrape()).up ? 1 : 0);
      },
    });
    new Gauge({
      name: "orbit_scrape_read_success",
      help: "1 when the metric's value was read from the database at this scrape; 0 when it was not: the database away (orbit_database_up 0) or slower than the scrape's bound (a lock held on an Orbit table)",
      labelNames: ["metric"],
      registers,
      async collect() {
        const r = await scrape();
        this.set({ metric: "orbit_schedules_overdue" }, r.overdue === null ? 0 : 1);
        this.set({ metric: "orbit_executions" }, r.executions === null ? 0 : 1);
        for (const metric of OUTCOME_METRICS) this.set({ metric }, r.figures === null ? 0 : 1);
        for (const metric of TASK_METRICS) this.set({ metric }, r.tasks === null ? 0 : 1);
      },
    });
  }

  /**
   * The per-schedule outcome metrics, read from the database on each scrape: one series per
   * schedule up to `scheduleLabels` schedules, else one unlabelled series each (the oldest last
   * success, the longest run of failures, the sum of failures), so the label set stays bounded.
   */
  private scheduleMetrics(registers: Registry[], scrape: () => Promise<DatabaseReads>): void {
    const read = async (): Promise<ScheduleFigures | null> => (await scrape()).figures;
    const labelNames = ["schedule"] as const;
    new Gauge({
      name: "orbit_schedule_last_success_timestamp_seconds",
      help: "Unix time of the schedule's last COMPLETED execution (absent before the first); unlabelled past --metrics-schedule-labels schedules: the oldest of them",
      labelNames,
      registers,
      async collect() {
        const f = await read();
        this.reset();
        if (f === null) return;
        if (f.perSchedule === null) {
          if (f.aggregate.oldestLastSuccessMs !== null) this.set(f.aggregate.oldestLastSuccessMs / 1000);
          return;
        }
        for (const s of f.perSchedule) {
          if (s.lastSuccessMs !== null) this.set({ schedule: s.scheduleId }, s.lastSuccessMs / 1000);
        }
      },
    });
    new Gauge({
      name: "orbit_schedule_consecutive_failures",
      help: "FAILED executions of the schedule since its last COMPLETED one; unlabelled past --metrics-schedule-labels schedules: the most of any schedule",
      labelNames,
      registers,
      async collect() {
        const f = await read();
        this.reset();
        if (f === null) return;
        if (f.perSchedule === null) this.set(f.aggregate.maxConsecutiveFailures);
        else for (const s of f.perSchedule) this.set({ schedule: s.scheduleId }, s.consecutiveFailures);
      },
    });
    new Counter({
      name: "orbit_schedule_failures_total",
      help: "FAILED executions of the schedule (timeouts included), from the database; unlabelled past --metrics-schedule-labels schedules: their sum",
      labelNames,
      registers,
      async collect() {
        const f = await read();
        this.reset();
        if (f === null) return;
        if (f.perSchedule === null) this.inc(f.aggregate.failures);
        else for (const s of f.perSchedule) this.inc({ schedule: s.scheduleId }, s.failures);
      },
    });
  }

  /** The firing loop's hook. */
  onFire(report: FireReport): void {
    if (report.started > 0) this.fired.inc(report.started);
    for (const [reason, n] of Object.entries(report.skipped)) if (n) this.skipped.inc({ reason }, n);
    for (const ms of report.lagsMs) this.lag.observe(Math.max(0, ms) / 1000);
  }

  /** A manual trigger: started (null), or skipped by the overlap policy or another schedule's concurrency key. */
  onTrigger(skipped: "overlap" | "concurrency" | null): void {
    if (skipped === null) this.fired.inc();
    else this.skipped.inc({ reason: skipped });
  }

  /** A webhook delivery given up (notifier.ts). */
  onNotifyFailed(): void {
    this.notifyFailed.inc();
  }

  onBackfill(started: number): void {
    if (started > 0) this.fired.inc(started);
  }

  observeHttp(method: string, route: string, status: number, seconds: number): void {
    this.http.observe({ method, route, status: String(status) }, seconds);
  }

  /** The scrape; `fireWaitingMs`: how long the firing loop's batch in progress has waited (SchedulerLoop.fireWaitingMs). */
  async text(fireWaitingMs = 0): Promise<string> {
    this.fireWaiting.set(fireWaitingMs / 1000);
    this.reads = null; // a scrape right after another reads afresh
    // prom-client 15 writes an unknown value as `Nan`: Prometheus reads any case, but the exposition
    // format and OpenMetrics parsers want `NaN` (docs/server.md § Metrics).
    return (await this.registry.metrics()).replace(/ Nan$/gm, " NaN");
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

interface ScheduleFigures {
  /** null: more schedules than the label limit. */
  perSchedule: ScheduleOutcomeFigures[] | null;
  aggregate: ScheduleOutcomeAggregate;
}

/** The metrics read from the schedule rows' outcome figures, in one query. */
const OUTCOME_METRICS = [
  "orbit_schedule_last_success_timestamp_seconds",
  "orbit_schedule_consecutive_failures",
  "orbit_schedule_failures_total",
] as const;

/** The metrics read from the worker tasks (metrics-tasks.ts), in one query. */
const TASK_METRICS = ["orbit_tasks_ready", "orbit_tasks_ready_oldest_seconds"] as const;

/** One scrape's values from the database; null: not read (the database away, or no answer within the bound). */
interface DatabaseReads {
  up: boolean;
  overdue: number | null;
  executions: Partial<Record<ExecutionStatus, number>> | null;
  figures: ScheduleFigures | null;
  tasks: ReadyTasks[] | null;
  /** The instant the tasks' waits are measured to (null: not read). */
  nowMs: number | null;
}

/**
 * The scrape's reads, side by side, apart from the server's pool (Store.readApart), and all within
 * one bound: a read that fails with the database away (UNAVAILABLE, a statement PostgreSQL stopped
 * included) or has no answer in time is null; any other failure fails the scrape.
 */
async function readDatabase(o: MetricsOptions): Promise<DatabaseReads> {
  const limit = o.scheduleLabels ?? DEFAULT_SCHEDULE_LABELS;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), o.readMs ?? SCRAPE_READ_MS);
  });
  // A read that could not reach the database: the proxy of a tester refused new connections while
  // one old connection answered SELECT now(), and orbit_database_up said 1 beside every other read 0.
  let unreached = false;
  const read = async <T>(fn: (ops: StoreOps) => Promise<T>): Promise<T | null> => {
    const answer = o.store.readApart ? o.store.readApart(fn) : fn(o.store);
    answer.catch(() => undefined); // an answer after the bound has nobody to tell
    try {
      return await Promise.race([answer, late]);
    } catch (err) {
      if (!(err instanceof OrbitError) || err.code !== "UNAVAILABLE") throw err;
      if (!stoppedByDatabase(err)) unreached = true;
      return null;
    }
  };
  try {
    let nowMs: number | null = null;
    const [now, overdue, executions, figures, tasks] = await Promise.all([
      read((ops) => ops.databaseNow()),
      read(async (ops) => ops.countOverdueSchedules((await o.now(ops)) - o.graceMs)),
      read((ops) => ops.countExecutionsByStatus()),
      read((ops) => readFigures(ops, limit)),
      read(async (ops) => {
        const at = await o.now(ops);
        const ready = await ops.readyTasksByWorkflow(at);
        nowMs = at;
        return ready;
      }),
    ]);
    return { up: now !== null && !unreached, overdue, executions, figures, tasks, nowMs };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A read the database itself stopped or aborted (a lock wait past the read connections' bound, their
 * statement bound, a deadlock): it answered, so it is up (a lock held on an Orbit table, docs/server.md
 * § Metrics). src/store/postgres/unavailable.ts says each so.
 */
function stoppedByDatabase(err: OrbitError): boolean {
  return (
    err.details?.lockTimeout === true ||
    err.details?.aborted === true ||
    err.message.startsWith("the database aborted the transaction")
  );
}

async function readFigures(store: StoreOps, limit: number): Promise<ScheduleFigures> {
  const rows = limit > 0 ? await store.listScheduleOutcomeFigures(limit + 1) : null;
  if (rows !== null && rows.length <= limit) {
    return {
      perSchedule: rows,
      aggregate: { schedules: rows.length, oldestLastSuccessMs: null, maxConsecutiveFailures: 0, failures: 0 },
    };
  }
  return { perSchedule: null, aggregate: await store.aggregateScheduleOutcomes() };
}
