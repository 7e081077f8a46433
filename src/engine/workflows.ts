/**
 * Workflow registration, lookup and input validation (docs/design.md § Executions and tasks).
 * Versions are immutable once registered, so validators are cached per (name, version).
 */
import { canonicalJson } from "../domain/canonical-json.js";
import type { NowClock as Clock } from "../domain/clock.js";
import { OrbitError } from "../domain/errors.js";
import {
  checkInputNesting,
  checkWithinBudget,
  compileInputSchema,
  describeSchemaErrors,
  type InputValidator,
  inputSchemaRootRefusal,
} from "../domain/input-schema.js";
import { isJsonObject, type JsonObject } from "../domain/json.js";
import { checkJsonLimits } from "../domain/json-limits.js";
import { suggestKey } from "../domain/suggest.js";
import type { Workflow } from "../domain/workflow.js";
import { isWorkflowVersion, versionWithoutBuild } from "../domain/workflow-version.js";
import type { Store, StoreOps } from "../store/store.js";
import type { WorkflowRef } from "../store/task-store.js";
import { inTransaction } from "./tx.js";
import { validateWorkflowSettings } from "./workflow-settings.js";

/** The body of `POST /v1/workflows`. */
export interface RegisterWorkflowRequest {
  name: string;
  version: string;
  /** JSON Schema 2020-12 for the input. Absent or null: any JSON object. */
  input_schema?: JsonObject | null;
  /** Free text, at most 1,000 characters. */
  description?: string | null;
}

export interface WorkflowsOptions {
  store: Store;
  clock: Clock;
  /**
   * Whether "not registered" names the nearest registered workflow (default true). Off on a server
   * with identities: the name may be one the caller may not see, and such objects must look as if
   * they did not exist (docs/security.md); a schedule's last_error is read by whoever reads it.
   */
  nearNames?: boolean;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** The refusal of a name no workflow can be registered under, or null (a start's or a schedule's too). */
export function invalidWorkflowName(name: unknown): string | null {
  if (typeof name === "string" && NAME.test(name)) return null;
  return `workflow name ${JSON.stringify(name)} is invalid: use 1-128 letters, digits, '_', '.' or '-', starting with a letter or digit`;
}

/**
 * Refuses, INVALID_ARGUMENT, a start naming a workflow or version no workflow can be registered
 * under, as registration and a schedule do (it was answered 404 "workflow W@<script> is not
 * registered"). Checked where a start comes in, not in the fire's batches: a schedule's are checked
 * when it is written.
 */
export function checkWorkflowRef(name: string, version: string | null | undefined): void {
  const badName = invalidWorkflowName(name);
  if (badName !== null) throw new OrbitError("INVALID_ARGUMENT", badName);
  if (version != null && !isWorkflowVersion(version)) {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `version ${JSON.stringify(version)} ${notSemver(version)}: give a registered version, or leave version out for the latest`,
    );
  }
}

/**
 * Why a version cannot be a workflow's. Build metadata (`1.0.0+build.5`) is semver, but semver's
 * order ignores it, so "latest" could not choose between 1.0.0+build.5 and 1.0.0 (or +build.6):
 * refused, and said so plainly; it was called "not a semver version" (a tester).
 */
export function notSemver(version: string): string {
  const base = versionWithoutBuild(version);
  if (base === null) return "is not a semver version (MAJOR.MINOR.PATCH, e.g. 1.0.0)";
  return `has build metadata (${version.slice(base.length)}), which Orbit does not accept: semver's order ignores it, so ${version} would tie with ${base} for the latest`;
}

export { isWorkflowVersion };

/**
 * Refuses, INVALID_ARGUMENT, a worker's poll offering a workflow no version can be registered as:
 * it would wait for tasks that never come.
 */
export function checkOfferedWorkflows(offered: readonly { name: string; version: string }[]): void {
  const first = new Map<string, number>();
  offered.forEach(({ name, version }, i) => {
    // Twice, with two retry policies: which one a task got depended on the order of the list.
    const before = first.get(`${name}@${version}`);
    if (before !== undefined) {
      throw new OrbitError(
        "INVALID_ARGUMENT",
        `workflows[${i}]: ${name}@${version} is offered already (workflows[${before}]); offer each version once`,
      );
    }
    first.set(`${name}@${version}`, i);
    const badName = invalidWorkflowName(name);
    if (badName !== null) throw new OrbitError("INVALID_ARGUMENT", `workflows[${i}]: ${badName}`);
    if (!isWorkflowVersion(version)) {
      throw new OrbitError(
        "INVALID_ARGUMENT",
        `workflows[${i}]: version ${JSON.stringify(version)} of ${name} ${notSemver(version)}: offer the version the workflow is registered as`,
      );
    }
  });
}
const MAX_DESCRIPTION = 1000;

