/**
 * startServer's second part: the store (opened and migrated), the engine, the scheduler and the
 * cluster wiring, each registered in `parts` as soon as it exists. Nothing here listens or fires
 * yet: startServer starts the firing after the HTTP server listens.
 */
import type { ServerMetrics as ServerMetricsType } from "../api/metrics.js";
import { ServerMetrics } from "../api/metrics.js";
import { DatabaseClock } from "../clock/database-clock.js";
import { OrbitError } from "../domain/errors.js";
import { LoggedFailures, passLines } from "../domain/failure-spell.js";
import { Executions } from "../engine/executions.js";
import { Retention } from "../engine/retention.js";
import { TaskHandOff } from "../engine/task-hand-off.js";
import { TaskWakeups } from "../engine/task-wakeups.js";
import { Workflows } from "../engine/workflows.js";
import { SKEW_WARN_MS } from "../scheduler/doctor.js";
import { Scheduler, wakeBuffers } from "../scheduler/scheduler.js";
import { migrationLabel } from "../store/migrations.js";
import type { MigrationsUnderWay } from "../store/postgres/migrate.js";
import { PostgresStore } from "../store/postgres/postgres-store.js";
import { PostgresScheduleListener } from "../store/postgres/schedule-listener.js";
import { lockDataDir } from "../store/sqlite/dir-lock.js";
import { SqliteStore } from "../store/sqlite/sqlite-store.js";
import type { Store, StoreOps } from "../store/store.js";
import type { ServerConfig } from "./config.js";
import { Leadership } from "./leadership.js";
import type { StartedParts } from "./parts.js";
import { reasonOf, StartupError } from "./startup-error.js";

export interface Services {
  store: Store;
  workflows: Workflows;
  executions: Executions;
  scheduler: Scheduler;
  metrics: ServerMetricsType;
  wakeups: TaskWakeups;
  /** Polls parked for new tasks, which starts lease to directly (task-hand-off.ts). */
  handOff: TaskHandOff;
  /** `--cluster active-standby`: the advisory-lock holder fires. */
  leadership: Leadership | null;
  /** `--cluster active-standby | shared`: schedule changes made through other servers wake this loop. */
  scheduleListener: PostgresScheduleListener | null;
  /** Deletes ended executions past `options.retention` (does nothing without it). */
  retention: Retention;
}

/** How long a start waits for PostgreSQL it cannot reach yet (ServerOptions.databaseWaitMs). */
export const DATABASE_WAIT_MS = 30_000;

/**
 * Opens (and migrates) the store; a failure names the file or URL and the cause. A PostgreSQL that
 * cannot be reached yet (a blip, a database starting beside the server) is waited for, a try every
 * second: before, one refused connection at start was exit 1, and without a supervisor the server
 * stayed down (docs/operations.md § Start-up).
 */
