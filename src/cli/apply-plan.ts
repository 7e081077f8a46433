/**
 * The file and the output of `orbit schedule apply` (declarative schedules, docs/cli.md): read a
 * file of schedules, and print the server's answer (what it created, updated, left alone and
 * pruned). The plan itself is made and carried out by the server in one transaction
 * (POST /v1/schedules/apply). Pure: no I/O.
 */
import { isLosslessNumber } from "lossless-json";
import { parse } from "yaml";
import type { ApplyAction, ApplyResultJson, ApplyStepJson, ScheduleSettingsBody } from "../client/types.js";
import { OrbitError } from "../domain/errors.js";
import type { JsonValue } from "../domain/json.js";

const refuse = (file: string, message: string): OrbitError => new OrbitError("INVALID_ARGUMENT", `${file}: ${message}`);

/** A YAML or JSON file: a list of schedule objects, or `{schedules: [...]}`. */
export function parseScheduleFile(text: string, file: string): ScheduleSettingsBody[] {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw refuse(file, `not YAML or JSON: ${(err as Error).message.split("\n")[0]}`);
  }
  if (isObject(doc)) {
    const extra = Object.keys(doc).filter((k) => k !== "schedules");
    if (extra.length > 0) throw refuse(file, `unknown top-level key "${extra[0]}"; the file holds {schedules: [...]}`);
    doc = doc.schedules;
  }
  if (!Array.isArray(doc)) throw refuse(file, "give a list of schedules, or {schedules: [...]}");
  const seen = new Set<string>();
  return doc.map((entry: unknown, i) => {
    if (!isObject(entry)) throw refuse(file, `schedule ${i + 1} is not an object`);
    const id = entry.schedule_id;
    if (typeof id !== "string" || id === "") throw refuse(file, `schedule ${i + 1} has no schedule_id`);
    if (seen.has(id)) throw refuse(file, `schedule_id "${id}" appears twice`);
    seen.add(id);
    return entry as ScheduleSettingsBody;
  });
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
  if (owner !== undefined) scope["orbit/owner"] = owner;
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
  let text = `${(dryRun ? WOULD : PAST)[step.action]} ${step.schedule_id}\n`;
  for (const c of step.changes ?? []) text += `  ${c.setting}: ${canonical(c.from)} → ${canonical(c.to)}\n`;
  return text;
}

/** `1 created, 0 updated, 1 unchanged, 0 deleted` (a dry run says so first). */
export function summaryLine(r: ApplyResultJson): string {
  const counts = `${r.created} created, ${r.updated} updated, ${r.unchanged} unchanged, ${r.deleted} deleted`;
  return r.dry_run ? `dry run, nothing changed: ${counts}\n` : `${counts}\n`;
}

function isObject(value: unknown): value is Record<string, JsonValue> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
