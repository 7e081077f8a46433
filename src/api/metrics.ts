/**
 * Prometheus metrics of one server (docs/server.md § Metrics), on a registry of its own (never prom-client's global
 * one), from zero at start. Counters and the lag histogram come from the firing loop's reports;
 * the overdue and per-status gauges are read from the database on each scrape. With the database
 * away, a scrape still answers: those metrics have no series, `orbit_database_up` is 0, and what
 * the process holds itself (counters, histograms, process_*) is there as always.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { OrbitError } from "../domain/errors.js";
import { EXECUTION_STATUSES } from "../domain/execution.js";
import type { SkipReason } from "../domain/schedule.js";
import type { FireReport } from "../scheduler/fire.js";
import type { ScheduleOutcomeAggregate, ScheduleOutcomeFigures } from "../store/outcome-store.js";
import type { Store } from "../store/store.js";

const SKIP_REASONS: readonly SkipReason[] = ["overlap", "concurrency", "missed", "buffer_full"];

export interface MetricsOptions {
  store: Store;
  /** Misfire grace: a schedule due longer ago than this is overdue. */
  graceMs: number;
  /** The instant due times are compared with (the database clock in shared mode). */
  now: () => Promise<number>;
  /**
   * Most schedules exported with a `schedule` label (docs/outcomes.md § Metrics); with more, the
   * per-schedule metrics lose the label and aggregate. Default {@link DEFAULT_SCHEDULE_LABELS}.
   */
  scheduleLabels?: number;
}

/**
 * A metric read from the database at a scrape: with the database away (UNAVAILABLE), it has no
 * series this time instead of failing the whole scrape with 503.
 */
async function fromDatabase(metric: { reset(): void }, read: () => Promise<void>, away?: () => void): Promise<void> {
  try {
    await read();
  } catch (err) {
    if (!(err instanceof OrbitError && err.code === "UNAVAILABLE")) throw err;
    metric.reset();
    away?.();
  }
}

/** Default of `--metrics-schedule-labels`: enough for most fleets, bounded for Prometheus. */
export const DEFAULT_SCHEDULE_LABELS = 1000;

export class ServerMetrics {
  readonly registry = new Registry();
  private readonly fired: Counter;
  private readonly skipped: Counter<"reason">;
  private readonly lag: Histogram;
  private readonly http: Histogram<"method" | "route" | "status">;
  private readonly notifyFailed: Counter;

  constructor(o: MetricsOptions) {
    const registers = [this.registry];
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
        await fromDatabase(
          this,
          async () => this.set(await o.store.countOverdueSchedules((await o.now()) - o.graceMs)),
          () => this.set(Number.NaN),
        );
      },
    });
    this.scheduleMetrics(o, registers);
    new Gauge({
      name: "orbit_executions",
      help: "Executions in the database by status",
      labelNames: ["status"],
      registers,
      async collect() {
        await fromDatabase(this, async () => {
          const counts = await o.store.countExecutionsByStatus();
          for (const status of EXECUTION_STATUSES) this.set({ status }, counts[status] ?? 0);
        });
      },
    });
    new Gauge({
      name: "orbit_database_up",
      help: "1 when this server's database answered at this scrape, 0 when it could not be reached",
      registers,
      async collect() {
        let up = 0;
        await fromDatabase(this, async () => {
          await o.store.databaseNow();
          up = 1;
        });
        this.set(up);
      },
    });
  }

  /**
   * The per-schedule outcome metrics, read from the database on each scrape: one series per
   * schedule up to `scheduleLabels` schedules, else one unlabelled series each (the oldest last
   * success, the longest run of failures, the sum of failures), so the label set stays bounded.
   */
  private scheduleMetrics(o: MetricsOptions, registers: Registry[]): void {
    const limit = o.scheduleLabels ?? DEFAULT_SCHEDULE_LABELS;
    // One database read per scrape serves the three metrics: the first collect() reads, the other two reuse it.
    let pending: Promise<ScheduleFigures> | null = null;
    const read = (): Promise<ScheduleFigures> => {
      pending ??= readFigures(o.store, limit).finally(() => {
        setImmediate(() => {
          pending = null;
        });
      });
      return pending;
    };
    const labelNames = ["schedule"] as const;
    new Gauge({
      name: "orbit_schedule_last_success_timestamp_seconds",
      help: "Unix time of the schedule's last COMPLETED execution (absent before the first); unlabelled past --metrics-schedule-labels schedules: the oldest of them",
      labelNames,
      registers,
      async collect() {
        await fromDatabase(this, async () => {
          const f = await read();
          this.reset();
          if (f.perSchedule === null) {
            if (f.aggregate.oldestLastSuccessMs !== null) this.set(f.aggregate.oldestLastSuccessMs / 1000);
            return;
          }
          for (const s of f.perSchedule) {
            if (s.lastSuccessMs !== null) this.set({ schedule: s.scheduleId }, s.lastSuccessMs / 1000);
          }
        });
      },
    });
    new Gauge({
      name: "orbit_schedule_consecutive_failures",
      help: "FAILED executions of the schedule since its last COMPLETED one; unlabelled past --metrics-schedule-labels schedules: the most of any schedule",
      labelNames,
      registers,
      async collect() {
        await fromDatabase(this, async () => {
          const f = await read();
          this.reset();
          if (f.perSchedule === null) this.set(f.aggregate.maxConsecutiveFailures);
          else for (const s of f.perSchedule) this.set({ schedule: s.scheduleId }, s.consecutiveFailures);
        });
      },
    });
    new Counter({
      name: "orbit_schedule_failures_total",
      help: "FAILED executions of the schedule (timeouts included), from the database; unlabelled past --metrics-schedule-labels schedules: their sum",
      labelNames,
      registers,
      async collect() {
        await fromDatabase(this, async () => {
          const f = await read();
          this.reset();
          if (f.perSchedule === null) this.inc(f.aggregate.failures);
          else for (const s of f.perSchedule) this.inc({ schedule: s.scheduleId }, s.failures);
        });
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

  async text(): Promise<string> {
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

async function readFigures(store: Store, limit: number): Promise<ScheduleFigures> {
  const rows = limit > 0 ? await store.listScheduleOutcomeFigures(limit + 1) : null;
  if (rows !== null && rows.length <= limit) {
    return {
      perSchedule: rows,
      aggregate: { schedules: rows.length, oldestLastSuccessMs: null, maxConsecutiveFailures: 0, failures: 0 },
    };
  }
  return { perSchedule: null, aggregate: await store.aggregateScheduleOutcomes() };
}
