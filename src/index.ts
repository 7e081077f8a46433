/**
 * The `orbit` package: the worker SDK (docs/design.md § Parts). `import { defineWorkflow, Worker } from "orbit"`.
 * The typed HTTP client is exported too, for code that starts, reads or cancels executions.
 */
export { OrbitClient, type OrbitClientOptions } from "./client/client.js";
export type { JsonObject, JsonValue } from "./domain/json.js";
export { CancelledError, LeaseLostError, NonRetryableError } from "./worker/errors.js";
export { Worker, type WorkerOptions } from "./worker/worker.js";
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
