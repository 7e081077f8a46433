/**
 * The file and the output of `orbit schedule apply` (declarative schedules, docs/cli.md): read a
 * file of schedules, and print the server's answer (what it created, updated, left alone and
 * pruned). The plan itself is made and carried out by the server in one transaction
 * (POST /v1/schedules/apply). Pure: no I/O.
 */

import { createRequire } from "node:module";
import { isLosslessNumber } from "lossless-json";
import type {
  ApplyAction,
  ApplyResultJson,
  ApplyStepJson,
  RegisterWorkflowBody,
  ScheduleSettingsBody,
} from "../client/types.js";
import { OrbitError } from "../domain/errors.js";
import type { JsonValue } from "../domain/json.js";
import { parsePlainYaml } from "../domain/plain-yaml.js";
import { DEFAULT_APPLY_OWNER, OWNER_LABEL } from "../domain/schedule.js";
import { oneLine } from "./safe-text.js";

const refuse = (file: string, message: string): OrbitError => new OrbitError("INVALID_ARGUMENT", `${file}: ${message}`);

/** What an apply file declares: its schedules, and the workflows they may name (`kind: workflow`). */
export interface ApplyFile {
  schedules: ScheduleSettingsBody[];
  workflows: RegisterWorkflowBody[];
  /**
   * The file names its schedules, if none (`[]`, a `schedules` key): what `--prune` needs to delete
   * a set's every schedule. `{workflows: [...]}`, or a list of workflow entries alone, does not.
   */
  listsSchedules: boolean;
}

/**
 * A YAML or JSON file: a list of entries, or `{schedules: [...], workflows: [...]}`. An entry is a
 * schedule (`kind: schedule`, the default) or a workflow version to register (`kind: workflow`,
 * with `name`, `version`, optional `input_schema` and `description`).
 */
export function parseApplyFile(text: string, file: string): ApplyFile {
  let doc: unknown;
  try {
    doc = parsePlainYaml(text, { numbersAsWritten: true });
  } catch (err) {
    // Nesting past the stack (100,000 `[`) came out as "Maximum call stack size exceeded" (a tester).
    // The YAML parser reports it as its own error, with the RangeError's message.
    if (err instanceof RangeError || /Maximum call stack size exceeded/.test((err as Error).message)) {
      throw refuse(file, "not YAML or JSON: its lists or maps are nested too deeply");
    }
    throw refuse(file, `not YAML or JSON: ${(err as Error).message}`);
  }
  refuseNonFinite(doc, text, file);
  let entries: unknown[];
  let listsSchedules = true;
  if (isObject(doc)) {
    const extra = Object.keys(doc).filter((k) => k !== "schedules" && k !== "workflows");
    if (extra.length > 0) {
      throw refuse(file, `unknown top-level key "${extra[0]}"; the file holds {schedules: [...], workflows: [...]}`);
    }
    // `{}` said nothing, as an empty file says nothing: read as no schedules, with --prune it
    // deleted the set's every one (a tester). `schedules: []` says it.
    if (!("schedules" in doc) && !("workflows" in doc)) {
      throw refuse(file, "holds neither schedules nor workflows; give a list of schedules, or {schedules: [...]}");
    }
    listsSchedules = "schedules" in doc;
    const { schedules = [], workflows = [] } = doc;
    if (!Array.isArray(schedules) || !Array.isArray(workflows)) throw refuse(file, "schedules and workflows are lists");
    entries = [
      ...workflows.map((w) => (isObject(w) && w.kind === undefined ? { kind: "workflow", ...w } : w)),
      ...schedules,
    ];
  } else if (Array.isArray(doc)) entries = doc;
  else throw refuse(file, "give a list of schedules, or {schedules: [...]}");
  const out: ApplyFile = { schedules: [], workflows: [], listsSchedules };
  const seen = new Set<string>();
  for (const [i, entry] of entries.entries()) {
    if (!isObject(entry)) throw refuse(file, `entry ${i + 1} is not an object`);
    const { kind = "schedule", ...rest } = entry;
    if (kind === "workflow") {
      const { name, version } = rest;
      if (typeof name !== "string" || typeof version !== "string") {
        throw refuse(file, `entry ${i + 1} (kind: workflow) needs name and version`);
      }
      out.workflows.push(rest as unknown as RegisterWorkflowBody);
      continue;
    }
    if (kind !== "schedule")
      throw refuse(file, `entry ${i + 1} has kind ${JSON.stringify(kind)}: use schedule or workflow`);
    const id = rest.schedule_id;
    if (id === undefined || id === null || id === "")
      throw refuse(file, `schedule ${out.schedules.length + 1} has no schedule_id`);
    // `schedule_id: 123` reads as a number in YAML: say so, not that it is missing.
    if (typeof id !== "string") {
      const shown = isLosslessNumber(id) ? id.value : JSON.stringify(id);
      throw refuse(
        file,
        `schedule ${out.schedules.length + 1}'s schedule_id ${shown} is not a string; quote it ("${shown}")`,
      );
    }
    if (seen.has(id)) throw refuse(file, `schedule_id "${id}" appears twice`);
    seen.add(id);
    out.schedules.push(rest as ScheduleSettingsBody);
  }
  // A list of workflow entries alone names no schedule either (`[]` says "none").
  if (Array.isArray(doc) && out.schedules.length === 0 && out.workflows.length > 0) out.listsSchedules = false;
  return out;
}

/**
 * Refuses a number that is not finite: YAML's `.inf`, `-.inf` and `.nan` (or a JSON `1e400`, which
 * YAML reads as infinity). JSON has none, and the request turned them into `null` without a word;
 * the API refuses them in a body ("input/amount is not a finite number"). The message names the
 * key path and, when the YAML reader can place it, the line.
 */