export class Workflows {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly validators = new Map<string, InputValidator>();
  /** Versions read as registered outside any transaction (unregistered()); never forgotten. */
  private readonly known = new Set<string>();
  /** Workflows resolved inside a transaction, per transaction (see resolve). */
  private readonly resolvedInTx = new WeakMap<StoreOps, Map<string, Workflow>>();
  /** The registered names read inside a transaction, for a refusal's "did you mean" (see notFound). */
  private readonly namesInTx = new WeakMap<StoreOps, Promise<string[]>>();

  private readonly nearNames: boolean;

  constructor(options: WorkflowsOptions) {
    this.nearNames = options.nearNames ?? true;
    this.store = options.store;
    this.clock = options.clock;
  }

  /**
   * Registers a version: `created: true` when new (201), `false` when an identical one exists (200;
   * a different description alone does not count, the first one stays). The same version with
   * another input schema is ALREADY_EXISTS (409). Invalid requests store nothing.
   */
  async register(request: RegisterWorkflowRequest, tx?: StoreOps): Promise<{ workflow: Workflow; created: boolean }> {
    const workflow = this.parse(request);
    if (workflow.inputSchema) {
      this.validatorFor(workflow); // refuses an invalid schema before storing
      const refused = inputSchemaRootRefusal(workflow.inputSchema);
      if (refused !== null) throw new OrbitError("INVALID_ARGUMENT", `input_schema of ${label(workflow)}: ${refused}`);
    }
    return inTransaction(this.store, tx, async (t) => {
      this.resolvedInTx.delete(t);
      this.namesInTx.delete(t);
      if (await t.insertWorkflow(workflow)) return { workflow, created: true };
      const existing = await t.getWorkflow(workflow.name, workflow.version);
      if (!existing) throw new Error(`workflow ${label(workflow)} neither inserted nor found`);
      if (canonicalJson(existing.inputSchema) !== canonicalJson(workflow.inputSchema)) {
        throw new OrbitError(
          "ALREADY_EXISTS",
          `workflow ${label(workflow)} is already registered with a different input_schema; versions are immutable, register a new version`,
        );
      }
      return { workflow: existing, created: false };
    });
  }

  /** A workflow name's settings (docs/outcomes.md): default timeouts, notify webhooks. */
  settings(name: string): Promise<JsonObject> {
    return this.store.getWorkflowSettings(name);
  }

  /** Merges a patch into the settings (null unsets one); NOT_FOUND when no version is registered. */
  async updateSettings(name: string, patch: Record<string, unknown>): Promise<JsonObject> {
    return inTransaction(this.store, undefined, async (t) => {
      await this.get(name, t);
      const merged: Record<string, unknown> = { ...(await t.getWorkflowSettings(name)) };
      for (const [key, value] of Object.entries(patch)) {
        if (value === null) delete merged[key];
        else merged[key] = value;
      }
      const settings = validateWorkflowSettings(merged);
      await t.putWorkflowSettings(name, settings, this.clock.now());
      return settings;
    });
  }

  /** Every version of every workflow: by name, highest version first. */
  list(): Promise<Workflow[]> {
    return this.store.listWorkflows();
  }

  /**
   * The offered versions the database does not hold: a worker registers its workflows once, at its
   * start, so a server whose database was replaced or restored from an older backup under a
   * running worker had it poll for versions nobody could start, listed live, while `orbit start`
   * said the workflow was not registered (a tester). The poll's answer names them and the worker
   * registers them again. A version found once is remembered (versions are never removed), so a
   * poll costs a read only for versions still missing.
   */
  async unregistered(offers: readonly { name: string; version: string }[]): Promise<WorkflowRef[]> {
    const missing: WorkflowRef[] = [];
    for (const { name, version } of offers) {
      const key = `${name}@${version}`;
      if (this.known.has(key)) continue;
      if ((await this.store.getWorkflow(name, version)) !== null) this.known.add(key);
      else missing.push({ name, version });
    }
    return missing;
  }

  /** All versions of one workflow, highest first; NOT_FOUND when none is registered. */
  async get(name: string, tx?: StoreOps): Promise<Workflow[]> {
    const versions = await (tx ?? this.store).listWorkflowVersions(name);
    if (!versions.length) throw await this.notFound(name, null, tx);
    return versions;
  }

