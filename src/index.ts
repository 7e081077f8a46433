/**
 * The `orbit-scheduler` package: the worker SDK (docs/workflows.md, docs/design.md § Parts).
 * `import { defineWorkflow, Worker } from "orbit-scheduler"`. The typed HTTP client is exported too,
 * for code that starts, reads or cancels executions, with the error class its refusals throw.
 * The server is the `orbit-scheduler/server` entry point (src/server/server.ts), kept apart so a
 * worker does not load fastify, the stores or the SQLite driver.
 */
export { type Created, OrbitClient, type OrbitClientOptions } from "./client/client.js";
// What a request that got no answer throws (not an OrbitError: the server said nothing).
export { ServerUnreachableError } from "./client/http.js";
// The request bodies and answers the client takes and gives (ScheduleCreateBody, ScheduleJson, …).
export type * from "./client/types.js";
export { type ErrorCode, OrbitError } from "./domain/errors.js";
export type { Jsonified, JsonObject, JsonValue, ReadonlyJsonObject, ReadonlyJsonValue } from "./domain/json.js";
export { CancelledError, LeaseLostError, NonRetryableError, RunEndedError } from "./worker/errors.js";
export { type ShutdownSignal, Worker, type WorkerOptions } from "./worker/worker.js";
export {
  DEFAULT_RETRY,
  defineWorkflow,
  type RetryPolicy,
  type StepOptions,
  type TriggerInfo,
  type WorkflowContext,
  type WorkflowDefinition,
  type WorkflowLogger,
} from "./worker/workflow.js";
