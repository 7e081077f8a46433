/**
 * The plan of `orbit schedule apply` (declarative schedules): read a file of schedules, compare it
 * with the server's, and say what to create, update, leave alone and (with --prune) delete.
 * Pure: no I/O, so the rules are tested on their own.
 */
import { isLosslessNumber } from "lossless-json";
import { parse } from "yaml";
import type { ScheduleJson, ScheduleSettingsBody } from "../client/types.js";
import { OrbitError } from "../domain/errors.js";
import type { JsonValue } from "../domain/json.js";

export type ApplyAction = "create" | "update" | "unchanged" | "delete";

export interface ApplyStep {
  action: ApplyAction;
  id: string;
  /** create: the whole entry; update: only the settings that differ; else empty. */
  body: ScheduleSettingsBody;
  /** update: the server's value of each changed setting (for the diff). */
  from?: ScheduleSettingsBody;
}

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

/** What a schedule reads as when a setting is absent from the server's JSON. */
const DEFAULTS: Readonly<Record<string, JsonValue>> = {
  input: {},
  timezone: "UTC",
  dst: "once",
  overlap: "skip",
  catchup: "skip_missed",
  paused: false,
};

/** The settings of `entry` whose value differs from the server's (only the keys the file gives). */
export function changedSettings(entry: ScheduleSettingsBody, current: ScheduleJson): ScheduleSettingsBody {
  const server = current as unknown as Record<string, JsonValue | undefined>;
  const changed: ScheduleSettingsBody = {};
  for (const [key, wanted] of Object.entries(entry)) {
    if (key === "schedule_id") continue;
    const have = server[key] ?? DEFAULTS[key] ?? null;
    const want = wanted ?? DEFAULTS[key] ?? null;
    if (!sameSetting(key, want, have)) changed[key] = wanted;
  }
  return changed;
}

function sameSetting(key: string, want: JsonValue, have: JsonValue): boolean {
  if ((key === "start_at" || key === "end_at") && typeof want === "string" && typeof have === "string") {
    return Date.parse(want) === Date.parse(have);
  }
  return canonical(want) === canonical(have);
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

/** The steps, in file order, then the deletions (by id) when pruning. */
export function planApply(
  entries: readonly ScheduleSettingsBody[],
  server: readonly ScheduleJson[],
  prune: boolean,
): ApplyStep[] {
  const byId = new Map(server.map((s) => [s.schedule_id, s]));
  const steps: ApplyStep[] = entries.map((entry) => {
    const id = entry.schedule_id as string;
    const current = byId.get(id);
    if (current === undefined) return { action: "create", id, body: entry };
    const changed = changedSettings(entry, current);
    if (Object.keys(changed).length === 0) return { action: "unchanged", id, body: {} };
    const server = current as unknown as Record<string, JsonValue | undefined>;
    const from: ScheduleSettingsBody = {};
    for (const key of Object.keys(changed)) from[key] = server[key] ?? DEFAULTS[key] ?? null;
    return { action: "update", id, body: changed, from };
  });
  if (prune) {
    const named = new Set(entries.map((e) => e.schedule_id as string));
    const gone = server.filter((s) => !named.has(s.schedule_id)).map((s) => s.schedule_id);
    for (const id of gone.sort()) steps.push({ action: "delete", id, body: {} });
  }
  return steps;
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
export function stepLine(step: ApplyStep, dryRun: boolean): string {
  let text = `${(dryRun ? WOULD : PAST)[step.action]} ${step.id}\n`;
  if (step.action === "update") {
    for (const [key, to] of Object.entries(step.body)) {
      const from = step.from?.[key] ?? null;
      text += `  ${key}: ${canonical(from as JsonValue)} → ${canonical((to ?? null) as JsonValue)}\n`;
    }
  }
  return text;
}

/** `1 created, 0 updated, 1 unchanged, 0 deleted` (a dry run says so first). */
export function summaryLine(steps: readonly ApplyStep[], dryRun: boolean): string {
  const n = (a: ApplyAction): number => steps.filter((s) => s.action === a).length;
  const counts = `${n("create")} created, ${n("update")} updated, ${n("unchanged")} unchanged, ${n("delete")} deleted`;
  return dryRun ? `dry run, nothing changed: ${counts}\n` : `${counts}\n`;
}

function isObject(value: unknown): value is Record<string, JsonValue> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
