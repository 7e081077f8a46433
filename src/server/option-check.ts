/**
 * startServer's options checked before anything opens (docs/operations.md § Embed): an application
 * in plain JavaScript gets no type check, and a misspelt key or a value of the wrong type was taken
 * for the default without a word (`datadir` kept the data in ./.orbit, `retention: { maxAgeMs:
 * "30d" }` kept every execution forever, `sqliteSynchronous: "off"` ran FULL). Each refusal is a
 * StartupError with the code INVALID_ARGUMENT whose `target` is the option as the caller wrote it.
 *
 * A value of the wrong type is refused here, naming the option; a number out of its range is left
 * to resolveConfig (src/server/config.ts), whose messages are the ones `orbit server` gives and
 * name the flag (`--ledger-retention must be a whole number from 1 to 1000000, got 0`). Options
 * without such a check (the `…Ms` timings, `retention`, `worker`) are checked here in full.
 */

import type { WorkerProtocolOptions } from "../api/worker-routes.js";
import { OrbitError } from "../domain/errors.js";
import { unknownKeys } from "../domain/option-keys.js";
import type { RetentionPolicy } from "../engine/retention.js";
import { parseDuration } from "../time/interval.js";
import { CLUSTER_MODES, type ServerOptions, SQLITE_SYNCHRONOUS_MODES } from "./options.js";
import { StartupError } from "./startup-error.js";

/** What is wrong with one option, or null: `target` is its path (`retention.maxAgeMs`). */
type Problem = { target: string; message: string } | null;
type Rule = (value: unknown, path: string) => Problem;
/**
 * A rule per key of an options type, held to the type by the compiler as keysOf's lists are
 * (src/domain/option-keys.ts): a key added to ServerOptions without a rule here does not compile.
 */
type Rules<T> = { readonly [K in keyof Required<T>]: Rule };

/** The levels of the default logger (pino's, without custom levels). */
const LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;

/** `"30d"`, `-5`, `an object`: the value refused, as the message shows it. */
function shown(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === null || typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return "an array";
  if (typeof value === "bigint") return `${value}n`;
  return typeof value === "function" ? "a function" : typeof value === "object" ? "an object" : String(value);
}

/** A duration written as the flags take it (`"30d"`): what it is in milliseconds. */
function durationHint(value: unknown): string {
  if (typeof value !== "string") return "";
  try {
    return ` (${value.trim()} is ${parseDuration(value)} ms)`;
  } catch {
    return "";
  }
}

function must(path: string, wants: string, value: unknown, hint = ""): Problem {
  return { target: path, message: `${path} must be ${wants}, got ${shown(value)}${hint}` };
}

function rule(wants: string, ok: (value: unknown) => boolean): Rule {
  return (value, path) => (ok(value) ? null : must(path, wants, value));
}

/** A number, its range left to resolveConfig; `wants` says the whole rule all the same. */
const numberOf = (wants: string, hint = false): Rule => {
  return (value, path) =>
    typeof value === "number" ? null : must(path, wants, value, hint ? durationHint(value) : "");
};

/** Whole milliseconds, at least `min`. */
function ms(min: number): Rule {
  return (value, path) => {
    if (typeof value !== "number" || !Number.isSafeInteger(value)) {
      return must(path, "a whole number of milliseconds", value, durationHint(value));
    }
    return value >= min ? null : must(path, `at least ${min} ms`, value);
  };
}

function whole(min: number): Rule {
  return rule(`a whole number, at least ${min}`, (v) => typeof v === "number" && Number.isSafeInteger(v) && v >= min);
}

const text = rule("a string", (v) => typeof v === "string");
const flag = rule("true or false", (v) => typeof v === "boolean");

/** `"full" or "normal"`. */
function quoted(choices: readonly string[]): string {
  const said = choices.map((c) => JSON.stringify(c));
  return `${said.slice(0, -1).join(", ")} or ${said.at(-1)}`;
}

