/**
 * The answer of `GET /v1/executions` (docs/api.md § Executions) for /v1/openapi.json: executions
 * in the full view (the default), or in `view=summary` without input and result
 * (src/engine/serialize.ts executionSummaryToJson). Documents and is not enforced, as schemas.ts.
 */
import { Type } from "@sinclair/typebox";
import { Execution, nextCursor } from "./schemas.js";

/** The execution's own fields but its input and result, and its error cut (executionSummaryToJson). */
export const ExecutionSummary = Type.Composite(
  [
    Type.Omit(Execution, ["input", "result", "error", "waiting"]),
    Type.Object({
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
    }),
  ],
  { additionalProperties: true, description: "an execution without its input and result (view=summary)" },
);

export const ExecutionList = Type.Object({
  executions: Type.Array(Type.Union([Execution, ExecutionSummary]), {
    description: "view=full (default): the executions; view=summary: each without input and result",
  }),
  next_cursor: nextCursor,
});
