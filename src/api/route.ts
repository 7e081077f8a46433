/**
 * The route table's shape and its registration on fastify. A route is declared once (method, URL,
 * TypeBox schemas, documented answers, handler); registration adds validation, the caller's
 * identity, Idempotency-Key handling and ETags, and the OpenAPI generator reads the same table.
 */

import type { TSchema } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { OrbitError } from "../domain/errors.js";
import { conditional } from "./conditional.js";
import { etagOf } from "./fences.js";
import { IdempotencyKeys } from "./idempotency.js";

export type Method = "GET" | "POST" | "PATCH" | "DELETE";

/** Who is calling: null when the server has no identities configured (open server). */
export interface Caller {
  name: string;
  kind: "client" | "worker";
}

export interface ApiRequest {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
  /** The body's JSON text, as received. */
  rawBody?: string | undefined;
  headers: FastifyRequest["headers"];
  caller: Caller | null;
}

export interface ApiAnswer {
  status: number;
  /** JSON-serialised as is (insertion order kept); a string is sent verbatim; undefined: no body. */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RouteDef {
  method: Method;
  /** fastify syntax: `/v1/schedules/:id`. */
  url: string;
  summary: string;
  tag: "schedules" | "workflows" | "executions" | "system" | "worker";
  params?: TSchema;
  query?: TSchema;
  body?: TSchema;
  /**
   * The body as the OpenAPI document gives it, when `body` validates more loosely so that the
   * handler refuses with its own message (unknown settings get a suggestion): required fields and
   * no other keys, as the handler enforces them.
   */
  documentedBody?: TSchema;
  /** Documented answers by status; errors are added by the OpenAPI generator. */
  responses: Record<number, { description: string; schema?: TSchema; contentType?: string }>;
  /**
   * Accepts If-Match (schedule writes); `"own"`: the handler answers it itself (a create's 412).
   * Any other write refuses it (412), since it has no revision a condition could match.
   */
  ifMatch?: boolean | "own";
  /** May create what it names (a start, a workflow, a file's schedules): `If-Match: *` is 412 too. */
  creates?: boolean;
  /** Answers carry `ETag: "<revision>"` of the schedule in the body. */
  etag?: boolean;
  /** The largest request body taken, in bytes. Default BODY_LIMIT_BYTES (errors.ts). */
  bodyLimit?: number;
  /** Accepts Idempotency-Key. Default: every POST, PATCH and DELETE. */
  idempotent?: boolean;
  /** Open to anyone even with identities configured (health, readiness, metrics, the document). */
  public?: boolean;
  /** Refuses callers that may not use the route (401/403); runs before the handler. */
  guard?: (request: ApiRequest) => Promise<void> | void;
  handler(request: ApiRequest): Promise<ApiAnswer>;
}

export interface RouteContext {
  idempotency: IdempotencyKeys;
  /** The caller of a request (may throw UNAUTHENTICATED); null when the server is open. */
  authenticate(request: FastifyRequest): Caller | null;
}

/** `/v1/schedules/:id` as the docs write it: `/v1/schedules/{id}`. */
const pathOf = (url: string): string => url.replace(/:(\w+)/g, "{$1}");

/**
 * An API route without query parameters takes none: `?expected_revision=9` on a cancel or a
 * heartbeat, or a misspelt parameter, was ignored and the write went ahead as if unconditional.
 * (Health and the UI's pages ignore theirs, as a cache-buster on a probe is harmless.)
 */
export function refuseQueryParameters(route: { method: Method; url: string }, query: unknown): void {
  if (!route.url.startsWith("/v1/")) return;
  const given = Object.keys((query ?? {}) as object)[0];
  if (given === undefined) return;
  throw new OrbitError(
    "INVALID_ARGUMENT",
    `unknown field "${given}" in the query string: ${route.method} ${pathOf(route.url)} takes no query parameters`,
  );
}

/**
 * If-Match on a write that has no revision to match: a conditional cancel or retry went ahead
 * unconditionally without a word. RFC 9110 § 13.1.1: no current representation to match makes the
 * condition false (412), as on a schedule create (fences.ts); said after the guard, so a caller
 * who may not write here hears that first. `*` asks only that the target exists, which the write
 * finds out itself (404), except on a route that creates (`creates`): what it would create does not
 * exist yet, so `*` is 412 there too (a start or a workflow under `If-Match: *` was created).
 */
export function refuseIfMatch(
  route: { method: Method; url: string; creates?: boolean },
  header: string | string[] | undefined,
): void {
  if (header === undefined || route.method === "GET") return;
  const text = String(header).trim();
  if (text === "*" && route.creates !== true) return;
  const why =
    route.creates === true ? "creates what it names, so there is nothing to match" : "has no revision to match";
  throw new OrbitError(
    "PRECONDITION_FAILED",
    `${route.method} ${pathOf(route.url)} ${why} (If-Match: ${text}); send it without If-Match`,
  );
}

export function isIdempotent(route: RouteDef): boolean {
  return route.idempotent ?? route.method !== "GET";
}

/** Registers every route of the table. */
export function registerRoutes(app: FastifyInstance, routes: readonly RouteDef[], ctx: RouteContext): void {
  for (const route of routes) {
    app.route({
      method: route.method,
      url: route.url,
      ...(route.bodyLimit !== undefined ? { bodyLimit: route.bodyLimit } : {}),
      schema: {
        ...(route.params ? { params: route.params } : {}),
        ...(route.query ? { querystring: route.query } : {}),
        ...(route.body ? { body: route.body } : {}),
      },
      handler: async (request, reply) => {
        // A write without a body schema takes none: `[]` on a DELETE, `{"bogus":1}` on a retry were
        // accepted and the write went ahead (docs/api.md: unknown fields are refused).
        if (route.body === undefined && route.method !== "GET" && !isEmptyBody(request.body)) {
          throw new OrbitError(
            "INVALID_ARGUMENT",
            `${route.method} ${route.url.replace(/:(\w+)/g, "{$1}")} takes no request body`,
          );
        }
        if (route.query === undefined) refuseQueryParameters(route, request.query);
        const api: ApiRequest = {
          params: (request.params ?? {}) as Record<string, string>,
          query: (request.query ?? {}) as Record<string, unknown>,
          body: request.body,
          rawBody: (request as FastifyRequest & { rawBody?: string }).rawBody,
          headers: request.headers,
          caller: route.public ? null : ctx.authenticate(request),
        };
        await route.guard?.(api);
        if (route.ifMatch === undefined) refuseIfMatch(route, request.headers["if-match"]);
        const key = isIdempotent(route) ? IdempotencyKeys.keyOf(request.headers["idempotency-key"]) : undefined;
        let answer: ApiAnswer;
        if (key === undefined) answer = await route.handler(api);
        else {
          // The route and its decoded parameters, not the raw URL: `/v1/executions/`, `/v1/%65xecutions`
          // and `/v1/executions` are one route, so one key must start one execution (docs/api.md § Idempotency).
          const path = route.url.replace(/:(\w+)/g, (_m, name: string) => encodeURIComponent(api.params[name] ?? ""));
          const replay = await ctx.idempotency.run(
            {
              key,
              scope: `${route.method} ${path} ${api.caller?.name ?? "-"}`,
              fingerprint: { body: api.body ?? null, query: api.query, ifMatch: request.headers["if-match"] ?? null },
            },
            async () => {
              const a = await route.handler(api);
              return { status: a.status, body: a.body };
            },
          );
          answer = { status: replay.status, body: replay.body ?? undefined };
          if (replay.replayed) answer.headers = { "idempotent-replayed": "true" };
        }
        reply.code(answer.status);
        if (route.etag) reply.headers(etagOf(answer.body));
        if (answer.headers) reply.headers(answer.headers);
        if (route.method === "GET" && !route.etag && answer.status === 200 && answer.body !== undefined) {
          // Lists and reads without a revision: a content ETag, 304 when the client has it (conditional.ts).
          const c = conditional(answer.body, request.headers["if-none-match"]);
          reply.header("etag", c.etag);
          if (c.notModified) return reply.code(304).send();
          if (typeof answer.body !== "string") return reply.type("application/json; charset=utf-8").send(c.text);
        }
        return answer.body === undefined ? reply.send() : reply.send(answer.body);
      },
    });
  }
}

/** No body, or `{}` (the request hook gives a body-less POST `{}`). */
function isEmptyBody(body: unknown): boolean {
  if (body === undefined || body === "") return true;
  return typeof body === "object" && body !== null && !Array.isArray(body) && Object.keys(body).length === 0;
}
