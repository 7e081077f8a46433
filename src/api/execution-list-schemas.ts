/**
 * The answer of `GET /v1/executions` (docs/api.md § Executions) for /v1/openapi.json: executions
 * in the full view (the default), or in `view=summary` without input and result
 * (src/engine/serialize.ts executionSummaryToJson). Documents and is not enforced, as schemas.ts.
 */
import { Type } from "@sinclair/typebox";
import { EXECUTION_STATUSES } from "../domain/execution.js";
import { Execution, instant, nextCursor, nullable } from "./schemas.js";

export const ExecutionSummary = Type.Object(
  {
    execution_id: Type.String(),
    workflow: Type.String(),
    version: Type.String(),
    status: Type.Union(EXECUTION_STATUSES.map((s) => Type.Literal(s))),
    schedule_id: nullable("string", "the schedule that started it"),
    trigger: nullable("object", "what started it (docs/design.md § What the execution receives)"),
    error: Type.Union(
      [
        Type.Null(),
        Type.Object({
          type: Type.Optional(Type.String()),
          message: Type.String(),
          step: Type.Optional(Type.String()),
          truncated: Type.Optional(
            Type.Literal(true, { description: "cut here or when stored: the execution has all that was kept" }),
          ),
        }),
      ],
      {
        description:
          "the error's type, message and step, each cut to 1,000 characters (`… (N more characters)`); its stack and other fields are in the execution",
      },
    ),
    created_at: instant,
    started_at: nullable("string", "RFC 3339"),
    ended_at: nullable("string", "RFC 3339"),
    run: Type.Integer({ description: "1 for the first run; +1 per continue-as-new or retry" }),
    attempt: Type.Integer({ description: "worker attempt of the current run" }),
    cancel_reason: Type.Optional(Type.String({ description: "why it was cancelled (or is being cancelled)" })),
  },
  { additionalProperties: true, description: "an execution without its input and result (view=summary)" },
);

export const ExecutionList = Type.Object({
  executions: Type.Array(Type.Union([Execution, ExecutionSummary]), {
    description: "view=full (default): the executions; view=summary: each without input and result",
  }),
  next_cursor: nextCursor,
});
