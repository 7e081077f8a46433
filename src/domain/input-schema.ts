/**
 * JSON Schema (draft 2020-12) compilation and input validation with Ajv.
 *
 * Each workflow version gets its own Ajv instance: schemas may carry `$id`s, and two workflows
 * (or two versions) using the same `$id` must not collide in one shared instance. Compiling
 * happens once per version per process (the validators are cached by the caller), so the extra
 * instances cost little.
 */
import { createRequire } from "node:module";
import type Ajv2020 from "ajv/dist/2020.js";
import type { ErrorObject, ValidateFunction } from "ajv/dist/2020.js";
import type addFormatsPlugin from "ajv-formats";
import { OrbitError } from "./errors.js";
import type { JsonObject } from "./json.js";
import { compileEnum, jsonValueCount, uniqueItems } from "./linear-keywords.js";
import { withCompileAllowance } from "./re2-pattern.js";
import {
  PATTERN_BUDGET,
  PatternBudgetSpent,
  patternBudgetHalfLeft,
  REQUEST_PATTERN_BUDGET,
  safePatternEngine,
  withPatternBudget,
} from "./safe-pattern.js";
import { ANY_ITEM, ANY_PROPERTY, checkedDepth, jsonNesting } from "./schema-depth.js";
import { SchemaRefs, Unresolved, valueAt } from "./schema-refs.js";

interface AjvModules {
  Ajv: typeof Ajv2020.default;
  addFormats: typeof addFormatsPlugin.default;
}
let ajvModules: AjvModules | null = null;

/**
 * Ajv and ajv-formats, loaded on the first compile rather than with this module: a worker process
 * whose workflows declare no input schema never needs them (about 2 MB of RSS; docs/operations.md
 * § Sizing). Both packages are CommonJS, so `require` loads them synchronously; their classes are
 * the `.default` of the module, as under NodeNext's import.
 */
function ajv(): AjvModules {
  if (ajvModules === null) {
    const require = createRequire(import.meta.url);
    ajvModules = {
      Ajv: (require("ajv/dist/2020.js") as typeof Ajv2020).default,
      addFormats: (require("ajv-formats") as typeof addFormatsPlugin).default,
    };
  }
  return ajvModules;
}

/** How many schema violations a message lists before summarising the rest. */
const MAX_LISTED_ERRORS = 5;

/**
 * A compiled input schema; `maxNesting`: the deepest input it checks in bounded time (null: any the
 * limits allow), which a start checks before the schema (checkInputNesting).
 */
export type InputValidator = ValidateFunction & { maxNesting?: number | null };

/**
 * `validate(input)` within the budget of one check's pattern tests (safe-pattern.ts): an input whose
 * check would test more, or longer, strings is refused with INVALID_ARGUMENT naming the pattern
 * (docs/security.md § Input schemas). `label` (`Name@1.0.0`) names the schema.
 */
export function checkWithinBudget(validate: InputValidator, input: unknown, label: string): boolean {
  try {
    return withPatternBudget(() => validate(input) as boolean);
  } catch (error) {
    if (!(error instanceof PatternBudgetSpent)) throw error;
    if (error.request) {
      throw new OrbitError(
        "INVALID_ARGUMENT",
        `the inputs of this request take more pattern matching than one request may do (${REQUEST_PATTERN_BUDGET.toLocaleString("en-US")} steps, about ten seconds): ${label}'s input_schema tests pattern ${error.pattern} on them; send fewer entries per request (docs/security.md § Input schemas)`,
      );
    }
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `input takes more pattern matching than one check may do (${PATTERN_BUDGET.toLocaleString("en-US")} steps, about a second): ${label}'s input_schema tests pattern ${error.pattern} on too many or too long strings (patternProperties tries each of its patterns on every key, pattern every string it applies to); send a smaller input, or register a version with fewer patterns (docs/security.md § Input schemas)`,
    );
  }
}

