/**
 * What `new Worker` takes, and the checks of it that do not need the worker: a misspelt key, a
 * logger without its functions, a close timeout or a concurrency that is not a number.
 */

import type { Clock } from "../domain/clock.js";
import { keysOf, refuseUnknownKeys } from "./option-keys.js";
import type { WorkflowDefinition, WorkflowLogger } from "./workflow.js";

export interface WorkerOptions {
  /** The Orbit server, e.g. `http://127.0.0.1:7233`. Required. */
  server: string;
  /** Bearer token of a worker identity, for a server with access control. Default none. */
  token?: string | null | undefined;
  /** The workflows this worker runs (from `defineWorkflow`). Required, at least one. */
  // biome-ignore lint/suspicious/noExplicitAny: definitions of any input type run here.
  workflows: readonly WorkflowDefinition<any>[];
  /**
   * Most executions run at once. Default 100: a minute's herd of schedules drains in polls of up to
   * 100 tasks (docs/benchmarks.md § End to end); set it lower for handlers that each hold a lot.
   * A run whose code has returned no longer counts while its result is sent; a compensation that a
   * cancel, answered to that report, starts runs beside the others (docs/workflows.md § Concurrency).
   */
  concurrency?: number | undefined;
  /** The lease owner's name. Default `<hostname>:<pid>:<random>`. */
  workerId?: string | undefined;
  /** Where the worker and `ctx.log` write. Default: console, one line per message. */
  logger?: WorkflowLogger | undefined;
  /** Default the system clock. */
  clock?: Clock | undefined;
  /** How long `close()` waits for running steps before handing their tasks back anyway. Default 30 000 ms. */
  closeTimeoutMs?: number | undefined;
  /**
   * Signals that close the worker while it runs (`close()`: running steps finish, their tasks are
   * handed back). Default `["SIGINT", "SIGTERM"]`; once closed, the process ends on that signal as
   * Node's default would, unless the program listens for it itself. `[]`: handle signals yourself.
   */
  shutdownSignals?: readonly ShutdownSignal[] | undefined;
}

/** A signal `shutdownSignals` may name (spelled here: the SDK's types do not need @types/node). */
export type ShutdownSignal = "SIGINT" | "SIGTERM" | "SIGQUIT" | "SIGHUP" | "SIGUSR1" | "SIGUSR2" | "SIGBREAK";

/** Every key of {@link WorkerOptions}: any other is refused (`closeTimeout: 5` kept the 30 s default). */
const WORKER_KEYS = keysOf<WorkerOptions>({
  server: true,
  token: true,
  workflows: true,
  concurrency: true,
  workerId: true,
  logger: true,
  clock: true,
  closeTimeoutMs: true,
  shutdownSignals: true,
});

/** Throws a TypeError saying what is wrong with `options`, if anything these checks see. */
export function checkWorkerOptions(options: WorkerOptions): void {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("new Worker takes its options, {server, workflows, …}");
  }
  refuseUnknownKeys(options, WORKER_KEYS, "new Worker");
  // From plain JavaScript: say what is wrong now, not `this.log.info is not a function` from run()
  // and again from close().
  const logger = options.logger as Partial<Record<keyof WorkflowLogger, unknown>> | undefined;
  if (logger !== undefined && !(["info", "warn", "error"] as const).every((l) => typeof logger?.[l] === "function")) {
    throw new TypeError("logger must have info, warn and error functions (message, fields?) => void");
  }
  const closeTimeoutMs = options.closeTimeoutMs;
  if (closeTimeoutMs !== undefined && !(Number.isFinite(closeTimeoutMs) && closeTimeoutMs >= 0)) {
    throw new TypeError("closeTimeoutMs must be a number of milliseconds, 0 or more");
  }
}
