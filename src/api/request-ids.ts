/**
 * The ids a request is about, from its route's parameters — `schedule_id`, `execution_id` or
 * `task_id` — so every log line about a schedule or an execution carries its id
 * (docs/operations.md § Monitor).
 */
import type { FastifyRequest } from "fastify";

export function idsOfRequest(request: FastifyRequest): Record<string, string> {
  const params = (request.params ?? {}) as Record<string, unknown>;
  const url = request.routeOptions?.url ?? "";
  const out: Record<string, string> = {};
  if (typeof params.id === "string") {
    if (url.startsWith("/v1/schedules/")) out.schedule_id = params.id;
    else if (url.startsWith("/v1/executions/")) out.execution_id = params.id;
  }
  if (typeof params.task_id === "string") out.task_id = params.task_id;
  return out;
}
