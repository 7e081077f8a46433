/** Request bodies of the worker protocol (docs/api.md § Worker protocol), unknown keys refused. */

import { Type } from "@sinclair/typebox";
import {
  MAX_ATTEMPTS,
  MAX_BACKOFF_MS,
  MAX_COMPLETES_PER_BATCH,
  MAX_STEP_NAME,
  MAX_TASK_IDS,
} from "../domain/worker-protocol.js";

const strict = { additionalProperties: false } as const;
const workerId = Type.String({ minLength: 1, maxLength: 200, description: "the worker's id (lease owner)" });
/** The attempt a report is about: refused (409) once its lease ended, even when the same worker leased the next. */
const attempt = Type.Optional(
  Type.Integer({ minimum: 1, description: "the attempt the report is about (the task's `attempt` when leased)" }),
);
/** A workflow's name as registration takes it (1-128 characters; its characters: checkOfferedWorkflows). */
const name = Type.String({ minLength: 1, maxLength: 128 });
const version = Type.String({ minLength: 1, maxLength: 200 });

export const TaskIdParams = Type.Object({ task_id: Type.String({ minLength: 1 }) });

export const PollBody = Type.Object(
  {
    worker_id: workerId,
    workflows: Type.Array(
      Type.Object(
        {
          name,
          version,
          max_attempts: Type.Integer({ minimum: 1, maximum: MAX_ATTEMPTS }),
          backoff_ms: Type.Integer({ minimum: 0, maximum: MAX_BACKOFF_MS }),
        },
        strict,
      ),
      { minItems: 1, maxItems: 500 },
    ),
    max_tasks: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 100,
        description: "at most this many tasks (default 1); 0: take none, only wait for a cancel's heartbeat: true",
      }),
    ),
    wait_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000 })),
    held: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        maxItems: MAX_TASK_IDS,
        description:
          "after a poll that got no answer: the tasks this worker runs; tasks leased to it that it does not name (handed to the lost answer) are answered again",
      }),
    ),
    instance: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        pattern: "^[A-Za-z0-9_.:-]+$",
        description:
          "the polling process (a random id the SDK makes per Worker): its leases record it, and `held` answers again only this process's tasks, not those of another process sharing the worker_id",
      }),
    ),
  },
  strict,
);

const taskIds = Type.Array(Type.String({ minLength: 1 }), { maxItems: MAX_TASK_IDS });
export const HeartbeatBody = Type.Object({ worker_id: workerId, task_ids: taskIds }, strict);
export const ReleaseBody = HeartbeatBody;
export const LeaveBody = Type.Object({ worker_id: workerId }, strict);

export const StepBody = Type.Object(
  {
    worker_id: workerId,
    attempt,
    step: Type.String({ minLength: 1, maxLength: MAX_STEP_NAME }),
    // Stored as an integer: a bound keeps 1e400 (Infinity) and 2^53+1 from being stored as neither.
    seq: Type.Integer({ minimum: 1, maximum: 1_000_000_000 }),
    result: Type.Unknown(),
    compensable: Type.Boolean(),
  },
  strict,
);

const errorJson = Type.Object({ message: Type.String() }, { additionalProperties: true });

export const CompleteBody = Type.Object({ worker_id: workerId, attempt, result: Type.Unknown() }, strict);
export const CompleteManyBody = Type.Object(
  {
    worker_id: workerId,
    tasks: Type.Array(
      Type.Object({ task_id: Type.String({ minLength: 1 }), attempt, result: Type.Unknown() }, strict),
      {
        minItems: 1,
        maxItems: MAX_COMPLETES_PER_BATCH,
      },
    ),
  },
  strict,
);
export const FailBody = Type.Object(
  { worker_id: workerId, attempt, error: errorJson, retryable: Type.Boolean() },
  strict,
);
export const ContinueBody = Type.Object({ worker_id: workerId, attempt, input: Type.Unknown() }, strict);
export const WorkerOnlyBody = Type.Object({ worker_id: workerId, attempt }, strict);
export const CompensationBody = Type.Object(
  { worker_id: workerId, attempt, step: Type.String({ minLength: 1 }), error: Type.Optional(errorJson) },
  strict,
);
export const CancelledBody = Type.Object({ worker_id: workerId, attempt, error: Type.Optional(errorJson) }, strict);

/* The answers (docs/workflows.md § Protocol), as domain/worker-protocol.ts types them. */

const nullableText = (description: string) => Type.Union([Type.String(), Type.Null()], { description });
const cancelRequested = nullableText("the cancel reason, once a cancel was requested");

export const TaskAnswer = Type.Object(
  {
    task_id: Type.String(),
    execution_id: Type.String(),
    workflow: Type.String(),
    version: Type.String(),
    run: Type.Integer({ minimum: 1 }),
    attempt: Type.Integer({ minimum: 1 }),
    input: Type.Object({}, { additionalProperties: true }),
    trigger: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
    schedule_id: nullableText("the schedule that started the execution"),
    status: Type.Union([Type.Literal("RUNNING"), Type.Literal("COMPENSATING")]),
    cancel_requested: cancelRequested,
    steps: Type.Array(
      Type.Object({
        name: Type.String(),
        seq: Type.Integer(),
        result: Type.Unknown(),
        compensable: Type.Boolean(),
        compensated: Type.Boolean(),
      }),
      { description: "steps of this run completed by earlier attempts: not to be run again" },
    ),
    lease_ms: Type.Integer({ description: "the lease lasts this long after each heartbeat" }),
    heartbeat_ms: Type.Integer({ description: "heartbeat at least this often" }),
    traceparent: Type.Optional(Type.String({ description: "the execution's W3C traceparent" })),
  },
  { description: "a leased task: one run of one execution" },
);
export const PollAnswer = Type.Object({
  tasks: Type.Array(TaskAnswer),
  heartbeat: Type.Optional(
    Type.Literal(true, {
      description:
        "a cancel was requested for a run some worker holds: heartbeat now to hear whether it is one of yours",
    }),
  ),
  unregistered: Type.Optional(
    Type.Array(Type.Object({ name: Type.String(), version: Type.String() }), {
      description:
        "offered versions the database does not hold (replaced or restored under the running worker): register them again",
    }),
  ),
});
export const HeartbeatAnswer = Type.Object({
  tasks: Type.Record(
    Type.String(),
    Type.Object({ lease: Type.Union([Type.Literal("held"), Type.Literal("lost")]), cancel_requested: cancelRequested }),
    { description: "per task id named: whether the worker still holds its lease" },
  ),
});
export const ReleaseAnswer = Type.Object({
  released: Type.Array(Type.String(), { description: "the task ids released" }),
});
export const StepAnswer = Type.Object({ cancel_requested: cancelRequested });
export const CompleteManyAnswer = Type.Object({
  tasks: Type.Record(
    Type.String(),
    Type.Union([
      Type.Object({ status: Type.Literal("COMPLETED") }),
      Type.Object({ status: Type.Literal("CANCEL_REQUESTED"), cancel_requested: Type.String() }),
      Type.Object({ code: Type.String(), message: Type.String() }),
    ]),
    { description: "per task id: completed, a cancel to act on, or the error that refused it" },
  ),
});
