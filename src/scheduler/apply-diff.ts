/**
 * What `orbit schedule apply` would change on one schedule (docs/cli.md § orbit schedule apply):
 * only the settings the file gives are compared, defaults count as equal to an absent setting,
 * object key order does not count, and `start_at` / `end_at` are compared as instants. Pure.
 */
import type { JsonValue } from "../domain/json.js";
import type { Labels } from "./labels.js";

/** What a stored schedule reads as when a setting is absent. */
const DEFAULTS: Readonly<Record<string, JsonValue>> = {
  input: {},
  timezone: "UTC",
  dst: "once",
  overlap: "skip",
  catchup: "skip_missed",
  paused: false,
  labels: {},
};

/** One changed setting: the stored value (or its default, or null) and the file's. */
export interface SettingChange {
  setting: string;
  from: JsonValue;
  to: JsonValue;
}

/** The settings of `entry` whose value differs from `current` (the stored settings), in entry order. */
export function changedSettings(
  entry: Readonly<Record<string, unknown>>,
  current: Readonly<Record<string, unknown>>,
): SettingChange[] {
  const changes: SettingChange[] = [];
  for (const [setting, wanted] of Object.entries(entry)) {
    if (setting === "schedule_id") continue;
    const have = (current[setting] ?? DEFAULTS[setting] ?? null) as JsonValue;
    const want = (wanted ?? DEFAULTS[setting] ?? null) as JsonValue;
    if (!sameSetting(setting, want, have)) changes.push({ setting, from: have, to: (wanted ?? null) as JsonValue });
  }
  return changes;
}

/**
 * The labels an entry is written with under an apply scope: the entry's own labels (or, when the
 * file gives none, the stored ones) with the scope's labels over them. Undefined when there is
 * neither a scope nor labels in the entry: the stored labels stay as they are.
 */
export function scopedLabels(
  entryLabels: unknown,
  stored: Labels | undefined,
  scope: Labels,
): Record<string, unknown> | undefined {
  const own = entryLabels === undefined ? undefined : ((entryLabels ?? {}) as Record<string, unknown>);
  if (Object.keys(scope).length === 0) return own;
  return { ...(own ?? stored ?? {}), ...scope };
}

function sameSetting(key: string, want: JsonValue, have: JsonValue): boolean {
  if ((key === "start_at" || key === "end_at") && typeof want === "string" && typeof have === "string") {
    return Date.parse(want) === Date.parse(have);
  }
  return canonicalJson(want) === canonicalJson(have);
}

/** JSON with object keys sorted, so key order does not count as a change. */
export function canonicalJson(value: JsonValue): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k] as JsonValue)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