function oneOf(choices: readonly string[]): Rule {
  return rule(quoted(choices), (v) => choices.includes(v as string));
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const hasFunctions =
  (...names: string[]) =>
  (v: unknown): boolean =>
    isObject(v) && names.every((n) => typeof v[n] === "function");

/** An object whose keys are `rules`' and whose values pass them; `aliases` lead "did you mean". */
function shaped<T>(
  rules: Rules<T>,
  wants: string,
  aliases: Readonly<Record<string, string>> = {},
): (value: unknown, path: string, what?: string) => Problem {
  const known = Object.keys(rules);
  return (value, path, what = `startServer's ${path}`) => {
    if (!isObject(value)) return must(path, wants, value);
    const unknown = unknownKeys(value, known, what, aliases);
    if (unknown !== null) {
      return {
        target: path === "" ? (unknown.keys[0] as string) : `${path}.${unknown.keys[0]}`,
        message: unknown.message,
      };
    }
    for (const key of known) {
      const given = value[key];
      if (given === undefined) continue;
      const problem = (rules[key as keyof Rules<T>] as Rule)(given, path === "" ? key : `${path}.${key}`);
      if (problem !== null) return problem;
    }
    return null;
  };
}

/** `byWorkflow`: a workflow name to its retention in ms. */
const perWorkflow: Rule = (value, path) => {
  if (!isObject(value))
    return must(path, "an object of workflow names to milliseconds, such as { Audit: 31536000000 }", value);
  for (const [name, given] of Object.entries(value)) {
    const problem = ms(0)(given, `${path}.${name}`);
    if (problem !== null) return problem;
  }
  return null;
};

const retention = shaped<RetentionPolicy>(
  { maxAgeMs: ms(0), byWorkflow: perWorkflow, maxCount: whole(0), batchSize: whole(1), intervalMs: ms(1) },
  "an object such as { maxAgeMs: 2592000000 } (30 days; docs/operations.md § Retention)",
  // The flags' names camel-cased (--retention-max, --retention-workflow), and an age said otherwise.
  { olderThan: "maxAgeMs", maxAge: "maxAgeMs", retentionMax: "maxCount", retentionWorkflow: "byWorkflow" },
);

const worker = shaped<WorkerProtocolOptions>(
  { leaseMs: ms(1), heartbeatMs: ms(1), pollTimeoutMs: ms(0), reaper: flag, wallSteps: flag },
  "an object such as { leaseMs: 30000 }",
);

const SERVER_RULES: Rules<ServerOptions> = {
  port: numberOf("a whole number from 0 to 65535"),
  host: text,
  dataDir: text,
  sqliteSynchronous: oneOf(SQLITE_SYNCHRONOUS_MODES),
  sqliteCacheMb: numberOf("a whole number of MB from 1 to 65536"),
  database: text,
  databaseSchema: text,
  databaseWaitMs: ms(0),
  databaseAnswerTimeoutMs: ms(0),
  cluster: oneOf(CLUSTER_MODES),
  maxActiveExecutions: whole(1),
  metricsScheduleLabels: numberOf("a whole number from 0 to 1000000"),
  misfireGraceMs: numberOf("a whole number of milliseconds from 1000 (1s) to 365 days", true),
  ledgerRetention: numberOf("a whole number from 1 to 1000000"),
  closeGraceMs: ms(0),
  requestTimeoutMs: ms(1),
  clock: rule("a Clock (an object with now() and sleep())", hasFunctions("now", "sleep")),
  logger: rule(
    `a pino logger or a level: ${quoted(LEVELS)}`,
    (v) => LEVELS.includes(v as (typeof LEVELS)[number]) || hasFunctions("info", "warn", "error", "child")(v),
  ),
  config: text,
  retention,
  worker,
};

/** The flags' names camel-cased (docs/server.md § Flags maps each to its option). */
const SERVER_ALIASES = {
  misfireGrace: "misfireGraceMs",
  databaseWait: "databaseWaitMs",
  logLevel: "logger",
  level: "logger",
  retentionMax: "retention",
  retentionWorkflow: "retention",
};

const OPTIONS_OBJECT = 'an options object such as { port: 7233, dataDir: "./.orbit" }';
const serverOptions = shaped<ServerOptions>(SERVER_RULES, OPTIONS_OBJECT, SERVER_ALIASES);

/**
 * Throws a StartupError (code INVALID_ARGUMENT) for the first option startServer cannot take: a key
 * it does not know, here or in `retention` and `worker`, or a value of the wrong type.
 */
export function checkServerOptions(options: unknown): asserts options is ServerOptions {
  if (!isObject(options)) {
    throw new StartupError("options", `startServer takes ${OPTIONS_OBJECT}, got ${shown(options)}`, {
      code: "INVALID_ARGUMENT",
    });
  }
  const problem = serverOptions(options, "", "startServer");
  if (problem !== null) throw new StartupError(problem.target, problem.message, { code: "INVALID_ARGUMENT" });
}

/**
 * resolveConfig's refusal (a range, a database URL, a cluster on SQLite, the --config file) as the
 * StartupError an embedder catches, its message as `orbit server` prints it. The target is the
 * option the message begins with (`--ledger-retention` is `ledgerRetention`, `--misfire-grace`
 * `misfireGraceMs`), or that word itself (`ORBIT_DATABASE_URL`).
 */
export function asStartupError(err: unknown): unknown {
  if (!(err instanceof OrbitError) || err instanceof StartupError) return err;
  const word = err.message.split(/[\s:]/, 1)[0] ?? "";
  const camel = word.replace(/^--/, "").replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
  const target = [camel, `${camel}Ms`].find((k) => Object.hasOwn(SERVER_RULES, k)) ?? word;
  return new StartupError(target, err.message, { code: err.code, cause: err });
}
