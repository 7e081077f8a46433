/**
 * `orbit server` (docs/design.md § Parts): starts the HTTP API, the scheduler and the UI in this process, prints
 * a line saying where it listens and what it stores in, and one with the web UI's address, and runs
 * until SIGINT, SIGTERM or SIGHUP, when it closes (finishing in-flight fires and requests) and exits 0.
 */
import { constants } from "node:os";
import { join } from "node:path";
import { type Command, InvalidArgumentError, Option } from "commander";
import { OrbitError } from "../domain/errors.js";
import { graceProblem } from "../domain/schedule.js";
import {
  CLUSTER_MODES,
  type ClusterMode,
  SQLITE_SYNCHRONOUS_MODES,
  type SqliteSynchronous,
} from "../domain/server-modes.js";
import { parseDuration } from "../time/interval.js";
import { oneOf, repeatable, wholeNumber } from "./args.js";
import { shortDuration } from "./durations.js";
import { EXIT_REFUSED } from "./exit.js";
import { type CliIO, OutputClosedError } from "./io.js";

/** The options of src/server/server.ts `startServer` (its own doc comments give the defaults). */
export interface StartServerOptions {
  port?: number;
  host?: string;
  dataDir?: string;
  sqliteSynchronous?: SqliteSynchronous;
  sqliteCacheMb?: number;
  database?: string;
  databaseWaitMs?: number;
  cluster?: ClusterMode;
  maxActiveExecutions?: number;
  metricsScheduleLabels?: number;
  misfireGraceMs?: number;
  ledgerRetention?: number;
  config?: string;
  /** The server's log: JSON lines on the CLI's stdout, at the level of --log-level. */
  logger?: import("pino").Logger;
  /** docs/operations.md § Retention. */
  retention?: { maxAgeMs?: number; maxCount?: number; byWorkflow?: Record<string, number> };
}

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

type StartServer = (options: StartServerOptions) => Promise<RunningServer>;

/** The flags as commander parses them: the options the server takes as they are, and the rest to convert. */
interface ServerFlags extends Omit<StartServerOptions, "misfireGraceMs" | "databaseWaitMs" | "logger" | "retention"> {
  misfireGrace?: number;
  databaseWait?: number;
  logLevel?: string;
  retention?: number;
  retentionWorkflow?: Record<string, number>;
  retentionMax?: number;
  shutdownTimeout?: number;
}

/**
 * How long `orbit server` waits, after SIGINT or SIGTERM, for its requests and its fire to finish
 * and its database to close. Past it the process exits: a statement waiting on a database that does
 * not answer held the stop for up to its 30 s bound (docs/operations.md § Stopping).
 */
export const SHUTDOWN_TIMEOUT_MS = 10_000;

/** A duration flag's parser; `problem` says why a parsed value is refused (null: it is not). */
function durationFlag(
  flag: string,
  problem: (text: string, ms: number) => string | null = () => null,
): (text: string) => number {
  return (text) => {
    let ms: number;
    try {
      ms = parseDuration(text, flag);
    } catch (err) {
      if (err instanceof OrbitError) throw new InvalidArgumentError(`${err.message}.`);
      throw err;
    }
    const refused = problem(text, ms);
    if (refused !== null) throw new InvalidArgumentError(`${refused}.`);
    return ms;
  };
}

/** Shortest retention the flags take: a pass every minute deleted every ended run of `--retention 0s`. */
const MIN_RETENTION_MS = 3_600_000;

/**
 * A retention under an hour is refused: `m` is minutes, and `--retention 6m` meant as six months
 * deleted a day's history within a minute (a tester). The library's option takes any.
 */
function retentionProblem(text: string, ms: number): string | null {
  if (ms >= MIN_RETENTION_MS) return null;
  return `"${text}" keeps ended executions less than an hour; a retention is at least 1h (m is minutes: six months is 180d)`;
}

/** `--retention-workflow Audit=365d`, repeatable: collected into {Audit: ms}. */
const retentionWorkflow = repeatable(function retentionWorkflow(
  text: string,
  previous: Record<string, number> = {},
): Record<string, number> {
  const at = text.indexOf("=");
  if (at <= 0) throw new InvalidArgumentError(`give WORKFLOW=DURATION, for example Audit=365d; got "${text}".`);
  const name = text.slice(0, at);
  // Given twice, the last one won without a word (a tester).
  if (Object.hasOwn(previous, name)) throw new InvalidArgumentError(`${name} is given twice; give each workflow once.`);
  return { ...previous, [name]: durationFlag("--retention-workflow", retentionProblem)(text.slice(at + 1)) };
});

/**
 * `sqlite .orbit/orbit.db` or `postgres db.example:5432/orbit` (never the password): with
 * PostgreSQL, the database the server actually uses, also when the URL names none.
 */