/** Refuses an input nested deeper than `validate` checks in bounded time (docs/security.md § Input schemas). */
export function checkInputNesting(validate: InputValidator, input: unknown, label: string): void {
  const max = validate.maxNesting;
  if (max === undefined || max === null) return;
  const nesting = jsonNesting(input);
  if (nesting > max) {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `input is nested ${nesting} levels deep, and ${label}'s input_schema checks at most ${max}: its alternatives that apply to the same part of the input multiply with each level (docs/security.md § Input schemas)`,
    );
  }
}

/**
 * Compiles a workflow's input schema. `label` (`Name@1.0.0`) names it in the error.
 * Unknown keywords are refused (Ajv strict schema mode); formats come from ajv-formats. The type
 * checks that only reject unusual-but-valid schemas (union types, tuples, `required` naming
 * undeclared properties) are off.
 */
export function compileInputSchema(schema: JsonObject, label: string): InputValidator {
  const validator = schemaCompiler(false);
  // Checked against the meta-schema first, to say where and what: Ajv's own text for `"type":
  // "objekt"` was "data/type must be equal to one of the allowed values, data/type must be array,
  // data/type must match a schema in anyOf", naming neither the value nor the types.
  // (Inside the try: a `$schema` Ajv does not know, draft-07's, throws there as it does in compile.)
  let reason: string;
  try {
    if (validator.validateSchema(schema) === true) {
      const refs = new SchemaRefs(schema);
      const refusal = unboundedChecks(schema, refs);
      if (refusal !== null) throw new OrbitError("INVALID_ARGUMENT", refusal);
      const validate = withListedErrors(
        withCompileAllowance(() => compileFailFast(validator, schema)),
        schema,
      );
      validate.maxNesting = checkedNesting(schema, refs);
      return validate;
    }
    reason = metaSchemaErrors(validator.errors ?? [], schema);
  } catch (error) {
    if (error instanceof OrbitError) throw new OrbitError(error.code, `input_schema of ${label}: ${error.message}`);
    reason = error instanceof Error ? error.message : String(error);
    // A `$schema` of another draft: say which one is taken (Ajv said "no schema with key or ref").
    const other = /^no schema with key or ref "(.*)"$/.exec(reason);
    if (other !== null && other[1] === (schema as { $schema?: unknown }).$schema) {
      reason = `$schema "${other[1]}" is not supported: input schemas are draft 2020-12 (leave $schema out, or give "https://json-schema.org/draft/2020-12/schema")`;
    }
  }
  throw new OrbitError(
    "INVALID_ARGUMENT",
    `input_schema of ${label} is not a valid JSON Schema (draft 2020-12): ${reason}`,
  );
}

/**
 * The check that stops at the first problem. Ajv writes it as nested blocks, one per keyword, so a
 * schema of some 3,000 properties in one object nests too deep for V8 to compile (it took 8,000
 * with every problem collected). Such a schema without references is compiled to collect every
 * problem: the errors pile up only through `$ref`s, so that costs no more than stopping.
 */
function compileFailFast(validator: ReturnType<typeof schemaCompiler>, schema: JsonObject): ValidateFunction {
  try {
    return validator.compile(schema);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    if (/"\$(ref|dynamicRef|recursiveRef)"/.test(JSON.stringify(schema))) {
      throw new OrbitError(
        "INVALID_ARGUMENT",
        "it is too large to compile: its checks nest deeper than the JavaScript engine takes (some 3,000 keywords in one object); split its largest object into $defs",
      );
    }
    return schemaCompiler(true).compile(schema);
  }
}

/** An input with at most this many JSON values is checked again for every problem, to list them. */
const LISTED_ERRORS_UP_TO_VALUES = 200;

/**
 * The check stops at the first problem (Ajv's `allErrors: false`): with every problem collected,
 * Ajv copies the errors gathered so far at each `$ref` it follows, so an ordinary tree schema
 * and 30,000 wrong leaves (60 KB) held the server 12.9 s, and 200,000 under `uniqueItems` 682 s
 * (Ajv's maintainers advise against `allErrors` on servers, ajv-validator/ajv#2012). A refused
 * input of at most {@link LISTED_ERRORS_UP_TO_VALUES} values is then checked again with every
 * problem collected, so that the message lists up to five (docs/security.md § Input schemas).
 */
