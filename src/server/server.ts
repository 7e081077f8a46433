/**
 * The composition root (docs/design.md § Parts, STYLE "one composition root") and the
 * `orbit-scheduler/server` entry point: `import { startServer } from "orbit-scheduler/server"` runs
 * the whole server in an application's process (docs/operations.md § Embed).
 *
 * In parts, each registered in a {@link StartedParts} list the moment it starts, closed in reverse:
 * config (src/server/config.ts) → services: store, engine, scheduler (src/server/services.ts) →
 * HTTP (listen) → firing. A start-up failure closes what had started and throws a
 * {@link StartupError} naming the file, address or URL and the cause; a refused option is one too,
 * thrown before anything opens (src/server/option-check.ts).
 */

import { createServer as createNetServer } from "node:net";
import { buildApp } from "../api/app.js";
import type { ServerRole } from "../api/deps.js";
import { IdempotencyKeys } from "../api/idempotency.js";
import { registerWorkerRoutes } from "../api/worker-routes.js";
import { HostClock } from "../clock/host-clock.js";
import { SystemClock } from "../clock/system-clock.js";
import { LoggedFailures, passLines } from "../domain/failure-spell.js";
import { DEFAULT_LEASE_MS } from "../engine/tasks.js";
import type { PostgresListener } from "../store/postgres/listener.js";
import { CANCEL_NOTIFY_PREFIX, PostgresTaskListener } from "../store/postgres/task-listener.js";
import { VERSION } from "../version.js";
import { resolveConfig, type ServerConfig } from "./config.js";
import { asStartupError, checkServerOptions } from "./option-check.js";
import type { RunningServer, ServerOptions } from "./options.js";
import { isLoopback, machineNames } from "./options.js";
import { StartedParts } from "./parts.js";
import { readinessCheck } from "./readiness.js";
import { buildServices, openStore, type Services, startFiring, withClusterClock } from "./services.js";
import { reasonOf, StartupError } from "./startup-error.js";

export type { ClusterMode, RunningServer, ServerOptions } from "./options.js";
export { StartupError } from "./startup-error.js";

/** How long close() lets in-flight requests finish before it drops their connections. */
const CLOSE_GRACE_MS = 3000;

export { READINESS_TIMEOUT_MS } from "./readiness.js";

/**
 * Starts an Orbit server: opens (and migrates) the database, serves the HTTP API, the worker
 * protocol, the web UI and /metrics, and fires schedules. Resolves once it listens and fires;
 * `close()` stops it. Rejects with a {@link StartupError} when it cannot start, having closed
 * whatever it had opened; for an option it cannot take (an unknown key, a value of the wrong type or
 * out of range) with code INVALID_ARGUMENT, before it opens anything.
 */
export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  checkServerOptions(options);
  let config: ServerConfig;
  try {
    config = resolveConfig(options);
  } catch (err) {
    throw asStartupError(err);
  }
  const parts = new StartedParts(config.log);
  try {
    // A busy port is found before the store opens: a start refused for it left a new database behind.
    await probePort(config);
    const store = await openStore(config, parts);
    const clustered = await withClusterClock(config, store, parts);
    // A single server on its host's clock reads it through HostClock (steps moved with the database).
    const timed =
      clustered.cluster === "single" && clustered.clock instanceof SystemClock
        ? { ...clustered, clock: new HostClock() }
        : clustered;
    const services = buildServices(timed, store);
    const http = await startHttp(timed, services, parts);
    await startFiring(services, parts);
    http.setReady(true);
    config.log.info(
      { url: http.url, version: VERSION, cluster: config.cluster, role: http.role(), access: config.access !== null },
      "orbit server listening",
    );
    return {
      url: http.url,
      port: http.port,
      routes: http.routes,
      close: async () => {
        await parts.closeAll();
        config.log.info("orbit server stopped");
      },
    };
  } catch (err) {
    await parts.closeAll();
    throw err;
  }
}

/**
 * A LISTEN connection refused at start-up (a terminated backend, the role's connection limit) is
 * retried every second like one lost later, instead of failing the start as "cannot listen on
 * <address>": it only wakes polls and loops early (docs/cluster.md § Failover time). The first
 * attempt is still awaited, so a server that started normally is listening.
 */
function retrying(listener: PostgresListener): { start(): Promise<void>; close(): Promise<void> } {
  return { start: () => listener.startOrRetry(), close: () => listener.close() };
}

interface Http {
  url: string;
  port: number;
  routes: readonly string[];
  role(): ServerRole;
  setReady(ready: boolean): void;
}

/**
 * The host's clock stepped by `ms` (src/clock/host-clock.ts), before the server's time moves by it:
 * the executions' deadlines move with it, either way (a +1 h step timed out a 10-minute run_timeout
 * after 34 s), and a step back caps the leases at a lease from the new time (granted in the time
 * ahead, they ended that much late). Forward, the lapsed leases are the reaper's (wallSteps).
 */
async function moveForStep(ms: number, clock: HostClock, services: Services, config: ServerConfig): Promise<void> {
  const s = Math.round(Math.abs(ms) / 100) / 10;
  config.log.warn(
    { step_ms: ms },
    `this host's clock stepped ${ms > 0 ? "forward" : "back"} by ${s} s: occurrences are decided by the new time; the leases and the executions' timeouts move with it; keep the host's clock synchronised (NTP)`,
  );
  const leaseMs = config.options.worker?.leaseMs ?? DEFAULT_LEASE_MS;
  try {
    await services.store.shiftExecutionDeadlines(ms, ms < 0 ? clock.now() + ms + leaseMs : undefined);
  } catch (err) {
    config.log.warn({ err }, "could not move the executions' deadlines after the clock's step; trying again in 1 s");
    throw err;
  }
}

