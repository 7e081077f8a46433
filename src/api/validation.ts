/**
 * Request validation for the routes: one Ajv for bodies (no type coercion, nothing removed or
 * defaulted, so what the handler sees is what the client sent) and one for path and query
 * parameters (coerced, since they arrive as text). Ajv's errors become one clear sentence that
 * names the field.
 */
import type { ErrorObject, ValidateFunction } from "ajv";
import AjvModule from "ajv";
import addFormatsPlugin from "ajv-formats";
import type { FastifySchemaCompiler } from "fastify";
import { own } from "../domain/own.js";
import { suggestKey } from "../domain/suggest.js";
import { FIELD_ALIASES, VALUE_ALIASES } from "../scheduler/aliases.js";
import { plusAsSpace } from "../time/format.js";

// Both packages are CommonJS; under NodeNext their classes arrive as `.default`.
const Ajv = AjvModule.default;
const addFormats = addFormatsPlugin.default;

function makeAjv(coerce: boolean) {
  const ajv = new Ajv({
    verbose: true,
    allErrors: false,
    strict: false,
    coerceTypes: coerce,
    useDefaults: false,
    removeAdditional: false,
    // Our own schemas, not checked against the JSON Schema meta-schema (compiling that was about
    // 30-50 ms of each Ajv's first compile); a wrong type still fails its compile.
    validateSchema: false,
  });
  addFormats(ajv);
  return ajv;
}

const bodyAjv = makeAjv(false);
const paramAjv = makeAjv(true);

/** A request part's schema compiled: bodies strict, params and query coerced from text. */
export function compileRequestSchema(schema: object, httpPart: string | undefined): ValidateFunction {
  return (httpPart === "body" ? bodyAjv : paramAjv).compile(schema);
}

/**
 * Fastify's validator compiler. Each schema is compiled on its route's first request, not when the
 * server starts: compiling all of them was about 220 ms of every start's CPU (the server's start
 * is a failover's and a test's wait). test/api/system.test.ts sends every route a request.
 */
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  let compiled: ValidateFunction | null = null;
  const validate = (data: unknown): boolean => {
    compiled ??= compileRequestSchema(schema as object, httpPart);
    const valid = compiled(data) as boolean;
    validate.errors = compiled.errors;
    return valid;
  };
  validate.errors = null as ValidateFunction["errors"];
  return validate as ReturnType<FastifySchemaCompiler<unknown>>;
};

/** Where a request part's unknown keys are, and how its fields are named in messages. */
const PARTS: Record<string, { container: string; field: string }> = {
  body: { container: "the request body", field: "" },
  querystring: { container: "the query string", field: "query parameter " },
  params: { container: "the path", field: "path parameter " },
  headers: { container: "the headers", field: "header " },
};

function describeType(type: unknown): string {
  const types = Array.isArray(type) ? type : String(type).split(",");
  const words = types.map((t) =>
    t === "integer"
      ? "an integer"
      : t === "object"
        ? "a JSON object"
        : t === "array"
          ? "an array"
          : t === "null"
            ? "null"
            : `a ${t}`,
  );
  return words.join(" or ");
}

/**
 * One sentence for the first Ajv error: `unknown field "nte" in the request body; did you mean
 * "note"?`, `query parameter limit must be at most 1000`, `reason must be a string`.
 */
export function describeValidationError(errors: readonly ErrorObject[], part: string | undefined): string {
  const error = errors[0];
  if (error === undefined) return "the request is invalid";
  const names = PARTS[part ?? "body"] ?? { container: "the request", field: "" };
  // `schedules[1].workflow`, as the batch routes' own refusals name an item (docs/api.md).
  const path = error.instancePath
    .split("/")
    .slice(1)
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce((out, s) => (/^\d+$/.test(s) ? `${out}[${s}]` : out === "" ? s : `${out}.${s}`), "");
  const field = path === "" ? names.container : `${names.field}${path}`;
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "additionalProperties":
      return unknownField(String(p.additionalProperty), error.parentSchema, field);
    case "required": {
      // Ajv stops at the first error, and `required` comes before `additionalProperties`: a
      // misspelt required key (`start` for `start_at`) is named as the unknown key it is.
      const unknown = unknownKeyOf(error.data, error.parentSchema);
      if (unknown !== null) return unknownField(unknown, error.parentSchema, field);
      return `${field} needs "${String(p.missingProperty)}"`;
    }
    case "type": {
      // `"interval": 3600` was told only that it must be a string (a tester coming from seconds).
      const about = (error.parentSchema as { description?: unknown } | undefined)?.description;
      if (typeof error.data === "number" && typeof about === "string" && about.startsWith("duration")) {
        return `${field} must be a duration text such as "90s", "15m" or "1h30m", not a number (${error.data} seconds is "${error.data}s")`;
      }
      // A setting given null names it (`workflow must be a string, not null`); a whole body of
      // `null` is refused as every other body that is not an object.
      return `${field} must be ${describeType(p.type)}${error.data === null && path !== "" ? ", not null" : ""}`;
    }
    case "enum": {
      // Another product's name for a value (overlap "cancel_other"): point at Orbit's.
      // A setting's `null` (unset it, on an update) is not one of its values.
      const allowed = (p.allowedValues as unknown[]).filter((v) => v !== null).map(String);
      const value = typeof error.data === "string" ? error.data : null;
      const name = path.split(".").pop() ?? "";
      const hint =
        value === null
          ? null
          : (own(own(VALUE_ALIASES, name) ?? {}, value.toLowerCase()) ?? suggestKey(value, allowed));
      return `${field} must be one of ${allowed.join(", ")}${hint === null ? "" : `; did you mean "${hint}"?`}`;
    }
    case "minimum":
    case "exclusiveMinimum":
      return `${field} must be at least ${String(p.limit)}`;
    case "maximum":
    case "exclusiveMaximum":
      return `${field} must be at most ${String(p.limit)}`;
    case "minItems":
      return `${field} must hold at least ${String(p.limit)} item${p.limit === 1 ? "" : "s"}`;
    case "maxItems":
      return `${field} must hold at most ${String(p.limit)} items`;
    case "minLength":
      return `${field} must not be empty`;
    case "maxLength":
      return `${field} must be at most ${String(p.limit)} characters long`;
    case "pattern":
      return `${field} must match ${String(p.pattern)}`;
    case "format":
      return `${field} must be a valid ${String(p.format)}${plusAsSpace(error.data)}`;
    default:
      return `${field} ${error.message ?? "is invalid"}`;
  }
}

/** The schema's declared keys, when it refuses any other (`additionalProperties: false`), else null. */
function closedKeys(schema: unknown): string[] | null {
  const s = schema as { properties?: object; additionalProperties?: unknown } | undefined;
  return s?.additionalProperties === false ? Object.keys(s.properties ?? {}) : null;
}

/** The first key of `data` that a closed `schema` does not declare, or null. */
function unknownKeyOf(data: unknown, schema: unknown): string | null {
  const known = closedKeys(schema);
  if (known === null || typeof data !== "object" || data === null || Array.isArray(data)) return null;
  for (const key of Object.keys(data)) if (!known.includes(key)) return key;
  return null;
}

function unknownField(key: string, schema: unknown, container: string): string {
  const known = Object.keys((schema as { properties?: object } | undefined)?.properties ?? {});
  const hint = suggestKey(key, known, FIELD_ALIASES);
  return `unknown field "${key}" in ${container}${hint === null ? "" : `; did you mean "${hint}"?`}${known.length > 0 ? ` (known: ${known.join(", ")})` : ""}`;
}