  /** The highest semver version that is not deprecated (docs/outcomes.md § Deprecated versions). */
  async latest(name: string, tx?: StoreOps): Promise<Workflow> {
    const versions = await this.get(name, tx);
    const latest = versions.find((w) => w.deprecatedMs == null);
    if (latest === undefined) {
      throw new OrbitError(
        "NOT_FOUND",
        `every version of workflow ${name} is deprecated (${versions.map((w) => w.version).join(", ")}): undeprecate one, register a new one, or pin a version`,
      );
    }
    return latest;
  }

  /**
   * Marks a version deprecated (`true`), so "latest" skips it, or not (`false`). A pinned version
   * still starts. Idempotent: deprecating a deprecated version keeps its first instant.
   */
  async deprecate(name: string, version: string, deprecated: boolean): Promise<Workflow> {
    return inTransaction(this.store, undefined, async (t) => {
      const existing = await t.getWorkflow(name, version);
      if (!existing) throw new OrbitError("NOT_FOUND", `workflow ${name}@${version} is not registered`);
      const at = deprecated ? (existing.deprecatedMs ?? this.clock.now()) : null;
      if (at !== (existing.deprecatedMs ?? null)) await t.setWorkflowDeprecated(name, version, at);
      return { ...existing, deprecatedMs: at };
    });
  }

  /**
   * The given version, or the latest when none is given; NOT_FOUND naming what is missing.
   * Inside a transaction the answer is remembered until the transaction ends (or registers a
   * workflow through it): a fire batch starts many executions of the same workflows, and one lookup
   * each is enough. On SQLite nothing can register meanwhile (the transaction holds the write lock);
   * on PostgreSQL a version committed by another server mid-batch is seen by the next batch.
   */
  async resolve(name: string, version: string | null | undefined, tx?: StoreOps): Promise<Workflow> {
    const key = `${name}@${version ?? ""}`;
    const remembered = tx === undefined ? undefined : this.resolvedInTx.get(tx);
    const hit = remembered?.get(key);
    if (hit !== undefined) return hit;
    let workflow: Workflow | null;
    if (version == null) workflow = await this.latest(name, tx);
    else {
      workflow = await (tx ?? this.store).getWorkflow(name, version);
      if (!workflow) throw await this.notFound(name, version, tx);
    }
    if (tx !== undefined) {
      if (remembered === undefined) this.resolvedInTx.set(tx, new Map([[key, workflow]]));
      else remembered.set(key, workflow);
    }
    return workflow;
  }

  /**
   * Validates an input against the workflow's schema and returns a copy with the schema's defaults
   * applied (what is stored); without a schema, the input itself (nothing changes it: cloning 1 MB
   * of small objects held the server about a second per create). Refuses, with INVALID_ARGUMENT,
   * anything but a JSON object, more than 1 MB, nesting deeper than 64, and schema violations
   * (naming the JSON path and the rule).
   */
  validateInput(workflow: Workflow, input: unknown): JsonObject {
    if (!isJsonObject(input)) {
      throw new OrbitError("INVALID_ARGUMENT", `input must be a JSON object, not ${describeType(input)}`);
    }
    checkJsonLimits(input, "input");
    if (!workflow.inputSchema) return input;
    const copy = structuredClone(input);
    const validate = this.validatorFor(workflow);
    checkInputNesting(validate, copy, label(workflow));
    if (!checkedBy(validate, copy, workflow)) {
      throw new OrbitError(
        "INVALID_ARGUMENT",
        `input does not match ${label(workflow)}: ${describeSchemaErrors(validate.errors ?? [])}`,
      );
    }
    checkJsonLimits(copy, "input with defaults applied");
    return copy;
  }

  /**
   * Keyed by the schema's text too: a version registered inside a transaction that rolled back (an
   * `apply --dry-run`, a refused file) must not leave its validator for another schema of that version.
   */
  private validatorFor(workflow: Workflow): InputValidator {
    const key = `${label(workflow)}\u0000${JSON.stringify(workflow.inputSchema)}`;
    let validator = this.validators.get(key);
    if (!validator) {
      validator = compileInputSchema(workflow.inputSchema ?? {}, label(workflow));
      this.validators.set(key, validator);
    }
    return validator;
  }