/** The HTTP part: the API, the worker protocol and the UI, listening; a busy port is a StartupError. */
async function startHttp(config: ServerConfig, services: Services, parts: StartedParts): Promise<Http> {
  const { log, cluster, database, access } = config;
  const { store, workflows, executions, scheduler, metrics, wakeups, handOff, leadership } = services;
  // A single server keeps its host's time (HostClock); a cluster the database's, a test its own.
  const hostClock = config.clock instanceof HostClock ? config.clock : null;
  let ready = false;
  const role = (): ServerRole =>
    cluster === "single" ? "single" : cluster === "shared" ? "shared" : leadership?.isLeader ? "leader" : "standby";
  const readiness = readinessCheck({ store, role, ready: () => ready });
  const { app, routes, table } = buildApp({
    deps: { workflows, executions, scheduler, metrics, readiness, access: access?.access ?? null },
    idempotency: new IdempotencyKeys(store, config.clock, () => {
      scheduler.loop.wake();
      wakeups.wake();
    }),
    logger: log,
    ...(config.options.requestTimeoutMs !== undefined ? { requestTimeoutMs: config.options.requestTimeoutMs } : {}),
    ...(access !== null
      ? { authenticate: access.authenticate }
      : { hostCheck: isLoopback(config.host) ? true : machineNames(config.host) }),
  });
  // Registered before listen: a failed listen must still stop the lease reaper (started onReady).
  parts.add("http", async () => {
    const force = setTimeout(() => app.server.closeAllConnections(), config.options.closeGraceMs ?? CLOSE_GRACE_MS);
    // A connection whose request was still running when close() began is kept alive after its
    // answer (until the client or the keep-alive timeout ends it), and the server's close waits for
    // it: close connections as they become idle, so close() ends when the last request has.
    const idle = setInterval(() => app.server.closeIdleConnections(), 50);
    try {
      await app.close();
    } finally {
      clearInterval(idle);
      clearTimeout(force);
    }
  });
  const taskListen = new LoggedFailures(
    log,
    () => config.clock.now(),
    passLines("task LISTEN connection", "retrying"),
    "warn",
  );
  const worker = registerWorkerRoutes(app, {
    store,
    clock: config.clock,
    executions,
    workflows,
    wakeups,
    handOff,
    ...(access !== null ? { authenticate: access.authenticate, mayWork: access.mayWork } : {}),
    ...(database !== undefined
      ? {
          listener: retrying(
            new PostgresTaskListener({
              connectionString: database,
              // A cancel another server committed (CANCEL_NOTIFY_PREFIX): the parked polls heartbeat.
              // None after a reconnect: what was missed meanwhile may have been either.
              onNotify: (payload) => {
                if (payload === undefined || payload.startsWith(CANCEL_NOTIFY_PREFIX)) handOff.nudge();
                if (payload === undefined || !payload.startsWith(CANCEL_NOTIFY_PREFIX)) wakeups.wake();
              },
              onError: (err) => taskListen.failed(err),
              onReconnected: (upForMs) => taskListen.succeeded(upForMs),
            }),
          ),
        }
      : {}),
    options: { ...config.options.worker, ...(hostClock !== null ? { wallSteps: true } : {}) },
    log: log.child({ component: "worker-tasks" }),
    notifierLog: log.child({ component: "notifier" }),
    sweeperLog: log.child({ component: "timeouts" }),
    onNotifyFailed: () => metrics.onNotifyFailed(),
  });
  table.push(...worker.documented);
  if (hostClock !== null) {
    // The firing loop looks again once the time has moved: asleep on a monotonic timer, it woke the
    // step late, and an occurrence 1 s after a +26 s step was recorded missed.
    const stop = hostClock.watch(
      (ms) => moveForStep(ms, hostClock, services, config),
      () => services.scheduler.loop.wake(),
    );
    parts.add("clock steps", stop);
  }
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    throw listenRefusal(config, err);
  }
  const bound = app.server.address();
  const port = typeof bound === "object" && bound !== null ? bound.port : config.port;
  // Readiness turns false first on close, so a load balancer stops sending before anything stops.
  parts.add("readiness", () => {
    ready = false;
  });
  const url = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`;
  return { url, port, routes, role, setReady: (value) => (ready = value) };
}

/** `check()`, or a rejection once `ms` pass without its answer (the check is left to end by itself). */
/** The StartupError of a port this server cannot listen on. */
function listenRefusal(config: ServerConfig, err: unknown): StartupError {
  const address = `${config.host.includes(":") ? `[${config.host}]` : config.host}:${config.port}`;
  return new StartupError(address, `cannot listen on ${address}: ${reasonOf(err)}`, { cause: err });
}

/** Listens on the port for a moment and lets it go; refuses as the real listen would. Port 0 always binds. */
async function probePort(config: ServerConfig): Promise<void> {
  if (config.port === 0) return;
  const probe = createNetServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once("error", reject);
      probe.listen({ port: config.port, host: config.host, exclusive: true }, () => resolve());
    });
  } catch (err) {
    throw listenRefusal(config, err);
  } finally {
    await new Promise<void>((resolve) => (probe.listening ? probe.close(() => resolve()) : resolve()));
  }
}
