/**
 * The OpenAPI 3.1 document, generated from the route table: the same TypeBox schemas the routes
 * validate with (OpenAPI 3.1 schemas are JSON Schema 2020-12, so they are used as they are).
 */
import type { TSchema } from "@sinclair/typebox";
import { ERROR_CODES } from "../domain/errors.js";
import { isIdempotent, type RouteDef } from "./route.js";
import { ErrorBody } from "./schemas.js";

/** A TypeBox schema as plain JSON (TypeBox's symbol keys dropped). */
const plain = (schema: TSchema): object => JSON.parse(JSON.stringify(schema)) as object;

/** `/v1/schedules/:id` → `/v1/schedules/{id}`. */
export const openApiPath = (url: string): string => url.replace(/:(\w+)/g, "{$1}");

function parameters(route: RouteDef): object[] {
  const out: object[] = [];
  const add = (schema: TSchema | undefined, where: "path" | "query") => {
    if (!schema) return;
    const required = new Set<string>((schema.required as string[] | undefined) ?? []);
    for (const [name, s] of Object.entries((schema.properties ?? {}) as Record<string, TSchema>)) {
      out.push({ name, in: where, required: where === "path" || required.has(name), schema: plain(s) });
    }
  };
  add(route.params, "path");
  add(route.query, "query");
  if (route.ifMatch === true) {
    out.push({
      name: "If-Match",
      in: "header",
      required: false,
      description: 'the schedule\'s revision, quoted ("3"); 412 PRECONDITION_FAILED when it is another',
      schema: { type: "string" },
    });
  }
  if (route.method === "GET" && !route.etag) {
    out.push({
      name: "If-None-Match",
      in: "header",
      required: false,
      description: "an ETag this route answered before: 304 without a body while the answer is the same",
      schema: { type: "string" },
    });
  }
  if (isIdempotent(route)) {
    out.push({
      name: "Idempotency-Key",
      in: "header",
      required: false,
      description: "a repeat with the same key and request returns the first answer; another request is 422",
      schema: { type: "string", maxLength: 255 },
    });
  }
  return out;
}

function operationId(route: RouteDef): string {
  const words = route.url
    .split("/")
    .filter((w) => w !== "" && w !== "v1")
    .map((w) => (w.startsWith(":") ? `By${w[1]!.toUpperCase()}${w.slice(2)}` : w.replace(/[^A-Za-z0-9]/g, "")));
  return [route.method.toLowerCase(), ...words.map((w) => w[0]!.toUpperCase() + w.slice(1))].join("");
}

/** The headers a route's answer of `status` carries (route.ts sends them; docs/api.md). */
function headersOf(route: RouteDef, status: number): Record<string, object> {
  const headers: Record<string, object> = {};
  const text = { schema: { type: "string" } };
  if (status >= 300) return headers;
  if (route.etag) {
    headers.ETag = { description: 'the schedule\'s revision, quoted ("7"): If-Match fences writes with it', ...text };
  } else if (route.method === "GET" && status === 200) {
    headers.ETag = { description: 'a weak tag of this answer (W/"…"): If-None-Match with it answers 304', ...text };
  }
  if (isIdempotent(route)) {
    headers["Idempotent-Replayed"] = {
      description: '"true" when this is the first answer to an earlier request with the same Idempotency-Key',
      ...text,
    };
  }
  return headers;
}

/**
 * Whether a route refuses a request without a body: its body names a field it needs (a missing
 * body is read as `{}`, which lacks it). Every body was `required: false`, the create and worker
 * routes' too (test/api/openapi-body-required.test.ts sends each route no body).
 */
function bodyRequired(body: TSchema): boolean {
  const required = body.required as unknown;
  return Array.isArray(required) && required.length > 0;
}

export function openApiDocument(routes: readonly RouteDef[], version: string): object {
  const paths: Record<string, Record<string, object>> = {};
  for (const route of routes) {
    const responses: Record<string, object> = {};
    for (const [status, r] of Object.entries(route.responses)) {
      const type = r.contentType ?? "application/json";
      const headers = headersOf(route, Number(status));
      responses[status] = {
        description: r.description,
        ...(Object.keys(headers).length > 0 ? { headers } : {}),
        ...(r.schema || r.contentType ? { content: { [type]: r.schema ? { schema: plain(r.schema) } : {} } } : {}),
      };
    }
    if (route.method === "GET" && !route.etag && responses["200"] !== undefined) {
      responses["304"] = { description: "not modified: If-None-Match names this answer's ETag" };
    }
    responses.default = {
      description: `an error: {code, message}; codes ${Object.keys(ERROR_CODES).join(", ")} (docs/errors.md)`,
      content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
    };
    const op: Record<string, unknown> = {
      operationId: operationId(route),
      summary: route.summary,
      tags: [route.tag],
      parameters: parameters(route),
      responses,
    };
    const body = route.documentedBody ?? route.body;
    if (body) {
      op.requestBody = { required: bodyRequired(body), content: { "application/json": { schema: plain(body) } } };
    }
    const path = openApiPath(route.url);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = op;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Orbit",
      version,
      description: "Durable workflows with exact, exactly-once schedules. The contract: docs/api.md.",
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    paths,
    components: {
      schemas: { Error: plain(ErrorBody) },
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "with --config identities (docs/design.md § Access control)",
        },
      },
    },
  };
}
