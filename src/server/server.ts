/**
 * The composition root (docs/design.md § Parts, STYLE "one composition root"): config → store (open + migrate) →
 * workflows → executions → scheduler → HTTP app → listen → firing. The only place that builds
 * concrete stores, clocks, loggers and servers.
 */
import { join } from "node:path";
import { type Logger, pino } from "pino";
import { buildApp } from "../api/app.js";
import type { Readiness, ServerRole } from "../api/deps.js";
import { IdempotencyKeys } from "../api/idempotency.js";
import { ServerMetrics } from "../api/metrics.js";
import { registerWorkerRoutes } from "../api/worker-routes.js";
import { SystemClock } from "../clock/system-clock.js";
import { OrbitError } from "../domain/errors.js";
import { Executions } from "../engine/executions.js";
import { TaskWakeups } from "../engine/task-wakeups.js";
import { Workflows } from "../engine/workflows.js";
import { DEFAULT_GRACE_MS, Scheduler, wakeBuffers } from "../scheduler/scheduler.js";
import { PostgresStore } from "../store/postgres/postgres-store.js";
import { PostgresScheduleListener } from "../store/postgres/schedule-listener.js";
import { PostgresTaskListener } from "../store/postgres/task-listener.js";
import { SqliteStore } from "../store/sqlite/sqlite-store.js";
import type { Store } from "../store/store.js";
import { VERSION } from "../version.js";
import { loadAccessConfig } from "./access-config.js";
import { Leadership } from "./leadership.js";
import {
  DEFAULT_DATA_DIR,
  DEFAULT_HOST,
  DEFAULT_PORT,
  isLoopback,
  type RunningServer,
  type ServerOptions,
} from "./options.js";

export type { RunningServer, ServerOptions } from "./options.js";

/** How long close() lets in-flight requests finish before it drops their connections. */
const CLOSE_GRACE_MS = 3000;

function makeLogger(logger: ServerOptions["logger"]): Logger {
  if (typeof logger === "object") return logger;
  return pino({ name: "orbit", level: logger ?? "info" });
}

