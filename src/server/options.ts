/** The options of `orbit server` (docs/design.md § Parts) and their defaults. */
import { hostname } from "node:os";
import type { LevelWithSilentOrString, Logger } from "pino";
import type { WorkerProtocolOptions } from "../api/worker-routes.js";
import type { Clock } from "../domain/clock.js";
import type { ClusterMode, SqliteSynchronous } from "../domain/server-modes.js";
import type { RetentionPolicy } from "../engine/retention.js";

export { CLUSTER_MODES, type ClusterMode, SQLITE_SYNCHRONOUS_MODES } from "../domain/server-modes.js";

/**
 * startServer's options. A key not listed here (at the top, in `retention`, in `worker`) and a value
 * of the wrong type are refused with a StartupError before anything opens (src/server/option-check.ts).
 */
export interface ServerOptions {
  /** TCP port. Default 7233; 0 picks any free port (see {@link RunningServer.port}). */
  port?: number;
  /** Interface to listen on. Default "127.0.0.1"; another host without `config` is logged as a warning. */
  host?: string;
  /** Folder of the SQLite database `<dataDir>/orbit.db`. Default "./.orbit". Unused with PostgreSQL. */
  dataDir?: string;
  /**
   * SQLite `synchronous` under WAL (docs/storage.md § Durability): `full` fsyncs every commit;
   * `normal` survives a process crash (kill -9) but may lose the last commits on power loss.
   * Default `full`. Unused with PostgreSQL.
   */
  sqliteSynchronous?: SqliteSynchronous;
  /**
   * Most memory SQLite's page cache holds, MB (docs/operations.md § Sizing): more saves CPU on
   * databases larger than it, and is that much more RSS. Default 4. Unused with PostgreSQL.
   */
  sqliteCacheMb?: number;
  /** A postgres:// URL. Default: env ORBIT_DATABASE_URL, else SQLite in `dataDir`. */
  database?: string;
  /** PostgreSQL search_path (one schema per deployment or test). Default: the server's default. */
  databaseSchema?: string;
  /**
   * PostgreSQL: how long a start waits for a database it cannot reach yet (refused, reset, timed
   * out), retrying every second, before it fails. Default 30 s; 0 fails at once. A wrong password
   * or a missing database fails at once whatever this says.
   */
  databaseWaitMs?: number;
  /**
   * PostgreSQL: a statement (or COMMIT) without an answer this long fails its request with 503
   * UNAVAILABLE and its connection is dropped: a network stall or a frozen database host answers
   * nothing and resets nothing (docs/operations.md § When PostgreSQL restarts). Default 15 s; 0:
   * no bound.
   */
  databaseAnswerTimeoutMs?: number;
  /**
   * `single` (default): this server fires. `active-standby`: only the holder of a PostgreSQL advisory
   * lock fires. `shared`: every server fires, due times compared with the database clock.
   * The last two need PostgreSQL.
   */
  cluster?: ClusterMode;
  /** Most RUNNING + COMPENSATING executions; starts beyond it are 429. Default: no limit. */
  maxActiveExecutions?: number;
  /**
   * Most schedules whose outcome metrics carry a `schedule` label; with more, they aggregate
   * unlabelled (docs/outcomes.md § Metrics). 0: always aggregate. Default 1000.
   */
  metricsScheduleLabels?: number;
  /** How late an occurrence may be and still start as late rather than missed, ms: at least 1000. Default 60000. */
  misfireGraceMs?: number;
  /** Ledger rows kept per schedule, newest first (docs/design.md § The model). Default 1000. */
  ledgerRetention?: number;
  /**
   * How long `close()` lets in-flight HTTP requests finish before their connections are dropped,
   * ms (docs/server.md § Shutdown). Default 3000.
   */
  closeGraceMs?: number;
  /**
   * How long a client may take to send a whole request, headers and body, before it is answered 408
   * and its connection closed, ms (docs/security.md). Default 30000.
   */
  requestTimeoutMs?: number;
  /** Default: the system clock. Tests inject a ManualClock. */
  clock?: Clock;
  /** A pino logger, or the level of the default one (JSON on stdout). Default "info". */
  logger?: Logger | LevelWithSilentOrString;
  /**
   * Identities file (YAML or JSON, docs/design.md § Access control): every request then needs a
   * bearer token. Default: open server.
   */
  config?: string;
  /**
   * Deleting ended executions (with their events, step results and tasks) by age and count, in
   * small batches off the fire path (docs/operations.md § Retention). Default: kept forever.
   */
  retention?: RetentionPolicy;
  /** Worker protocol timings (lease 30 s, heartbeat 5 s, poll 20 s by default). */
  worker?: WorkerProtocolOptions;
}

export interface RunningServer {
  /** `http://host:port`. */
  url: string;
  /** The port listened on (the one picked when `port` was 0). */
  port: number;
  /** Every route registered, `METHOD /path` (for the OpenAPI coverage test). */
  routes: readonly string[];
  /** Stops firing, finishes in-flight requests, closes the store. Idempotent; takes at most a few seconds. */
  close(): Promise<void>;
}

export const DEFAULT_PORT = 7233;
export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_DATA_DIR = "./.orbit";

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);
export const isLoopback = (host: string): boolean => LOOPBACK.has(host) || host.startsWith("127.");

/**
 * The names an open server on another interface answers to, besides IP addresses and loopback
 * (src/api/cross-site.ts): the machine's host name, with and without its domain, and the `--host`
 * given when it is a name. Lower case.
 */
export function machineNames(host: string): ReadonlySet<string> {
  const names = new Set<string>();
  for (const name of [hostname(), host]) {
    const lower = name.toLowerCase();
    if (lower === "" || /^[\d.]+$/.test(lower) || lower.includes(":")) continue;
    names.add(lower);
    names.add(lower.split(".")[0] as string);
  }
  return names;
}