function withListedErrors(first: ValidateFunction, schema: JsonObject): InputValidator {
  let every: ValidateFunction | null = null;
  const validate = ((data: unknown): boolean => {
    if (first(data) === true) {
      validate.errors = null;
      return true;
    }
    validate.errors = first.errors ?? null;
    // Listed only while the first check spent less than half the budget: the listing may cost
    // as much again, and a refusal of a costly input twice over held the thread twice as long.
    if (patternBudgetHalfLeft() && jsonValueCount(data, LISTED_ERRORS_UP_TO_VALUES) <= LISTED_ERRORS_UP_TO_VALUES) {
      every ??= withCompileAllowance(() => schemaCompiler(true).compile(schema));
      const all = every;
      try {
        all(data);
        validate.errors = all.errors ?? validate.errors;
      } catch (error) {
        // The listing ran out of the check's budget: the first problem is said alone, not a
        // refusal of the input for its size (the first check had decided within the budget).
        if (!(error instanceof PatternBudgetSpent)) throw error;
      }
    }
    return false;
  }) as InputValidator;
  validate.errors = null;
  return validate;
}

/** An Ajv for input schemas; `allErrors`: collect every problem (only for small inputs, above). */
function schemaCompiler(allErrors: boolean): InstanceType<ReturnType<typeof ajv>["Ajv"]> {
  const { Ajv, addFormats } = ajv();
  const validator = new Ajv({
    strict: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    useDefaults: true,
    allErrors,
    // Patterns on an engine no input can hold for long, or refused here (safe-pattern.ts).
    code: { regExp: safePatternEngine },
  });
  addFormats(validator);
  validator.removeKeyword("enum");
  validator.addKeyword({ keyword: "enum", schemaType: "array", compile: compileEnum, errors: true });
  validator.removeKeyword("uniqueItems");
  validator.addKeyword({
    keyword: "uniqueItems",
    type: "array",
    schemaType: "boolean",
    validate: uniqueItems,
    errors: true,
  });
  return validator;
}

/** How many checks of one value of the input a schema's in-place combinations may make. */
export const MAX_IN_PLACE_CHECKS = 10_000;

/** Keywords whose subschemas apply to the same value of the input as their schema. */
const IN_PLACE_LISTS = ["allOf", "anyOf", "oneOf"] as const;
const IN_PLACE_ONE = ["not", "if", "then", "else"] as const;
/** Keywords whose subschemas apply to a value inside it (or are only referred to). */
const INSIDE_ONE = [...ANY_PROPERTY, ...ANY_ITEM, "propertyNames"];
const INSIDE_MAPS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];

/**
 * Why checking an input against `schema` may never end or take exponential time, or null
 * (docs/security.md § Input schemas). Ajv follows a `$ref` wherever it points: `{"$ref": "#"}`
 * applies the schema to the same value again forever (the stack overflowed at every start, a 500,
 * and a schedule's fire failed without a word), and thirty `$defs` each an `anyOf` of two
 * references to the next made 2^30 checks of one value (the server ran out of memory). So the
 * combinations that apply to the same value — allOf, anyOf, oneOf, not, if/then/else,
 * dependentSchemas and `$ref` within the document — must not lead back to where they started and
 * must not multiply past {@link MAX_IN_PLACE_CHECKS}; a reference that goes into the input
 * (`properties`, `items`, …) is how recursive data is described, and is fine.
 */
