/** Request bodies of the worker protocol (docs/api.md § Worker protocol), unknown keys refused. */
import { Type } from "@sinclair/typebox";

const strict = { additionalProperties: false } as const;
const workerId = Type.String({ minLength: 1, maxLength: 200, description: "the worker's id (lease owner)" });
const name = Type.String({ minLength: 1, maxLength: 200 });

export const TaskIdParams = Type.Object({ task_id: Type.String({ minLength: 1 }) });

/** A workflow version a poll (or a batched complete that polls) offers, with its retry policy. */
const workflowOffer = Type.Object(
  {
    name,
    version: name,
    max_attempts: Type.Integer({ minimum: 1, maximum: 1000 }),
    backoff_ms: Type.Integer({ minimum: 0, maximum: 86_400_000 }),
  },
  strict,
);
const workflowOffers = (description: string) => Type.Array(workflowOffer, { minItems: 1, maxItems: 500, description });
const maxTasks = (description: string) => Type.Integer({ minimum: 1, maximum: 100, description });

export const PollBody = Type.Object(
  {
    worker_id: workerId,
    workflows: workflowOffers("the workflow versions to lease tasks of"),
    max_tasks: Type.Optional(maxTasks("most tasks to lease (the worker's free slots); default 1")),
    wait_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 600_000 })),
  },
  strict,
);

const taskIds = Type.Array(Type.String({ minLength: 1 }), { maxItems: 1000 });
export const HeartbeatBody = Type.Object({ worker_id: workerId, task_ids: taskIds }, strict);
export const ReleaseBody = HeartbeatBody;

export const StepBody = Type.Object(
  {
    worker_id: workerId,
    step: Type.String({ minLength: 1, maxLength: 500 }),
    seq: Type.Integer({ minimum: 1 }),
    result: Type.Unknown(),
    compensable: Type.Boolean(),
  },
  strict,
);

const errorJson = Type.Object({ message: Type.String() }, { additionalProperties: true });

export const CompleteBody = Type.Object({ worker_id: workerId, result: Type.Unknown() }, strict);
/** Most tasks one batched complete carries. */
export const MAX_COMPLETES_PER_BATCH = 1000;
export const CompleteManyBody = Type.Object(
  {
    worker_id: workerId,
    tasks: Type.Array(Type.Object({ task_id: Type.String({ minLength: 1 }), result: Type.Unknown() }, strict), {
      minItems: 1,
      maxItems: MAX_COMPLETES_PER_BATCH,
    }),
    // Complete and poll (docs/workflows.md § Complete and poll): lease up to max_tasks more tasks
    // of these workflows in the completes' transaction, answered in `leased`.
    workflows: Type.Optional(
      workflowOffers(
        "complete and poll: also lease tasks of these workflow versions, in the completes' transaction (answered in `leased`)",
      ),
    ),
    max_tasks: Type.Optional(
      maxTasks(
        "with workflows: most tasks to lease (the slots the batch frees plus the free ones), one fewer per task answered CANCEL_REQUESTED; default the batch's size, at most 100",
      ),
    ),
  },
  strict,
);
export const FailBody = Type.Object({ worker_id: workerId, error: errorJson, retryable: Type.Boolean() }, strict);
export const ContinueBody = Type.Object({ worker_id: workerId, input: Type.Unknown() }, strict);
export const WorkerOnlyBody = Type.Object({ worker_id: workerId }, strict);
export const CompensationBody = Type.Object(
  { worker_id: workerId, step: Type.String({ minLength: 1 }), error: Type.Optional(errorJson) },
  strict,
);
export const CancelledBody = Type.Object({ worker_id: workerId, error: Type.Optional(errorJson) }, strict);