function refuseNonFinite(doc: unknown, text: string, file: string): void {
  // Iterative: a deeply nested file must not overflow the stack here.
  const stack: Array<{ value: unknown; path: Array<string | number> }> = [{ value: doc, path: [] }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value === "number" && !Number.isFinite(value)) {
      const where = sourceOf(text, path);
      const written = where?.source ?? (Number.isNaN(value) ? ".nan" : value > 0 ? ".inf" : "-.inf");
      const at = where === undefined ? "" : ` at line ${where.line}, column ${where.col}`;
      throw refuse(file, `${pathText(path)} is not a finite number (${written})${at}; JSON has no infinity or NaN`);
    }
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: [...path, i] });
    } else if (typeof value === "object" && value !== null) {
      for (const key of Object.keys(value).reverse()) {
        stack.push({ value: (value as Record<string, unknown>)[key], path: [...path, key] });
      }
    }
  }
}

/** `schedules[0].input.amount` (`[0].input` in a top-level list; `["a b"]` for a key that is no name). */
function pathText(path: ReadonlyArray<string | number>): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(part)) out += out === "" ? part : `.${part}`;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out === "" ? "the file" : out;
}

/**
 * Where the value at `path` is written, as the YAML reader places it (1-based line and column) and
 * its text there; undefined when it cannot tell (a value merged in with `<<`).
 */
function sourceOf(
  text: string,
  path: ReadonlyArray<string | number>,
): { line: number; col: number; source: string } | undefined {
  try {
    // Loaded only here, for a file being refused (plain-yaml.ts loads it for every apply).
    const yaml = createRequire(import.meta.url)("yaml") as typeof import("yaml");
    const lines = new yaml.LineCounter();
    const node = yaml.parseDocument(text, { lineCounter: lines }).getIn(path, true) as
      | { range?: [number, number, number] }
      | undefined;
    if (node?.range === undefined) return undefined;
    const { line, col } = lines.linePos(node.range[0]);
    return { line, col, source: text.slice(node.range[0], node.range[1]).trim() };
  } catch {
    return undefined;
  }
}

/** `--owner` and `--selector` as the apply scope (the server validates names and values). */
export function applyScope(owner: string | undefined, selectors: readonly string[]): Record<string, string> {
  const scope: Record<string, string> = {};
  for (const text of selectors) {
    for (const part of text.split(",")) {
      const pair = part.trim();
      if (pair === "") continue;
      const eq = pair.indexOf("=");
      if (eq <= 0) throw new OrbitError("INVALID_ARGUMENT", `--selector "${pair}" is not key=value`);
      scope[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
    }
  }
  // `--owner ''` stamped an empty owner, a set no other apply names by mistake (a tester).
  if (owner !== undefined && owner.trim() === "") {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      "--owner is empty: give the apply set's name, or leave --owner out for the default set",
    );
  }
  if (owner !== undefined) scope[OWNER_LABEL] = owner;
  // Neither: the default set, so that `--prune` alone prunes what earlier applies made.
  if (Object.keys(scope).length === 0) scope[OWNER_LABEL] = DEFAULT_APPLY_OWNER;
  return scope;
}

/** JSON with object keys sorted, so key order does not count as a change. */
function canonical(value: JsonValue): string {
  if (isLosslessNumber(value)) return JSON.stringify(Number(value.value));
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k] as JsonValue)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

const PAST: Record<ApplyAction, string> = {
  create: "created",
  update: "updated",
  unchanged: "unchanged",
  delete: "deleted",
};
const WOULD: Record<ApplyAction, string> = {
  create: "would create",
  update: "would update",
  unchanged: "unchanged",
  delete: "would delete",
};

/**
 * `created nightly-orders`, or with a dry run `would create nightly-orders`; an update is followed
 * by its diff, one changed setting a line: `  timezone: "UTC" → "Europe/Paris"`.
 */
export function stepLine(step: ApplyStepJson, dryRun: boolean): string {
  const waiting = step.waiting === undefined ? "" : ` (waiting: ${step.waiting})`;
  // An action of a later release is shown as it came.
  const verb = (dryRun ? WOULD : PAST)[step.action] ?? String(step.action);
  let text = `${oneLine(`${verb} ${step.schedule_id}${waiting}`)}\n`;
  for (const c of step.changes ?? [])
    text += `${oneLine(`  ${c.setting}: ${canonical(c.from)} → ${canonical(c.to)}`)}\n`;
  return text;
}

/** `registered workflow Report@1.0.0`, `would register …`, or `unchanged workflow …`. */
export function workflowLine(w: ApplyResultJson["workflows"][number], dryRun: boolean): string {
  const verb = w.action === "unchanged" ? "unchanged" : dryRun ? "would register" : "registered";
  return `${oneLine(`${verb} workflow ${w.name}@${w.version}`)}\n`;
}

/**
 * `1 created, 0 updated, 1 unchanged, 0 deleted` (a dry run says so first; a file with workflows
 * adds how many were registered).
 */
export function summaryLine(r: ApplyResultJson): string {
  const registered = (r.workflows ?? []).filter((w) => w.action === "register").length;
  const workflows = (r.workflows ?? []).length > 0 ? `, ${registered} workflows registered` : "";
  const counts = `${r.created} created, ${r.updated} updated, ${r.unchanged} unchanged, ${r.deleted} deleted${workflows}`;
  return r.dry_run ? `dry run, nothing changed: ${counts}\n` : `${counts}\n`;
}

function isObject(value: unknown): value is Record<string, JsonValue> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !isLosslessNumber(value);
}