export function storageText(
  flags: { dataDir?: string; database?: string },
  env: Readonly<Record<string, string | undefined>> = {},
): string {
  if (flags.database === undefined) return `sqlite ${join(flags.dataDir ?? ".orbit", "orbit.db")}`;
  try {
    const url = new URL(flags.database);
    return `postgres ${url.host}/${postgresDatabase(url, env).name ?? ""}`;
  } catch {
    return "postgres";
  }
}

/**
 * The database a PostgreSQL URL connects to, resolved as the driver (node-postgres, like libpq)
 * does: the URL's path, else PGDATABASE, else the user's name (`?user=`, the URL's user, PGUSER,
 * then the account's). `named` is false when the URL leaves it to that default: `postgres://postgres@h/`
 * migrated Orbit's tables into the `postgres` database and the banner said `h/` (a tester's report).
 */
export function postgresDatabase(
  url: URL,
  env: Readonly<Record<string, string | undefined>>,
): { name: string | undefined; named: boolean } {
  const path = url.pathname.slice(1);
  if (path !== "") return { name: safeDecode(path), named: true };
  const user =
    url.searchParams.get("user") ||
    safeDecode(url.username) ||
    env.PGUSER ||
    (process.platform === "win32" ? env.USERNAME : env.USER);
  return { name: env.PGDATABASE || user || undefined, named: false };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The warning for a PostgreSQL URL without a database name, or null. Not refused: naming the
 * database by the user is libpq's long-standing default, but it should not happen unseen.
 */
export function unnamedDatabaseWarning(
  database: string,
  fromEnv: boolean,
  env: Readonly<Record<string, string | undefined>>,
): string | null {
  // Another scheme, or no URL at all: the server refuses it and says why.
  if (!/^postgres(ql)?:\/\//i.test(database)) return null;
  let url: URL;
  try {
    url = new URL(database);
  } catch {
    return null;
  }
  const { name, named } = postgresDatabase(url, env);
  if (named) return null;
  const flag = fromEnv ? "ORBIT_DATABASE_URL" : "--database";
  const used =
    name === undefined ? "the user's name" : `"${name}" (${env.PGDATABASE ? "PGDATABASE" : "the user's name"})`;
  return `orbit: ${flag} names no database, so PostgreSQL's default is used: ${used}; Orbit keeps its tables there. Name the database at the end of the URL (…${url.host}/${name ?? "<database>"}) to choose it\n`;
}

/**
 * Loaded when the command runs, not when the CLI starts: the other commands do not pay for the
 * server's dependencies (fastify, the stores), and the CLI builds on its own.
 */
async function loadStartServer(): Promise<StartServer> {
  const specifier = new URL("../server/server.js", import.meta.url).href;
  const mod = (await import(specifier)) as { startServer?: StartServer };
  if (typeof mod.startServer !== "function") throw new Error("src/server/server.ts does not export startServer");
  return mod.startServer;
}

/**
 * The signals that stop the server as `close()` does. SIGHUP too: a closed terminal, or a
 * `kill -HUP` meant as a reload, killed the server on the spot (Node's default), without its
 * shutdown; Orbit has no settings to reload, so it stops cleanly and says why (docs/operations.md
 * § Signals).
 */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

/** Resolves on the first stop signal; a second SIGINT or SIGTERM kills the process (Node's default). */
function nextSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals): void => {
      for (const s of STOP_SIGNALS) process.off(s, on);
      resolve(signal);
    };
    for (const s of STOP_SIGNALS) process.on(s, on);
  });
}

/** The ORBIT_* variables Orbit reads: the server's, and the CLI's own (a shell may set them for both). */
const ORBIT_VARIABLES = new Set([
  "ORBIT_DATABASE_URL",
  "ORBIT_NOTIFY_SECRET",
  "ORBIT_SERVER",
  "ORBIT_TOKEN",
  "ORBIT_TEST_DATABASE_URL",
]);

/**
 * A warning per ORBIT_* variable set that Orbit does not read, naming the flag it looks like:
 * `ORBIT_PORT=8080` was ignored without a word and the server listened on 7233 (a tester's
 * systemd unit). Every other setting is a flag (docs/operations.md § Configure).
 */
export function unreadVariableWarnings(env: Readonly<Record<string, string | undefined>>, flags: string[]): string[] {
  return Object.keys(env)
    .filter((name) => name.startsWith("ORBIT_") && !ORBIT_VARIABLES.has(name) && env[name] !== undefined)
    .sort()
    .map((name) => {
      const flag = `--${name.slice("ORBIT_".length).toLowerCase().replaceAll("_", "-")}`;
      const use = flags.includes(flag)
        ? `give ${flag} instead`
        : "the server's settings are flags (orbit server --help)";
      return `orbit: ${name} is set, but Orbit reads no such variable (only ORBIT_DATABASE_URL and ORBIT_NOTIFY_SECRET configure the server): ${use}\n`;
    });
}