export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  const log = makeLogger(options.logger);
  const cluster = options.cluster ?? "single";
  const host = options.host ?? DEFAULT_HOST;
  const port = options.port ?? DEFAULT_PORT;
  const graceMs = options.misfireGraceMs ?? DEFAULT_GRACE_MS;
  const clock = options.clock ?? new SystemClock();
  const database = options.database ?? nonEmpty(process.env.ORBIT_DATABASE_URL);
  if (!["single", "active-standby", "shared"].includes(cluster)) {
    throw new OrbitError("INVALID_ARGUMENT", `--cluster ${cluster} is not one of single, active-standby, shared`);
  }
  if (database === undefined && cluster !== "single") {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `--cluster ${cluster} needs PostgreSQL (--database postgres://…): SQLite is one process's file`,
    );
  }
  if (!Number.isSafeInteger(graceMs) || graceMs < 0) {
    throw new OrbitError("INVALID_ARGUMENT", `--misfire-grace must be a duration of 0 or more, got ${graceMs} ms`);
  }

  // config
  const accessConfig = options.config === undefined ? null : loadAccessConfig(options.config);
  if (accessConfig === null && !isLoopback(host)) {
    log.warn({ host }, `listening on ${host} without --config: anyone who can reach it can use the API`);
  }

  // store
  const store: Store =
    database === undefined
      ? new SqliteStore({
          dataDir: options.dataDir ?? DEFAULT_DATA_DIR,
          ...(options.sqliteSynchronous ? { synchronous: options.sqliteSynchronous } : {}),
        })
      : new PostgresStore({
          connectionString: database,
          ...(options.databaseSchema ? { searchPath: options.databaseSchema } : {}),
          onPoolError: (err) => log.warn({ err }, "an idle database connection failed"),
          onClientError: (err) =>
            log.warn({ err }, "a database connection failed mid-transaction; the request fails 503"),
        });
  await store.open();
  const where = database === undefined ? join(options.dataDir ?? DEFAULT_DATA_DIR, "orbit.db") : redact(database);
  log.info({ dialect: store.dialect, database: where }, "store opened");

  let leadership: Leadership | null = null;
  // cluster wiring (docs/cluster.md): schedule changes made through other servers wake this loop.
  let scheduleListener: PostgresScheduleListener | null = null;
  try {
    // engine and scheduler
    const workflows = new Workflows({ store, clock });
    const holder: { scheduler?: Scheduler } = {};
    const wakeups = new TaskWakeups(clock);
    const executions = new Executions({
      store,
      clock,
      workflows,
      onTaskQueued: () => wakeups.wake(),
      ...(options.maxActiveExecutions !== undefined ? { maxActiveExecutions: options.maxActiveExecutions } : {}),
      onEnded: wakeBuffers,
      afterEnded: () => holder.scheduler?.loop.wake(),
    });
    const dueNow = cluster === "shared" ? () => store.databaseNow() : async () => clock.now();
    const metrics = new ServerMetrics({ store, graceMs, now: dueNow });
    if (cluster === "active-standby") {
      leadership = new Leadership({
        connectionString: database!,
        ...(options.databaseSchema ? { searchPath: options.databaseSchema } : {}),
        onChange: (leader) => {
          log.info({ leader }, leader ? "this server is the leader: it fires" : "this server is a standby");
          if (leader) holder.scheduler?.loop.wake();
        },
        onError: (err) => log.warn({ err }, "leadership connection failed; retrying"),
      });
    }
    const lead = leadership;
    const scheduler = new Scheduler({
      store,
      clock,
      workflows,
      executions,
      graceMs,
      onFire: (report) => metrics.onFire(report),
      log: log.child({ component: "scheduler" }),
      ...(cluster === "shared" ? { dueClock: () => store.databaseNow() } : {}),
      ...(lead !== null ? { mayFire: () => lead.isLeader } : {}),
    });
    holder.scheduler = scheduler;
    if (cluster !== "single") {
      scheduleListener = new PostgresScheduleListener({
        connectionString: database!,
        ...(options.databaseSchema ? { searchPath: options.databaseSchema } : {}),
        onNotify: () => scheduler.loop.wake(),
        onError: (err) => log.warn({ err }, "schedule LISTEN connection failed; retrying"),
      });
    }

    // HTTP
    let ready = false;
    const role = (): ServerRole =>
      cluster === "single" ? "single" : cluster === "shared" ? "shared" : lead?.isLeader ? "leader" : "standby";
    const readiness = async (): Promise<Readiness> => {
      if (!ready) return { ready: false, role: role(), message: "starting or stopping" };
      try {
        await store.databaseNow();
        return { ready: true, role: role() };
      } catch (err) {
        return { ready: false, role: role(), message: `the database does not answer: ${(err as Error).message}` };
      }
    };
    const { app, routes, table } = buildApp({
      deps: { workflows, executions, scheduler, metrics, readiness, access: accessConfig?.access ?? null },
      idempotency: new IdempotencyKeys(store, clock, () => {
        scheduler.loop.wake();
        wakeups.wake();
      }),
      logger: log,
      ...(accessConfig !== null ? { authenticate: accessConfig.authenticate } : {}),
    });
    const worker = registerWorkerRoutes(app, {
      store,
      clock,
      executions,
      workflows,
      wakeups,
      ...(accessConfig !== null ? { authenticate: accessConfig.authenticate, mayWork: accessConfig.mayWork } : {}),
      ...(database !== undefined
        ? {
            listener: new PostgresTaskListener({
              connectionString: database,
              onNotify: () => wakeups.wake(),
              onError: (err) => log.warn({ err }, "task LISTEN connection failed; retrying"),
            }),
          }
        : {}),
      ...(options.worker !== undefined ? { options: options.worker } : {}),
      log: log.child({ component: "worker-tasks" }),
    });
    table.push(...worker.documented);
    await app.listen({ port, host });
    const address = app.server.address();
    const boundPort = typeof address === "object" && address !== null ? address.port : port;
    await leadership?.start();
    await scheduleListener?.start();
    scheduler.start();
    ready = true;
    const url = `http://${host.includes(":") ? `[${host}]` : host}:${boundPort}`;
    log.info({ url, version: VERSION, cluster, role: role(), access: accessConfig !== null }, "orbit server listening");

    let closing: Promise<void> | null = null;
    const close = (): Promise<void> => {
      closing ??= (async () => {
        ready = false;
        await scheduler.close();
        await scheduleListener?.close();
        await lead?.close();
        const force = setTimeout(() => app.server.closeAllConnections(), CLOSE_GRACE_MS);
        try {
          await app.close();
        } finally {
          clearTimeout(force);
        }
        await store.close();
        log.info("orbit server stopped");
      })();
      return closing;
    };
    return { url, port: boundPort, routes, close };
  } catch (err) {
    await scheduleListener?.close();
    await leadership?.close();
    await store.close();
    throw err;
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

/** A database URL without its password, for the log. */
function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "postgres://…";
  }
}
