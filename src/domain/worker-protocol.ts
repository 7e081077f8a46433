/**
 * The worker protocol's JSON (docs/workflows.md § Protocol), shared by the server's routes
 * (src/api/worker-routes.ts) and the worker SDK (src/worker/). Field names are snake_case like the
 * rest of the API; instants are epoch milliseconds only where a worker computes with them.
 */
import type { JsonObject, JsonValue } from "./json.js";

/** A workflow version a worker offers to run, with the retry policy it wants for it. */
export interface WorkflowOfferJson {
  name: string;
  version: string;
  /** Attempts in all, the first included (1: no retry). */
  max_attempts: number;
  /** Delay before the second attempt; doubles for each further one. */
  backoff_ms: number;
}

export interface PollRequestJson {
  worker_id: string;
  workflows: WorkflowOfferJson[];
  /** Most tasks to lease in this answer (the worker's free slots). Default 1. */
  max_tasks?: number;
  /** How long the server may hold the request when nothing is available. Default and most: the server's poll timeout. */
  wait_ms?: number;
  /**
   * Sent after a poll of this worker got no answer: the tasks it runs. Tasks leased to it that it
   * does not name were handed to the lost answer; they are answered again, their leases renewed.
   */
  held?: string[];
  /**
   * The worker process polling: a random id the SDK's Worker makes once. Leases record it, and the
   * redelivery that `held` asks for answers only this process's tasks, so two processes sharing a
   * `worker_id` are not handed each other's. Absent (an older SDK): every task leased to the worker id.
   */
  instance?: string;
}

/** A journaled step of the task's run. */
export interface StepJson {
  name: string;
  seq: number;
  result: JsonValue | null;
  compensable: boolean;
  compensated: boolean;
}

/** A leased task: one run of one execution, and everything the worker needs to (re)run it. */
export interface TaskJson {
  task_id: string;
  execution_id: string;
  workflow: string;
  version: string;
  run: number;
  attempt: number;
  input: JsonObject;
  /** docs/design.md § What the execution receives, when a schedule started the execution. */
  trigger: JsonObject | null;
  schedule_id: string | null;
  status: "RUNNING" | "COMPENSATING";
  /** The cancel reason, once a cancel was requested. */
  cancel_requested: string | null;
  /** Steps of this run completed by earlier attempts: not to be run again. */
  steps: StepJson[];
  /** The lease lasts this long after each heartbeat. */
  lease_ms: number;
  /** Heartbeat at least this often. */
  heartbeat_ms: number;
  /** The execution's W3C traceparent (docs/operations.md § Tracing): the worker's spans are its children. */
  traceparent?: string;
}

export interface PollResponseJson {
  tasks: TaskJson[];
  /** A cancel was requested for a run some worker holds: heartbeat now (docs/workflows.md § Cancellation). */
  heartbeat?: true;
  /** Offered versions the database does not hold (it was replaced or restored): register them again. */
  unregistered?: { name: string; version: string }[];
}

export interface HeartbeatRequestJson {
  worker_id: string;
  task_ids: string[];
}

/** Per task: whether the worker still holds the lease, and a cancel request to act on. */
export interface TaskStatusJson {
  lease: "held" | "lost";
  cancel_requested: string | null;
}

export interface HeartbeatResponseJson {
  tasks: Record<string, TaskStatusJson>;
}

export interface StepRequestJson {
  worker_id: string;
  step: string;
  seq: number;
  result: JsonValue | null;
  compensable: boolean;
}

export interface FailRequestJson {
  worker_id: string;
  error: JsonObject;
  /** False: fail the execution now, whatever the retry policy. */
  retryable: boolean;
}

/** What a worker reports as an error: `{message, type?, step?}`. */
export interface ErrorJson extends JsonObject {
  message: string;
}

/** `POST /v1/worker/complete`: per task, COMPLETED or the error that refused it (CONFLICT: lease gone). */
export interface CompleteManyResponseJson {
  tasks: Record<
    string,
    | { status: "COMPLETED" }
    /** A cancel was requested before the completion: compensate, run onCancel, report `cancelled`. */
    | { status: "CANCEL_REQUESTED"; cancel_requested: string }
    | { code: string; message: string }
  >;
}

/**
 * How the cancel reason of a timeout's cancel begins (`timeout: run_timeout exceeded: …`,
 * docs/outcomes.md § Timeouts): a worker that heard of it before its run returned compensates
 * instead of reporting the completion.
 */
export const TIMEOUT_CANCEL_PREFIX = "timeout: ";
/** The most attempts, and the longest back-off, a worker's offer may carry (its retry policy). */
export const MAX_ATTEMPTS = 1000;
export const MAX_BACKOFF_MS = 86_400_000;
/** The most task ids one heartbeat or release names (the worker sends more in several). */
export const MAX_TASK_IDS = 1000;
/** The longest step name, in characters (code points). */
export const MAX_STEP_NAME = 500;
/** The most tasks one batched complete carries. */
export const MAX_COMPLETES_PER_BATCH = 1000;

/** A worker's completion of one task: its body is parsed even with a result Orbit cannot store (api/app.ts). */
export const COMPLETE_ROUTE = "/v1/worker/tasks/:task_id/complete";
/** A worker's batched completion: as {@link COMPLETE_ROUTE}, each task's result checked on its own. */
export const COMPLETE_MANY_ROUTE = "/v1/worker/complete";
/**
 * The routes whose body is parsed even with a NUL or a lone surrogate in it: a report that ends an
 * attempt is judged on its own (a result refused fails its execution, an error is kept in a
 * storable form: domain/worker-error.ts) rather than refused whole, which left it RUNNING.
 */
export const LENIENT_ROUTES: ReadonlySet<string> = new Set([
  COMPLETE_ROUTE,
  COMPLETE_MANY_ROUTE,
  "/v1/worker/tasks/:task_id/fail",
  "/v1/worker/tasks/:task_id/cancelled",
  "/v1/worker/tasks/:task_id/compensations",
]);
