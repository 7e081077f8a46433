/**
 * Workflow definitions and the context their code runs with. `defineWorkflow` only checks and
 * freezes the definition; a Worker registers it with the server and runs it.
 */

import { inputSchemaRootRefusal } from "../domain/input-schema.js";
import type { Jsonified, JsonObject, JsonValue, ReadonlyJsonObject } from "../domain/json.js";
import { MAX_ATTEMPTS, MAX_BACKOFF_MS } from "../domain/worker-protocol.js";
import { isWorkflowVersion, versionWithoutBuild } from "../domain/workflow-version.js";
import { keysOf, refuseUnknownKeys } from "./option-keys.js";

/**
 * How a failed attempt is retried: the whole run again, where the steps whose results were
 * journaled are not run again.
 */
export interface RetryPolicy {
  /** Attempts in all, the first included; 1 means no retry. Default 3. */
  maxAttempts: number;
  /** Delay before the second attempt, doubling for each further one (at most 10 minutes). Default 1 000 ms. */
  backoffMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = Object.freeze({ maxAttempts: 3, backoffMs: 1000 });

/** What started the execution (docs/design.md § What the execution receives), when a schedule did. */
export interface TriggerInfo {
  type: "cron" | "interval" | "manual" | "backfill";
  schedule_id: string;
  occurrence_id: string;
  scheduled_for: string;
  started_at: string;
  timezone?: string;
  attempt?: number;
  concurrency_key?: string;
  [key: string]: unknown;
}

export interface WorkflowLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export interface StepOptions<T> {
  /**
   * Undoes the step when the execution is cancelled later; receives the step's journaled result.
   * Default none.
   */
  compensate?: ((result: Jsonified<T>) => Promise<void> | void) | undefined;
}

export interface WorkflowContext {
  readonly executionId: string;
  readonly workflow: string;
  readonly version: string;
  /** 1 for the first attempt of the run; +1 for each retry (failure or lost worker). */
  readonly attempt: number;
  /** Continue-as-new counter: 1 for the first run. */
  readonly run: number;
  readonly trigger: TriggerInfo | null;
  /** Aborts when the execution is cancelled (or this worker lost the task). */
  readonly signal: AbortSignal;
  readonly log: WorkflowLogger;
  /**
   * Runs `fn`: its result (JSON) is journaled in the server before `step` returns, and a retried
   * attempt gets the journaled result without running `fn` again. At least once, not exactly once:
   * `fn` runs again when its result was not journaled (its worker died during it or before the
   * journal write landed), so key its side effects with `executionId`, `run` and the step's name
   * (docs/workflows.md § Steps run at least once). Step names must be unique within a run, and
   * are how a replay finds its results: bump the version when steps change (§ Determinism and
   * versions). It returns the result's JSON form, on the first run too (a `Date` comes back as its
   * string), and its type says so ({@link Jsonified}); a result that is JSON already
   * (`T extends JsonValue`, generic helpers included) keeps its type.
   */
  step<T extends JsonValue>(
    name: string,
    fn: (signal: AbortSignal) => Promise<T> | T,
    options?: StepOptions<T>,
  ): Promise<T>;
  step<T>(name: string, fn: (signal: AbortSignal) => Promise<T> | T, options?: StepOptions<T>): Promise<Jsonified<T>>;
  /** Ends this run and starts the next one of the same execution with `input`. Never returns. */
  continueAsNew(input: ReadonlyJsonObject): never;
}

export interface WorkflowDefinition<I extends ReadonlyJsonObject = JsonObject> {
  readonly name: string;
  /** Semver, e.g. `1.0.0`. */
  readonly version: string;
  /** JSON Schema (draft 2020-12) of the input; the server validates and applies defaults. Default: any object. */
  readonly input?: JsonObject | undefined;
  /** Shown by `orbit workflow list`. Default none. */
  readonly description?: string | undefined;
  /** The workflow's code; its return value (JSON) is the execution's result. */
  run(ctx: WorkflowContext, input: I): Promise<unknown> | unknown;
  /** Runs after the compensations when the execution is cancelled. Default: nothing. */
  onCancel?: ((ctx: WorkflowContext, reason: string) => Promise<void> | void) | undefined;
  /** Default {@link DEFAULT_RETRY}; a field left out (or undefined) takes its default. */
  readonly retry?: { [K in keyof RetryPolicy]?: RetryPolicy[K] | undefined } | undefined;
}

/** What a definition may hold: any other key is refused (a misspelt `onCancell` never ran). */
const DEFINITION_KEYS = keysOf<WorkflowDefinition>({
  name: true,
  version: true,
  input: true,
  description: true,
  run: true,
  onCancel: true,
  retry: true,
});
const RETRY_KEYS = keysOf<RetryPolicy>({ maxAttempts: true, backoffMs: true });

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export function defineWorkflow<I extends ReadonlyJsonObject = JsonObject>(
  definition: WorkflowDefinition<I>,
): WorkflowDefinition<I> {
  // From plain JavaScript: said as what it is, not as "Cannot read properties of null".
  if (typeof definition !== "object" || definition === null) {
    throw new TypeError("defineWorkflow takes the definition, {name, version, run, …}");
  }
  if (!NAME.test(definition.name)) {
    throw new TypeError(
      `workflow name ${JSON.stringify(definition.name)} must be 1-128 of [A-Za-z0-9_.-], starting with a letter or digit`,
    );
  }
  if (!isWorkflowVersion(definition.version)) {
    // Build metadata is semver, but the server refuses it (docs/workflows.md § Versions): said so
    // here, where it was called "not semver".
    const base = versionWithoutBuild(definition.version);
    const why =
      base !== null
        ? `has build metadata (${definition.version.slice(base.length)}), which Orbit does not accept: register ${base}, or a higher version`
        : "is not semver (e.g. 1.0.0)";
    throw new TypeError(`workflow ${definition.name}: version ${JSON.stringify(definition.version)} ${why}`);
  }
  // From plain JavaScript the handler may be passed beside the definition instead of as its `run`:
  // say so here, not as "def.run is not a function" on every task the worker leases.
  if (typeof definition.run !== "function") {
    throw new TypeError(`workflow ${definition.name}: run must be the workflow's function, (ctx, input) => result`);
  }
  refuseUnknownKeys(definition, DEFINITION_KEYS, `workflow ${definition.name}`);
  const refused = definition.input === undefined ? null : inputSchemaRootRefusal(definition.input);
  if (refused !== null) throw new TypeError(`workflow ${definition.name}: input schema: ${refused}`);
  // The bounds of the worker protocol's offer (src/api/worker-schemas.ts): a policy past them would
  // have every poll refused, and the worker would run nothing.
  // A field left out takes its default, as the table in docs/workflows.md reads: `{maxAttempts: 1}`
  // threw for its missing backoffMs (a tester).
  // But a mistake is said, not taken for a default: `{maxAttemps: 1}` (a typo) or `retry: 5` ran three
  // attempts of a workflow meant to run once (a re-tester).
  const given: unknown = definition.retry ?? {};
  // A plain object: a Map, a Date or an object inheriting its settings was taken for the defaults.
  const plain = (() => {
    try {
      const proto = typeof given === "object" && given !== null ? Object.getPrototypeOf(given) : undefined;
      return proto === Object.prototype || proto === null;
    } catch {
      return false; // a revoked Proxy
    }
  })();
  if (!plain) {
    throw new TypeError(`workflow ${definition.name}: retry must be a plain object, {maxAttempts?, backoffMs?}`);
  }
  refuseUnknownKeys(given as object, RETRY_KEYS, `workflow ${definition.name}: retry`);
  const set = given as Partial<RetryPolicy>;
  const retry = {
    maxAttempts: set.maxAttempts === undefined ? DEFAULT_RETRY.maxAttempts : set.maxAttempts,
    backoffMs: set.backoffMs === undefined ? DEFAULT_RETRY.backoffMs : set.backoffMs,
  };
  const whole = (n: unknown, max: number, min: number): boolean =>
    Number.isInteger(n) && (n as number) >= min && (n as number) <= max;
  if (!whole(retry.maxAttempts, MAX_ATTEMPTS, 1) || !whole(retry.backoffMs, MAX_BACKOFF_MS, 0)) {
    throw new TypeError(
      `workflow ${definition.name}: retry needs maxAttempts from 1 to ${MAX_ATTEMPTS} and backoffMs a whole number of milliseconds from 0 to ${MAX_BACKOFF_MS} (a day)`,
    );
  }
  return Object.freeze({ ...definition, retry: Object.freeze({ ...retry }) });
}