export function registerServerCommand(program: Command, io: CliIO): void {
  const command = program
    .command("server")
    .description("run the Orbit server: HTTP API under /v1, web UI at /, metrics at /metrics")
    .option("--port <port>", "port to listen on; 0 picks a free one (default: 7233)", wholeNumber(0, 65535))
    .option("--host <host>", "address to listen on (default: 127.0.0.1; another warns unless --config)")
    .option("--data-dir <dir>", "folder of the SQLite database orbit.db (default: ./.orbit)")
    .option(
      "--sqlite-synchronous <mode>",
      "full (default): fsync every commit; normal: survives a crash, may lose the last commits on power loss",
      // As every other choice is read ("Full or normal." came out capitalised by commander; a tester).
      oneOf(SQLITE_SYNCHRONOUS_MODES),
    )
    .option(
      "--sqlite-cache-mb <mb>",
      "most memory SQLite's page cache holds; more saves CPU on large databases (default: 4)",
      wholeNumber(1, 65536),
    )
    .option("--database <url>", "PostgreSQL URL postgres://… instead of SQLite (env: ORBIT_DATABASE_URL)")
    .option(
      "--database-wait <duration>",
      "PostgreSQL: how long a start waits for a database it cannot reach yet, trying every second; 0s fails at once (default: 30s)",
      durationFlag("--database-wait"),
    )
    .addOption(
      new Option("--cluster <mode>", "several servers on one PostgreSQL database (default: single)").choices(
        CLUSTER_MODES,
      ),
    )
    .option("--max-active-executions <n>", "refuse starts beyond n running executions (429)", wholeNumber(1, 1e9))
    .option(
      "--metrics-schedule-labels <n>",
      "most schedules /metrics labels one by one; beyond, their outcome metrics aggregate (default: 1000)",
      wholeNumber(0, 1_000_000),
    )
    .option("--config <file>", "identities and tokens (access control); without it the server is open")
    .option(
      "--misfire-grace <duration>",
      "how late an occurrence may be and still start (default: 60s)",
      durationFlag("--misfire-grace", (_text, ms) => graceProblem(ms)),
    )
    .option(
      "--ledger-retention <rows>",
      "ledger rows (orbit schedule occurrences) kept per schedule, newest first, trimmed every 64 rows written (up to N + 63 between trims; default: 1000)",
      wholeNumber(1, 1_000_000),
    )
    .option(
      "--retention <duration>",
      "delete ended executions older than this, e.g. 30d (default: keep)",
      durationFlag("--retention", retentionProblem),
    )
    .option(
      "--retention-workflow <name=duration>",
      "a workflow's own retention, e.g. Audit=365d (repeatable)",
      retentionWorkflow,
    )
    .option("--retention-max <n>", "keep only the newest n ended executions", wholeNumber(1, Number.MAX_SAFE_INTEGER))
    .option(
      "--shutdown-timeout <duration>",
      "after SIGINT or SIGTERM, the longest wait for in-flight fires, requests and the database to finish before exiting (default: 10s)",
      durationFlag("--shutdown-timeout"),
    )
    .addOption(
      new Option("--log-level <level>", "log level of the JSON log on stdout (default: info)").choices([
        "trace",
        "debug",
        "info",
        "warn",
        "error",
        "fatal",
        "silent",
      ]),
    )
    .addHelpText(
      "after",
      `
Examples:
  $ orbit server
  orbit server listening on http://127.0.0.1:7233 (sqlite .orbit/orbit.db)
  open http://127.0.0.1:7233/ for the web UI
  $ orbit server --database postgres://orbit@db:5432/orbit --cluster active-standby --host 0.0.0.0 --config orbit.yaml`,
    )
    .action(async (flags: ServerFlags) => {
      const known = command.options.map((o) => o.long ?? "");
      for (const warning of unreadVariableWarnings(io.env, known)) await io.stderr.write(warning);
      const database = flags.database ?? (io.env.ORBIT_DATABASE_URL || undefined);
      const unnamed =
        database === undefined ? null : unnamedDatabaseWarning(database, flags.database === undefined, io.env);
      if (unnamed !== null) await io.stderr.write(unnamed);
      // SQLite's settings on a PostgreSQL server were ignored without a word (a tester).
      const sqliteOnly = [
        flags.sqliteSynchronous !== undefined ? "--sqlite-synchronous" : "",
        flags.sqliteCacheMb !== undefined ? "--sqlite-cache-mb" : "",
      ].filter((f) => f !== "");
      if (database === undefined && flags.databaseWait !== undefined) {
        await io.stderr.write(
          "orbit: --database-wait applies to PostgreSQL only; this server uses SQLite, so it is ignored\n",
        );
      }
      if (database !== undefined && sqliteOnly.length > 0) {
        await io.stderr.write(
          `orbit: ${sqliteOnly.join(" and ")} ${sqliteOnly.length > 1 ? "apply" : "applies"} to SQLite only; this server uses PostgreSQL, so ${sqliteOnly.length > 1 ? "they are" : "it is"} ignored\n`,
        );
      }
      const options: StartServerOptions = {
        port: flags.port,
        host: flags.host,
        dataDir: flags.dataDir,
        sqliteSynchronous: flags.sqliteSynchronous,
        sqliteCacheMb: flags.sqliteCacheMb,
        database,
        cluster: flags.cluster,
        maxActiveExecutions: flags.maxActiveExecutions,
        metricsScheduleLabels: flags.metricsScheduleLabels,
        misfireGraceMs: flags.misfireGrace,
        databaseWaitMs: flags.databaseWait,
        ledgerRetention: flags.ledgerRetention,
        config: flags.config,
        // The JSON log goes through the CLI's own stdout, so its lines keep their order with the
        // "listening on" line (pino's own writer is asynchronous: the start's lines came after it),
        // and a reader gone away (`orbit server | head`) drops them quietly.
        logger: (await import("pino")).pino(
          { name: "orbit", level: flags.logLevel ?? "info" },
          { write: (line: string) => io.stdout.print(line) },
        ),
      };
      if (flags.retention !== undefined || flags.retentionWorkflow !== undefined || flags.retentionMax !== undefined) {
        options.retention = {
          ...(flags.retention !== undefined ? { maxAgeMs: flags.retention } : {}),
          ...(flags.retentionWorkflow !== undefined ? { byWorkflow: flags.retentionWorkflow } : {}),
          ...(flags.retentionMax !== undefined ? { maxCount: flags.retentionMax } : {}),
        };
      }
      for (const key of Object.keys(options) as Array<keyof StartServerOptions>) {
        if (options[key] === undefined) delete options[key];
      }
      const startServer = await loadStartServer();
      const signal = nextSignal();
      // A stop asked for before the server is up ends the command at once, as before the handlers
      // were set: Ctrl-C while the start waited up to --database-wait for PostgreSQL was ignored
      // for that whole wait, and one during the start's last steps printed "listening on" and only
      // then stopped (a tester). What the start had begun is safe to drop: migrations run in one
      // transaction, and nothing has been fired or answered yet.
      let started = false;
      void signal.then(async (s) => {
        if (started) return;
        await io.stderr
          .write(`orbit: ${s} during start-up: stopped before the server started
`)
          .catch(() => undefined);
        process.exit(128 + (constants.signals[s] ?? 0));
      });
      const server = await startServer(options).catch((err: unknown) => {
        // A system error (EADDRINUSE, EACCES …) is the user's to fix, not a crash: say it plainly.
        const code = (err as NodeJS.ErrnoException | null)?.code;
        if (err instanceof Error && typeof code === "string" && !(err instanceof OrbitError)) {
          throw new OrbitError("INTERNAL", `cannot start the server: ${err.message}`);
        }
        throw err;
      });
      started = true;
      // The first line is the one scripts wait for and the docs quote; the second says where to look.
      // A reader gone away (`orbit server | head -1`) is no reason to stop serving: this rejected, the
      // command ended, and the server ran on deaf to SIGTERM (only SIGKILL stopped it).
      await io.stdout
        .write(
          `orbit server listening on ${server.url} (${storageText({ ...flags, database }, io.env)})\nopen ${server.url}/ for the web UI\n`,
        )
        .catch((err: unknown) => {
          if (!(err instanceof OutputClosedError)) throw err;
        });
      if ((await signal) === "SIGHUP") {
        await io.stderr
          .write("orbit: SIGHUP: the server stops (it has no settings to reload; restart it to change them)\n")
          .catch(() => undefined);
      }
      const bound = flags.shutdownTimeout ?? SHUTDOWN_TIMEOUT_MS;
      if (await closedWithin(server, bound)) return;
      // Whatever still waits (a statement on a database that does not answer) is abandoned: the
      // database rolls back a transaction whose connection ends, so nothing half-done stays.
      await io.stderr.write(
        `orbit: the server did not stop within ${shortDuration(bound)} (the database does not answer, or a lock another session holds keeps a statement waiting); exiting, the database rolls back what was in flight\n`,
      );
      process.exit(EXIT_REFUSED);
    });
}

/** True when `server.close()` finished within `ms`. */
async function closedWithin(server: { close(): Promise<void> }, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([server.close().then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}
