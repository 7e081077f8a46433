/**
 * startServer's first part: the options checked and completed with their defaults, the logger and
 * the access configuration (docs/server.md). Nothing is opened here, so a refusal leaves nothing
 * to close.
 */
import { join } from "node:path";
import { type Logger, pino } from "pino";
import { SystemClock } from "../clock/system-clock.js";
import type { Clock } from "../domain/clock.js";
import { OrbitError } from "../domain/errors.js";
import { graceProblem } from "../domain/schedule.js";
import { DEFAULT_GRACE_MS } from "../scheduler/scheduler.js";
import { type AccessConfig, loadAccessConfig } from "./access-config.js";
import {
  CLUSTER_MODES,
  type ClusterMode,
  DEFAULT_DATA_DIR,
  DEFAULT_HOST,
  DEFAULT_PORT,
  isLoopback,
  type ServerOptions,
} from "./options.js";

export interface ServerConfig {
  options: ServerOptions;
  log: Logger;
  cluster: ClusterMode;
  host: string;
  port: number;
  graceMs: number;
  clock: Clock;
  /** The PostgreSQL URL, or undefined for SQLite. */
  database: string | undefined;
  dataDir: string;
  /** Where the data is, for messages: the SQLite file, or the URL without its password. */
  where: string;
  access: AccessConfig | null;
}

function makeLogger(logger: ServerOptions["logger"]): Logger {
  if (typeof logger === "object") return logger;
  return pino({ name: "orbit", level: logger ?? "info" });
}

export function resolveConfig(options: ServerOptions): ServerConfig {
  const log = makeLogger(options.logger);
  const cluster = options.cluster ?? "single";
  const host = options.host ?? DEFAULT_HOST;
  const port = options.port ?? DEFAULT_PORT;
  const graceMs = options.misfireGraceMs ?? DEFAULT_GRACE_MS;
  const database = options.database ?? nonEmpty(process.env.ORBIT_DATABASE_URL);
  const dataDir = options.dataDir ?? DEFAULT_DATA_DIR;
  // Named as the user gave it: the CLI passes ORBIT_DATABASE_URL on as `database`.
  if (database !== undefined) refuseOtherDatabases(database, database === process.env.ORBIT_DATABASE_URL);
  if (!(CLUSTER_MODES as readonly string[]).includes(cluster)) {
    throw new OrbitError("INVALID_ARGUMENT", `--cluster ${cluster} is not one of ${CLUSTER_MODES.join(", ")}`);
  }
  if (database === undefined && cluster !== "single") {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `--cluster ${cluster} needs PostgreSQL (--database postgres://…): SQLite is one process's file`,
    );
  }
  const graceRefused = graceProblem(graceMs);
  if (graceRefused !== null) throw new OrbitError("INVALID_ARGUMENT", graceRefused);
  const labels = options.metricsScheduleLabels;
  if (labels !== undefined && (!Number.isSafeInteger(labels) || labels < 0 || labels > 1_000_000)) {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `--metrics-schedule-labels must be a whole number from 0 to 1000000, got ${labels}`,
    );
  }
  const ledger = options.ledgerRetention;
  if (ledger !== undefined && (!Number.isSafeInteger(ledger) || ledger < 1 || ledger > 1_000_000)) {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `--ledger-retention must be a whole number from 1 to 1000000, got ${ledger}`,
    );
  }
  const answerMs = options.databaseAnswerTimeoutMs;
  if (answerMs !== undefined && (!Number.isSafeInteger(answerMs) || answerMs < 0)) {
    throw new OrbitError("INVALID_ARGUMENT", `databaseAnswerTimeoutMs must be 0 or more ms, got ${answerMs}`);
  }
  const cacheMb = options.sqliteCacheMb;
  if (cacheMb !== undefined && (!Number.isSafeInteger(cacheMb) || cacheMb < 1 || cacheMb > 65536)) {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `--sqlite-cache-mb must be a whole number from 1 to 65536, got ${cacheMb}`,
    );
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new OrbitError("INVALID_ARGUMENT", `--port must be a whole number from 0 to 65535, got ${port}`);
  }
  const access = options.config === undefined ? null : loadAccessConfig(options.config);
  if (access === null && !isLoopback(host)) {
    log.warn({ host }, `listening on ${host} without --config: anyone who can reach it can use the API`);
  }
  return {
    options,
    log,
    cluster,
    host,
    port,
    graceMs,
    clock: options.clock ?? new SystemClock(),
    database,
    dataDir,
    where: database === undefined ? join(dataDir, "orbit.db") : redact(database),
    access,
  };
}

/**
 * Orbit speaks PostgreSQL and SQLite only: any other URL (`mysql://…`, a file path, a typo) is
 * refused rather than handed to the PostgreSQL driver, which would try it as PostgreSQL and fail
 * with a confusing connection error (docs/server.md).
 */
function refuseOtherDatabases(url: string, fromEnv: boolean): void {
  if (/^postgres(ql)?:\/\//i.test(url)) return;
  // Only the scheme is repeated: the rest may hold a password.
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1];
  const flag = fromEnv ? "ORBIT_DATABASE_URL" : "--database";
  // PostgreSQL's scheme without its two slashes (`postgres:/db`): said as such, where it read
  // "Orbit does not support postgres" (a tester).
  if (scheme !== undefined && /^postgres(ql)?$/i.test(scheme)) {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `${flag} ${scheme}:…: a PostgreSQL URL starts with ${scheme}:// (two slashes), as in postgres://user@host:5432/db`,
    );
  }
  throw new OrbitError(
    "INVALID_ARGUMENT",
    `${scheme === undefined ? `${flag} is not a URL` : `${flag} ${scheme}://…: Orbit does not support ${scheme}`}; give a PostgreSQL URL (postgres://user@host:5432/db or postgresql://…), or leave it unset to use SQLite in --data-dir`,
  );
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

/** A database URL without its password, for the log and error messages. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "postgres://…";
  }
}