export function unboundedChecks(schema: JsonObject, refs = new SchemaRefs(schema)): string | null {
  // Every subschema: through the keywords that hold schemas, and through every reference (a
  // `$ref` may point anywhere in the document, into `examples` too).
  const all: object[] = [];
  const seen = new Set<object>();
  const collect = (node: unknown): void => {
    if (typeof node !== "object" || node === null || seen.has(node)) return;
    if (Array.isArray(node)) {
      for (const n of node) collect(n);
      return;
    }
    seen.add(node);
    all.push(node);
    const o = node as Record<string, unknown>;
    for (const k of [...IN_PLACE_LISTS, ...IN_PLACE_ONE, ...INSIDE_ONE, "prefixItems"]) collect(o[k]);
    for (const k of INSIDE_MAPS) {
      const map = o[k];
      if (typeof map === "object" && map !== null && !Array.isArray(map))
        for (const v of Object.values(map)) collect(v);
    }
    for (const target of refs.targets(node)) collect(target);
  };
  const checks = new Map<object, number>();
  const onPath = new Set<object>();
  const count = (node: unknown): number => {
    if (typeof node !== "object" || node === null || Array.isArray(node)) return 1;
    const known = checks.get(node);
    if (known !== undefined) return known;
    if (onPath.has(node)) throw new Cycle();
    onPath.add(node);
    let n = 1;
    for (const c of inPlace(node, refs)) n += count(c);
    if (n > MAX_IN_PLACE_CHECKS) throw new TooMany();
    onPath.delete(node);
    checks.set(node, n);
    return n;
  };
  try {
    collect(schema);
    // Draft 7's `dependencies`, which Ajv's 2020-12 dialect still runs, is not walked here: its
    // subschemas doubled per level (22 levels: 8 s a start) and carried 3,000 patterns past the limit.
    if (all.some((node) => Object.hasOwn(node, "dependencies"))) {
      return 'it uses "dependencies", a keyword of draft 7: input schemas are draft 2020-12, so write "dependentRequired" (a list of property names) or "dependentSchemas" (a schema)';
    }
    if (all.length > MAX_SUBSCHEMAS) {
      return `it has ${all.length.toLocaleString("en-US")} subschemas, and a schema may have at most ${MAX_SUBSCHEMAS.toLocaleString("en-US")}: registering a version compiles them, about a second per thousand here (3,000 enums took 7.7 s), while the server waits`;
    }
    const patterns = all.reduce((n, node) => n + patternCount(node), 0);
    if (patterns > MAX_PATTERNS) {
      return `it has ${patterns.toLocaleString("en-US")} patterns (pattern and patternProperties), and a schema may have at most ${MAX_PATTERNS.toLocaleString("en-US")}: compiling them takes seconds of the server's thread (2,000 took 2.2 s)`;
    }
    const weight = all.reduce((n, node) => n + patternWeight(node), 0);
    if (weight > MAX_PATTERN_WEIGHT) {
      return `its patterns are ${weight.toLocaleString("en-US")} characters long in all, counting each \\p{…} as ${UNICODE_CLASS_WEIGHT}, and a schema's may be at most ${MAX_PATTERN_WEIGHT.toLocaleString("en-US")}: compiling them holds the server's thread (80 patterns of 1,985 \\p{L} each took 50 s)`;
    }
    for (const node of all) {
      onPath.clear();
      count(node);
    }
    return null;
  } catch (error) {
    if (error instanceof Cycle) {
      return "it refers back to itself without going into the input (a $ref, through allOf, anyOf, oneOf, not, if/then/else or dependentSchemas, that reaches the schema it started from), so checking any input would never end";
    }
    if (error instanceof TooMany) {
      return `it combines its subschemas (allOf, anyOf, oneOf, $ref, …) into more than ${MAX_IN_PLACE_CHECKS.toLocaleString("en-US")} checks of one value of the input; write it with fewer alternatives`;
    }
    if (error instanceof Unresolved) {
      return `its reference ${JSON.stringify(error.ref.slice(0, 200))} does not point into the schema itself: an input schema is one document, so refer to its own $defs`;
    }
    throw error;
  }
}

/** Subschemas one schema may hold (each object where a schema stands, counted once). */
export const MAX_SUBSCHEMAS = 2_000;

