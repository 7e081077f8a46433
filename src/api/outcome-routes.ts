/**
 * Routes of docs/outcomes.md: workers (`GET /v1/workers`), retry, workflow settings and
 * deprecation, and a schedule's webhook deliveries.
 */
import { Type } from "@sinclair/typebox";
import { rowIdPage } from "../engine/cursor.js";
import { executionToJson, workflowToJson } from "../engine/serialize.js";
import { formatInstant, formatInstantOrNull } from "../time/format.js";
import { type ApiDeps, visibleTo } from "./deps.js";
import type { RouteDef } from "./route.js";
import * as S from "./schemas.js";
import { storedGuards } from "./stored-access.js";
import { refuseImpossibleName } from "./workflows-routes.js";

export const WorkerList = Type.Object({
  workers: Type.Array(
    Type.Object({
      worker_id: Type.String(),
      status: Type.Union([Type.Literal("live"), Type.Literal("gone")], {
        description: "live: polled or heartbeat within the last 60 s",
      }),
      workflows: Type.Array(Type.Object({ name: Type.String(), version: Type.String() })),
      first_seen_at: S.instant,
      last_seen_at: S.instant,
      running_tasks: Type.Integer({ description: "tasks it holds the lease of" }),
      free_slots: Type.Union([Type.Integer(), Type.Null()], {
        description:
          "its free slots at its last poll on this server (last 25 s); null when it has not polled here lately or runs a workflow the caller may not see",
      }),
      stuck: Type.Boolean({
        description:
          "no free slot yet no task held: code of runs it no longer holds has not returned and keeps its slots (a restart frees them)",
      }),
    }),
  ),
});

/** A schedule's webhook deliveries, a page at a time (docs/outcomes.md § Notifications). */
const NotificationsQuery = Type.Object(
  { cursor: S.cursor, limit: S.limit(1000, 100) },
  { additionalProperties: false },
);
const NotificationList = Type.Object({
  notifications: Type.Array(
    Type.Object(
      {
        id: Type.Integer(),
        event: Type.String({ description: "failure, timeout, dead_letter, paused or recovery" }),
        url: Type.String(),
        state: Type.Union(["pending", "delivered", "failed"].map((k) => Type.Literal(k))),
        attempts: Type.Integer(),
        last_error: S.nullable("string", "the last attempt's error"),
        created_at: S.instant,
        delivered_at: S.nullable("string", "RFC 3339"),
        next_attempt_at: S.nullable("string", "RFC 3339: when a pending delivery is tried again"),
        payload: Type.Object({}, { additionalProperties: true, description: "the JSON body sent" }),
      },
      { description: "a webhook delivery (docs/outcomes.md § Notifications)" },
    ),
  ),
  next_cursor: S.nextCursor,
});
const settingFields = {
  run_timeout: Type.Optional(S.text("duration 1s-365d: default run_timeout of its executions")),
  start_timeout: Type.Optional(S.text("duration 1s-365d: default start_timeout of its executions")),
  notify: Type.Optional(
    Type.Unsafe({ type: ["string", "object", "array", "null"], description: "webhooks, as a schedule's notify" }),
  ),
};
export const WorkflowSettingsBody = Type.Object(settingFields, { additionalProperties: false });
export const WorkflowSettings = Type.Object({ name: Type.String(), ...settingFields });

const WorkflowVersionParams = Type.Object({
  name: Type.String({ description: "workflow name" }),
  version: Type.String({ description: "semver version" }),
});

