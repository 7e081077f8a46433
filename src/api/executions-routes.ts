/** /v1/executions: start, list, read and cancel executions (docs/api.md § Executions). */

import { OrbitError } from "../domain/errors.js";
import type { JsonObject } from "../domain/json.js";
import type { ListExecutionsQuery } from "../engine/execution-query.js";
import type { StartRequest } from "../engine/executions.js";
import { timeoutMs } from "../engine/outcome-settings.js";
import { eventToJson, executionSummaryToJson, executionToJson } from "../engine/serialize.js";
import { type ApiDeps, visibleTo } from "./deps.js";
import { ExecutionList } from "./execution-list-schemas.js";
import type { RouteDef } from "./route.js";
import * as S from "./schemas.js";
import { storedGuards } from "./stored-access.js";

const execution = { description: "the execution", schema: S.Execution };

/** The body of `POST /v1/executions` (src/api/schemas.ts StartExecutionBody), as validated. */
interface StartExecutionBody {
  execution_id?: string;
  workflow: string;
  version?: string | null;
  input?: JsonObject;
  run_timeout?: string | null;
  start_timeout?: string | null;
}

/** The engine's start request of a `POST /v1/executions` body; the timeouts are checked here (docs/outcomes.md). */
function toStartRequest(body: StartExecutionBody): StartRequest {
  const request: StartRequest = { workflow: body.workflow };
  if (body.execution_id !== undefined) request.executionId = body.execution_id;
  if (body.version !== undefined) request.version = body.version;
  if (body.input !== undefined) request.input = body.input;
  const runTimeout = duration(body, "run_timeout");
  const startTimeout = duration(body, "start_timeout");
  if (runTimeout !== undefined || startTimeout !== undefined) request.timeouts = { runTimeout, startTimeout };
  return request;
}

/** A timeout of the body, checked (1s-365d); undefined when not given. */
function duration(body: StartExecutionBody, key: "run_timeout" | "start_timeout"): string | undefined {
  const value = body[key];
  return timeoutMs(value, key) === undefined ? undefined : (value as string);
}

export function executionRoutes(d: ApiDeps): RouteDef[] {
  const access = d.access;
  /** `action` on the execution's workflow (404 for a caller that may not read it: stored-access.ts). */
  const guardStored = storedGuards(d).execution;
  return [
    {
      method: "POST",
      url: "/v1/executions",
      creates: true,
      summary: "Start an execution (an existing execution_id returns it, 200)",
      tag: "executions",
      body: S.StartExecutionBody,
      responses: {
        201: { description: "started", schema: S.Execution },
        200: { description: "the id existed", schema: S.Execution },
      },
      guard: (r) => {
        refuseReservedId((r.body as { execution_id?: unknown }).execution_id);
        access?.require(r, "start", String((r.body as { workflow?: unknown }).workflow));
      },
      handler: async (r) => {
        const reserved = reservedOccurrenceId((r.body as { execution_id?: unknown }).execution_id);
        if (reserved !== null) {
          // Starting an id that exists is a no-op returning it (docs/api.md), an occurrence's too;
          // only a new one of that form is refused, since it could pre-empt the occurrence.
          const existing = await d.executions.get(reserved.id).catch(() => null);
          if (existing === null || (access !== null && !access.allows(r, "read", existing.workflow)))
            throw reserved.refusal;
          return { status: 200, body: executionToJson(existing) };
        }
        const { execution: e, created } = await d.executions.start(toStartRequest(r.body as StartExecutionBody));
        // An existing id answers only what the caller may read (docs/security.md): otherwise a
        // start would be a way round GET's 404.
        if (!created && access !== null && !access.allows(r, "read", e.workflow)) {
          throw new OrbitError("ALREADY_EXISTS", `execution ${e.executionId} already exists`);
        }
        return { status: created ? 201 : 200, body: executionToJson(e) };
      },
    },
    {
      method: "GET",
      url: "/v1/executions",
      summary: "List executions, newest first (view=summary: without input and result)",
      tag: "executions",
      query: S.ListExecutionsQuery,
      responses: { 200: { description: "a page of executions", schema: ExecutionList } },
      handler: async (r) => {
        const visible = visibleTo(access, r, "read");
        const query = r.query as ListExecutionsQuery;
        const page = await d.executions.list(query, undefined, visible);
        // view=summary: the store read no input or result (ExecutionFilter.summary).
        const executions =
          query.view === "summary" ? page.executions.map(executionSummaryToJson) : page.executions.map(executionToJson);
        return { status: 200, body: { executions, next_cursor: page.nextCursor } };
      },
    },
    {
      method: "GET",
      url: "/v1/executions/:id",
      summary: "Read an execution",
      tag: "executions",
      params: S.ExecutionIdParams,
      responses: { 200: execution },
      guard: guardStored("read"),
      handler: async (r) => {
        const e = await d.executions.get(String(r.params.id));
        const waiting = await d.executions.workers.waiting(e);
        return { status: 200, body: { ...executionToJson(e), ...(waiting !== null ? { waiting } : {}) } };
      },
    },
    {
      method: "GET",
      url: "/v1/executions/:id/events",
      summary: "An execution's history, oldest first",
      tag: "executions",
      params: S.ExecutionIdParams,
      responses: { 200: { description: "the events", schema: S.EventList } },
      guard: guardStored("read"),
      handler: async (r) => ({
        status: 200,
        body: { events: (await d.executions.events(String(r.params.id))).map(eventToJson) },
      }),
    },
    {
      method: "POST",
      url: "/v1/executions/:id/cancel",
      summary: "Cancel an execution (a finished one is returned unchanged)",
      tag: "executions",
      params: S.ExecutionIdParams,
      body: S.CancelBody,
      responses: { 200: execution },
      guard: guardStored("cancel"),
      handler: async (r) => {
        const reason = (r.body as { reason?: string | null } | undefined)?.reason;
        const e = await d.executions.cancel(String(r.params.id), reason === undefined ? {} : { reason });
        return { status: 200, body: executionToJson(e) };
      },
    },
  ];
}

/**
 * `<schedule>:<RFC 3339 instant>` and `<schedule>:manual:…` are the ids a schedule gives its
 * occurrences and triggers (docs/scheduling.md): a start through the API may not take one, or it
 * could pre-empt another schedule's occurrence with its own workflow (docs/security.md).
 */
const OCCURRENCE_ID = /:(manual:.*|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2}))$/i;

function refuseReservedId(id: unknown): void {
  // A URL resolves `.` and `..` as path segments (even percent-encoded), so /v1/executions/.. is
  // /v1/: such an execution could never be read or cancelled. Schedule ids refuse them too.
  if (id === "." || id === "..") {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `execution_id "${id}" is invalid: it must not be "." or ".." (a URL cannot name it)`,
    );
  }
}

/** An id of a schedule's occurrence form, with the refusal of a start that would create it; else null. */
function reservedOccurrenceId(id: unknown): { id: string; refusal: OrbitError } | null {
  if (typeof id !== "string" || !OCCURRENCE_ID.test(id)) return null;
  return {
    id,
    refusal: new OrbitError(
      "INVALID_ARGUMENT",
      `execution_id ${JSON.stringify(id)} has the form of a schedule's occurrence (<schedule>:<time> or <schedule>:manual:…); those ids are reserved for schedules, choose another`,
    ),
  };
}