  /**
   * NOT_FOUND for a workflow (or version) no one registered, with the registered name nearest it
   * when one is near (case aside, or a few letters off, as a time zone's "did you mean"):
   * `Orderprocessing` beside a worker's `OrderProcessing` was told only to start a worker (a
   * tester). The names are read once per transaction: a fire batch may hold many such schedules.
   * Not on a server with identities (`nearNames`).
   */
  private async notFound(name: string, version: string | null, tx: StoreOps | undefined): Promise<OrbitError> {
    if (this.nearNames === false) return new OrbitError("NOT_FOUND", notRegistered(name, version));
    let names = tx === undefined ? undefined : this.namesInTx.get(tx);
    if (names === undefined) {
      names = (tx ?? this.store).listWorkflows().then((all) => [...new Set(all.map((w) => w.name))]);
      if (tx !== undefined) this.namesInTx.set(tx, names);
    }
    const known = await names;
    // `Name@version` has its own fix (nameHint), which names the workflow already.
    const near = known.includes(name) || name.includes("@") ? null : suggestKey(name, known);
    const message = notRegistered(name, version);
    if (near === null) return new OrbitError("NOT_FOUND", message);
    return new OrbitError("NOT_FOUND", `${message}; did you mean ${near}?`);
  }

  private parse(request: RegisterWorkflowRequest): Workflow {
    const { name, version, description } = request;
    const badName = invalidWorkflowName(name);
    if (badName !== null) throw new OrbitError("INVALID_ARGUMENT", badName);
    if (typeof version !== "string" || !isWorkflowVersion(version)) {
      const text = typeof version === "string" ? version : "";
      const base = versionWithoutBuild(text);
      const fix = base === null ? "" : `: register ${base}, or a higher version`;
      throw new OrbitError(
        "INVALID_ARGUMENT",
        `version ${JSON.stringify(version)} of workflow ${name} ${notSemver(text)}${fix}`,
      );
    }
    const schema = request.input_schema ?? null;
    if (schema !== null) {
      if (!isJsonObject(schema)) {
        throw new OrbitError(
          "INVALID_ARGUMENT",
          `input_schema of ${name}@${version} must be a JSON object (a JSON Schema)`,
        );
      }
      checkJsonLimits(schema, "input_schema");
    }
    if (description != null && (typeof description !== "string" || description.length > MAX_DESCRIPTION)) {
      throw new OrbitError("INVALID_ARGUMENT", `description must be text of at most ${MAX_DESCRIPTION} characters`);
    }
    return { name, version, inputSchema: schema, description: description ?? null, createdMs: this.clock.now() };
  }
}

function label(workflow: Pick<Workflow, "name" | "version">): string {
  return `${workflow.name}@${workflow.version}`;
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

/**
 * The fix for a name given as `Name@version`, the form lists print (`schedule list`, `orbit
 * workers`): a workflow name cannot hold `@`, so it is the name and a version run together.
 */
/**
 * NOT_FOUND's message for a workflow (or version) no one registered, with what registers it: a
 * newcomer who created a schedule before starting a worker, or from the web UI, which registers
 * nothing, was told only that it is not registered.
 */
function notRegistered(name: string, version: string | null): string {
  if (version !== null) {
    return `workflow ${name}@${version} is not registered: start a worker that runs this version (a worker registers its workflows), or orbit workflow register ${name}@${version}`;
  }
  const hint = nameHint(name);
  if (hint !== "") return `workflow ${name} is not registered${hint}`;
  return `workflow ${name} is not registered: start a worker that runs it (a worker registers its workflows), or orbit workflow register ${name}@<version>`;
}

function nameHint(name: string): string {
  const at = name.lastIndexOf("@");
  if (at <= 0 || at === name.length - 1) return "";
  return `: give the name and the version apart (workflow "${name.slice(0, at)}", version "${name.slice(at + 1)}"; on the CLI --workflow ${name.slice(0, at)} --version ${name.slice(at + 1)})`;
}

/**
 * Runs a version's validator. A schema registered before its checks were bounded (docs/security.md
 * § Input schemas) may still overflow the stack on some input: that is a refused start, named,
 * not a 500 (and a schedule's refused start is retried and dead-lettered like any other).
 */
function checkedBy(validate: InputValidator, input: JsonObject, workflow: Workflow): boolean {
  try {
    return checkWithinBudget(validate, input, label(workflow));
  } catch (error) {
    // A stack overflow (RangeError), or one in V8's parse of a pattern a stored version holds (SyntaxError).
    if (!(error instanceof RangeError) && !(error instanceof SyntaxError)) throw error;
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `input_schema of ${label(workflow)} could not check the input (${error.message.slice(0, 200)}): register a version whose schema ${error instanceof SyntaxError ? "has shorter patterns" : "does not refer back to itself"}`,
    );
  }
}