/** Regular expressions one schema may hold: Ajv's compile time grows faster than their number (1,000 in 0.35 s here, 2,000 in 2.2 s). */
export const MAX_PATTERNS = 1_000;

/**
 * How long one schema's patterns may be in all, a `\p{…}` counted as {@link UNICODE_CLASS_WEIGHT}
 * characters: parsing and compiling a Unicode class costs 60–80 µs a character of it here, so one
 * pattern of 1,985 `\p{L}` in a class took 0.56 s, and 80 of them (each under the 10,000
 * characters of a pattern) held a server 50 s at registration and again at the first start. At
 * 20,000 a schema compiles in about a tenth of a second; at 100,000 (the first limit) 20 of them,
 * compiled after a restart by the first minute's fire, held the server 10 s.
 */
export const MAX_PATTERN_WEIGHT = 20_000;

/** The weight of all the patterns in a schema document (see {@link MAX_PATTERN_WEIGHT}): apply sums its workflows'. */
export function schemaPatternWeight(schema: unknown): number {
  let weight = 0;
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) for (const x of v) walk(x);
    else if (typeof v === "object" && v !== null) {
      weight += patternWeight(v);
      for (const x of Object.values(v)) walk(x);
    }
  };
  walk(schema);
  return weight;
}
const UNICODE_CLASS_WEIGHT = 50;

/** The weight of one subschema's patterns (see {@link MAX_PATTERN_WEIGHT}). */
function patternWeight(node: object): number {
  const o = node as Record<string, unknown>;
  const map = o.patternProperties;
  const texts = typeof map === "object" && map !== null && !Array.isArray(map) ? Object.keys(map) : [];
  if (typeof o.pattern === "string") texts.push(o.pattern);
  let weight = 0;
  for (const t of texts) weight += t.length + (UNICODE_CLASS_WEIGHT - 1) * (t.match(/\\[pP]\{/g)?.length ?? 0);
  return weight;
}

/** The regular expressions of one subschema: its `pattern` and the keys of its `patternProperties`. */
function patternCount(node: object): number {
  const o = node as Record<string, unknown>;
  const map = o.patternProperties;
  const keyed = typeof map === "object" && map !== null && !Array.isArray(map) ? Object.keys(map).length : 0;
  return keyed + (typeof o.pattern === "string" ? 1 : 0);
}

/** The subschemas checked on the same value as `node`: its combinations and what its references point at. */
function inPlace(node: object, refs: SchemaRefs): unknown[] {
  const o = node as Record<string, unknown>;
  const out: unknown[] = [];
  for (const k of IN_PLACE_LISTS) if (Array.isArray(o[k])) out.push(...(o[k] as unknown[]));
  for (const k of IN_PLACE_ONE) if (o[k] !== undefined) out.push(o[k]);
  const dependent = o.dependentSchemas;
  if (typeof dependent === "object" && dependent !== null) out.push(...Object.values(dependent));
  out.push(...refs.targets(node));
  return out;
}

/**
 * The deepest input `schema` checks in bounded time (schema-depth.ts), or null for any depth;
 * `schema` has passed {@link unboundedChecks} (no in-place cycle, a bounded closure).
 */
function checkedNesting(schema: JsonObject, refs: SchemaRefs): number | null {
  const closures = new Map<object, Map<object, number>>();
  const closure = (node: object): Map<object, number> => {
    let out = closures.get(node);
    if (out === undefined) {
      out = new Map([[node, 1]]);
      for (const c of inPlace(node, refs)) {
        if (typeof c !== "object" || c === null || Array.isArray(c)) continue;
        for (const [t, n] of closure(c)) out.set(t, (out.get(t) ?? 0) + n);
      }
      closures.set(node, out);
    }
    return out;
  };
  return checkedDepth(schema, closure);
}

class Cycle extends Error {}
class TooMany extends Error {}

/**
 * The meta-schema's complaints, one per place: `/type: "objekt" is not one of array, boolean, …`.
 * At a place with an enum error (`type` takes a name or a list of names), the other alternatives'
 * errors there ("must be array", "must match a schema in anyOf") are left out.
 */
function metaSchemaErrors(errors: readonly ErrorObject[], schema: JsonObject): string {
  const byPlace = new Map<string, ErrorObject[]>();
  for (const e of errors) byPlace.set(e.instancePath, [...(byPlace.get(e.instancePath) ?? []), e]);
  const lines: string[] = [];
  for (const [place, here] of byPlace) {
    const at = place === "" ? "the schema" : place;
    const value = valueAt(schema, place);
    const shown = value === undefined ? "" : `${JSON.stringify(value)?.slice(0, 60)} `;
    const allowed = here.find((e) => e.keyword === "enum")?.params.allowedValues as unknown[] | undefined;
    if (allowed !== undefined) lines.push(`${at}: ${shown}is not one of ${allowed.map(String).join(", ")}`);
    else lines.push(`${at}: ${shown}${here.filter((e) => e.keyword !== "anyOf")[0]?.message ?? here[0]?.message}`);
  }
  return lines.slice(0, MAX_LISTED_ERRORS).join("; ");
}

/** JSON Pointer escaping (RFC 6901) for a property name appended to a path. */
function pointer(path: string, key: string): string {
  return `${path}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`;
}

function describe(error: ErrorObject): string {
  const at = error.instancePath || "(root)";
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return `${pointer(error.instancePath, String(params.missingProperty))} is required`;
    case "additionalProperties":
      return `${pointer(error.instancePath, String(params.additionalProperty))} is not allowed (no such property in the schema)`;
    case "enum": {
      // At most ENUM_SHOWN values, each cut: every one of 30,000 refused items spelled out a
      // 10,000-value enum, and the message ran the server out of memory.
      const allowed = params.allowedValues as unknown[];
      const shown = allowed.slice(0, ENUM_SHOWN).map((v) => shortJson(v));
      const more = allowed.length > ENUM_SHOWN ? `, … (${allowed.length} values)` : "";
      return `${at} must be one of ${shown.join(", ")}${more}`;
    }
    case "const":
      return `${at} must be ${shortJson(params.allowedValue)}`;
    default:
      return `${at} ${error.message ?? `fails ${error.keyword}`}`;
  }
}