export async function openStore(config: ServerConfig, parts: StartedParts): Promise<Store> {
  const waitMs = config.database === undefined ? 0 : (config.options.databaseWaitMs ?? DATABASE_WAIT_MS);
  const began = Date.now();
  const until = began + waitMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await openStoreOnce(config, parts);
    } catch (err) {
      const cause = err instanceof Error ? err.cause : undefined;
      // A database that does not exist, or refuses the role, is not waited for (unavailable.ts).
      const unavailable = cause instanceof OrbitError && cause.code === "UNAVAILABLE";
      if (unavailable && cause.details?.refused === true) throw refusedAtStart(err as StartupError, cause);
      if (!unavailable) throw err;
      if (Date.now() >= until) throw attempt === 1 ? err : gaveUp(err as StartupError, waitMs);
      config.log.warn(
        {
          attempt,
          error: (err as Error).message,
          gives_up_in_s: Math.max(0, Math.round((until - Date.now()) / 1000)),
        },
        `PostgreSQL cannot be reached yet; trying again every second for up to ${durationText(waitMs)} (--database-wait)`,
      );
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

/**
 * The last failure of a start that waited for PostgreSQL: said as giving up, not "retry shortly"
 * (the outage's own advice, which read oddly after 30 s of tries; a tester).
 */
function gaveUp(err: StartupError, waitMs: number): StartupError {
  const cause = err.cause instanceof OrbitError ? err.cause : undefined;
  const reason = (cause?.message ?? err.message).replace(/; retry shortly$/, "");
  return new StartupError(
    err.target,
    `cannot open PostgreSQL at ${err.target}: still unreachable after trying for ${durationText(waitMs)}: ${reason}; start it, or wait longer with --database-wait`,
    { cause: err.cause },
  );
}

/**
 * A PostgreSQL that refuses the connection until someone acts (no such database, the role or its
 * password refused: unavailable.ts) fails the start at once, said as what to fix: it said "the
 * database is unavailable (database "x" does not exist); retry shortly", which no retry helps (a tester).
 */
function refusedAtStart(err: StartupError, cause: OrbitError): StartupError {
  const inner = /^the database is unavailable \((.*)\); retry shortly$/s.exec(cause.message)?.[1] ?? cause.message;
  const fix = /database ".*" does not exist/.test(inner)
    ? "create it (CREATE DATABASE), or correct the database name in the URL"
    : "correct the user or password in the URL, or let that role connect (pg_hba.conf, GRANT CONNECT)";
  return new StartupError(err.target, `cannot open PostgreSQL at ${err.target}: ${inner}; ${fix}`, {
    cause: err.cause,
  });
}

/** `30 s`, `2 min`, `1500 ms`: a wait as the log and the last message say it. */
function durationText(ms: number): string {
  if (ms % 60_000 === 0 && ms >= 60_000) return `${ms / 60_000} min`;
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${ms} ms`;
}

/**
 * Before a start applies migrations: they may take a while (a table rewritten), and the log said
 * nothing until they were done (a tester). Breaking ones applied while other Orbit sessions are
 * open are warned of: servers of an older release fail on the new schema (docs/operations.md § Upgrade).
 */
function saidMigrating(log: ServerConfig["log"], underWay: MigrationsUnderWay): void {
  log.info({ migrations: underWay.pending }, "upgrading the database");
  if (underWay.breaking.length > 0 && underWay.otherSessions > 0) {
    log.warn(
      { migrations: underWay.breaking, other_sessions: underWay.otherSessions },
      "applying breaking migrations while other Orbit sessions are open on this database: servers of an older release still running on it fail on the new schema; stop them (docs/operations.md § Upgrade)",
    );
  }
}

async function openStoreOnce(config: ServerConfig, parts: StartedParts): Promise<Store> {
  const { options, log, database } = config;
  // A dropped connection fails every idle one of the pool and every request in flight at once, and
  // again at each drop while an outage lasts: said once with the error, then every 30 s.
  const now = () => config.clock.now();
  const idle = new LoggedFailures(
    log,
    now,
    { failed: "an idle database connection failed", still: "idle database connections still fail" },
    "warn",
  );
  const midTransaction = new LoggedFailures(
    log,
    now,
    {
      failed: "a database connection failed mid-transaction; the request fails 503",
      still: "database connections still fail mid-transaction; their requests fail 503",
    },
    "warn",
  );
  const store: SqliteStore | PostgresStore =
    database === undefined
      ? new SqliteStore({
          dataDir: config.dataDir,
          ...(options.sqliteSynchronous ? { synchronous: options.sqliteSynchronous } : {}),
          ...(options.sqliteCacheMb !== undefined ? { cacheMb: options.sqliteCacheMb } : {}),
          onMigrating: (underWay) => saidMigrating(log, underWay),
        })
      : new PostgresStore({
          connectionString: database,
          ...(options.databaseSchema ? { searchPath: options.databaseSchema } : {}),
          ...(options.databaseAnswerTimeoutMs !== undefined
            ? { answerTimeoutMs: options.databaseAnswerTimeoutMs }
            : {}),
          onMigrating: (underWay) => saidMigrating(log, underWay),
          onPoolError: (err) => idle.failed(err),
          onClientError: (err) => midTransaction.failed(err),
        });
  try {
    if (database === undefined) parts.add("data-dir lock", lockDataDir(config.dataDir));
    await store.open();
  } catch (err) {
    await store.close().catch(() => undefined);
    const what =
      database === undefined ? `open the SQLite database ${config.where}` : `open PostgreSQL at ${config.where}`;
    throw new StartupError(config.where, `cannot ${what}: ${reasonOf(err)}`, { cause: err });
  }
  parts.add("store", () => store.close());
  log.info({ dialect: store.dialect, database: config.where }, "store opened");
  const { applied, created } = store.migrationLog;
  // An upgrade names what it changed in the database (docs/operations.md § Upgrade); a new one
  // says only how many it applied.
  if (created) log.info({ migrations: applied.length }, "created the database's tables");
  else if (applied.length > 0) log.info({ migrations: applied }, "upgraded the database");
  if (store.newerMigrations.length > 0) {
    log.warn(
      { migrations: store.newerMigrations.map(migrationLabel) },
      "the database has additive migrations of a newer Orbit; this server runs on it: finish the rolling upgrade (docs/operations.md § Upgrade)",
    );
  }
  return store;
}

/**
 * In a cluster every server keeps the database's time: the host's clock moved by its measured offset
 * (docs/cluster.md § One time for the cluster). A single server keeps its host's.
 */
export async function withClusterClock(config: ServerConfig, store: Store, parts: StartedParts): Promise<ServerConfig> {
  if (config.cluster === "single") return config;
  const clock = new DatabaseClock(config.clock, () => store.databaseNow());
  if (!(await clock.align())) {
    config.log.warn("could not measure this host's clock against the database's; it is measured again every minute");
  } else if (Math.abs(clock.offsetMs) > SKEW_WARN_MS) {
    const ms = Math.abs(clock.offsetMs);
    config.log.warn(
      { offset_ms: clock.offsetMs },
      `this host's clock is ${ms} ms ${clock.offsetMs < 0 ? "ahead of" : "behind"} the database's: this server keeps the database's time; synchronise the host's clock with NTP`,
    );
  }
  clock.start();
  parts.add("clock", () => clock.close());
  return { ...config, clock };
}

export function buildServices(config: ServerConfig, store: Store): Services {
  const { options, log, clock, cluster, database } = config;
  const searchPath = options.databaseSchema ? { searchPath: options.databaseSchema } : {};
  // No "did you mean" with identities: it could name a workflow the caller may not see.
  const workflows = new Workflows({ store, clock, nearNames: config.access === null });
  const wakeups = new TaskWakeups(clock);
  const handOff = new TaskHandOff();
  const executions = new Executions({
    store,
    clock,
    workflows,
    onTaskQueued: () => wakeups.wake(),
    onCancelRequested: () => handOff.nudge(),
    handOff,
    ...(options.maxActiveExecutions !== undefined ? { maxActiveExecutions: options.maxActiveExecutions } : {}),
    onEnded: wakeBuffers,
  });
  // The time occurrences come due by: the database's with --cluster shared (the loop, the metric).
  const dueClock = cluster === "shared" ? (tx?: StoreOps) => (tx ?? store).databaseNow() : undefined;
  const dueNow = dueClock ?? (async () => clock.now());
  const metrics = new ServerMetrics({
    store,
    graceMs: config.graceMs,
    now: dueNow,
    ...(options.metricsScheduleLabels !== undefined ? { scheduleLabels: options.metricsScheduleLabels } : {}),
  });
  // Polled every second: an outage is said once with its stack, then every 30 s, and when it ends
  // (it was a warning with the stack every second, and no line when it worked again).
  const leadershipFailures = new LoggedFailures(
    log,
    () => clock.now(),
    passLines("leadership connection", "retrying every second"),
    "warn",
  );
  const leadership =
    cluster === "active-standby"
      ? new Leadership({
          connectionString: database!,
          ...searchPath,
          onError: (err) => leadershipFailures.failed(err),
          onOk: () => leadershipFailures.succeeded(),
        })
      : null;
  const lead = leadership;
  const scheduler = new Scheduler({
    store,
    clock,
    workflows,
    executions,
    graceMs: config.graceMs,
    ...(options.ledgerRetention !== undefined ? { ledgerRetention: options.ledgerRetention } : {}),
    onFire: (report) => {
      metrics.onFire(report);
      // Eager dispatch: onFire runs after the fire's commit, so a woken long poll leases the new
      // tasks at once (its in-transaction wake may have come before they were visible, on PostgreSQL).
      if (report.started > 0) wakeups.wake();
    },
    log: log.child({ component: "scheduler" }),
    ...(dueClock !== undefined ? { dueClock } : {}),
    ...(lead !== null ? { mayFire: () => lead.isLeader, stillLeads: () => lead.confirm() } : {}),
  });
  // The executions ↔ scheduler cycle, as subscriptions: an ended execution may let a buffered
  // occurrence start, and a new leader must look at what is due at once.
  executions.subscribeEnded(() => scheduler.loop.wake());
  leadership?.subscribe((leader) => {
    log.info({ leader }, leader ? "this server is the leader: it fires" : "this server is a standby");
    if (leader) scheduler.loop.wake();
  });
  const scheduleListen = new LoggedFailures(
    log,
    () => clock.now(),
    passLines("schedule LISTEN connection", "retrying"),
    "warn",
  );
  const scheduleListener =
    cluster === "single"
      ? null
      : new PostgresScheduleListener({
          connectionString: database!,
          ...searchPath,
          onNotify: () => scheduler.loop.wake(),
          onError: (err) => scheduleListen.failed(err),
          onReconnected: (upForMs) => scheduleListen.succeeded(upForMs),
        });
  const retention = new Retention({
    store,
    clock,
    fires: scheduler.loop,
    ...options.retention,
    log: log.child({ component: "retention" }),
  });
  return {
    store,
    workflows,
    executions,
    scheduler,
    metrics,
    wakeups,
    handOff,
    leadership,
    scheduleListener,
    retention,
  };
}

/** Starts the cluster wiring and the firing loop: the last parts, so they close first. */
export async function startFiring(services: Services, parts: StartedParts): Promise<void> {
  const { leadership, scheduleListener, scheduler } = services;
  if (leadership !== null) {
    parts.add("leadership", () => leadership.close());
    await leadership.start();
  }
  if (scheduleListener !== null) {
    parts.add("schedule listener", () => scheduleListener.close());
    // Refused at start-up, it retries every second as after a loss (docs/cluster.md § Failover time).
    await scheduleListener.startOrRetry();
  }
  parts.add("scheduler", () => scheduler.close());
  scheduler.start();
  parts.add("retention", () => services.retention.close());
  services.retention.start();
}