export function outcomeRoutes(d: ApiDeps): RouteDef[] {
  const access = d.access;
  const guarded = storedGuards(d);
  return [
    {
      method: "GET",
      url: "/v1/workers",
      summary: "Workers seen in the last hour: their workflows, last poll, running tasks",
      tag: "worker",
      responses: { 200: { description: "the workers, by id", schema: WorkerList } },
      // Only the workers of workflows the caller may read (a worker identity: its workflows), and
      // of each only those workflows and their tasks (docs/security.md).
      handler: async (r) => ({
        status: 200,
        body: {
          workers: await d.executions.workers.list(visibleTo(access, r, "read")),
        },
      }),
    },
    {
      method: "GET",
      url: "/v1/workflows/:name/settings",
      summary: "A workflow's settings across its versions: default timeouts, notify webhooks",
      tag: "workflows",
      params: S.WorkflowNameParams,
      responses: { 200: { description: "the settings", schema: WorkflowSettings } },
      guard: (r) => access?.require(r, "read", String(r.params.name)),
      handler: async (r) => {
        const name = String(r.params.name);
        refuseImpossibleName(name);
        await d.workflows.get(name);
        return { status: 200, body: { name, ...(await d.workflows.settings(name)) } };
      },
    },
    {
      method: "PATCH",
      url: "/v1/workflows/:name/settings",
      summary: "Change a workflow's settings (null unsets one)",
      tag: "workflows",
      params: S.WorkflowNameParams,
      body: WorkflowSettingsBody,
      responses: { 200: { description: "the settings", schema: WorkflowSettings } },
      guard: (r) => access?.require(r, "start", String(r.params.name)),
      handler: async (r) => {
        const name = String(r.params.name);
        refuseImpossibleName(name);
        const settings = await d.workflows.updateSettings(name, (r.body ?? {}) as Record<string, unknown>);
        return { status: 200, body: { name, ...settings } };
      },
    },
    ...(["deprecate", "undeprecate"] as const).map(
      (action): RouteDef => ({
        method: "POST",
        url: `/v1/workflows/:name/versions/:version/${action}`,
        summary:
          action === "deprecate"
            ? 'Deprecate a workflow version: "latest" skips it (a pinned version still starts)'
            : 'Undeprecate a workflow version: "latest" may start it again',
        tag: "workflows",
        params: WorkflowVersionParams,
        responses: { 200: { description: "the workflow version", schema: S.Workflow } },
        guard: (r) => access?.require(r, "start", String(r.params.name)),
        handler: async (r) => {
          const w = await d.workflows.deprecate(
            String(r.params.name),
            String(r.params.version),
            action === "deprecate",
          );
          return { status: 200, body: workflowToJson(w) };
        },
      }),
    ),
    {
      method: "GET",
      url: "/v1/schedules/:id/notifications",
      summary: "A schedule's webhook deliveries, newest first, a page at a time (100 by default)",
      tag: "schedules",
      params: S.ScheduleIdParams,
      query: NotificationsQuery,
      responses: { 200: { description: "the deliveries", schema: NotificationList } },
      // As every /v1/schedules route: a client that may `schedule` the workflow (the deliveries
      // show the webhook URLs, which GET of the schedule shows only to it); never a worker.
      guard: guarded.schedule,
      handler: async (r) => {
        const id = String(r.params.id);
        await d.scheduler.schedules.row(id);
        const { limit, beforeId } = rowIdPage(r.query as { cursor?: string; limit?: number });
        const found = await d.scheduler.schedules.o.store.listNotifications(id, {
          limit: limit + 1,
          ...(beforeId !== undefined ? { beforeId } : {}),
        });
        const rows = found.slice(0, limit);
        return {
          status: 200,
          body: {
            notifications: rows.map((n) => ({
              id: n.id,
              event: n.event,
              url: n.url,
              state: n.state,
              attempts: n.attempts,
              last_error: n.lastError,
              created_at: formatInstant(n.createdMs),
              delivered_at: formatInstantOrNull(n.deliveredMs),
              next_attempt_at: formatInstantOrNull(n.nextAttemptMs),
              payload: n.payload,
            })),
            next_cursor: found.length > limit ? String(rows[rows.length - 1]?.id) : null,
          },
        };
      },
    },
    {
      method: "POST",
      url: "/v1/executions/:id/retry",
      summary: "Re-run a FAILED or CANCELLED execution as its next run (same id, history kept)",
      tag: "executions",
      params: S.ExecutionIdParams,
      responses: { 200: { description: "the execution, RUNNING with run + 1", schema: S.Execution } },
      guard: guarded.execution("start"),
      handler: async (r) => ({ status: 200, body: executionToJson(await d.executions.retry(String(r.params.id))) }),
    },
  ];
}