/** How many of an enum's values a message names. */
const ENUM_SHOWN = 10;

/** A value as JSON, at most 100 characters. */
function shortJson(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}

/** `"/amount must be number; /order_id is required"`, at most {@link MAX_LISTED_ERRORS} of them. */
export function describeSchemaErrors(errors: readonly ErrorObject[]): string {
  const unique = [...new Set(errors.map(describe))];
  const listed = unique.slice(0, MAX_LISTED_ERRORS).join("; ");
  const more = unique.length - MAX_LISTED_ERRORS;
  return more > 0 ? `${listed}; and ${more} more` : listed;
}

/** The type names of JSON Schema. */
const JSON_TYPES: ReadonlySet<unknown> = new Set(["null", "boolean", "object", "array", "number", "string", "integer"]);

/**
 * Why an input schema can never accept an input, or null: an input is a JSON object, so a schema
 * whose root `type` leaves objects out (`"array"`, `["string", "null"]`) registered, and every
 * start was refused ("(root) must be array" for `{}`, and `[1]` is no input). Checked when a
 * version is registered (server and defineWorkflow), not when a stored one is read.
 */
export function inputSchemaRootRefusal(schema: JsonObject): string | null {
  const type = schema.type;
  if (type === undefined) return null;
  const types: unknown[] = Array.isArray(type) ? type : [type];
  // A type that is no JSON Schema type at all (`"objekt"`) is the schema compiler's to refuse.
  if (types.includes("object") || !types.every((t) => JSON_TYPES.has(t))) return null;
  return `its root type is ${JSON.stringify(type)}, and an input is always a JSON object: give the root type "object" (or none)`;
}
