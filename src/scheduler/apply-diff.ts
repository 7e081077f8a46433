/**
 * What `orbit schedule apply` would change on one schedule (docs/cli.md § orbit schedule apply):
 * the file's settings, and the ones it leaves out back to their defaults (but the timing, the pause
 * and the labels); defaults count as equal to an absent setting,
 * object key order does not count, and `start_at` / `end_at` are compared as instants. Pure.
 */
import type { JsonValue } from "../domain/json.js";
import type { Labels } from "./labels.js";
import { notifyTargets } from "./outcomes.js";

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

/**
 * Settings a file that leaves them out does not reset: the schedule's identity and timing (a file
 * always gives one; switching cron ⇄ interval clears the other), its pause (run-time state that
 * `orbit schedule pause` and `resume` own, as an autoscaler owns a Deployment's replicas under
 * `kubectl apply`), and its labels (stamped by the apply set: scopedLabels).
 */
const KEPT_WHEN_LEFT_OUT: ReadonlySet<string> = new Set([
  "schedule_id",
  "workflow",
  "cron",
  "interval",
  "paused",
  "pause_note",
  "labels",
]);

/**
 * The settings of `entry` whose value differs from `current` (the stored settings), in entry order;
 * then, with `settingKeys`, each stored setting the entry leaves out (but {@link KEPT_WHEN_LEFT_OUT})
 * that is not at its default, changed to unset: the schedule ends as the file says (a timezone
 * taken out of the file went back to UTC on the server, not stayed Europe/Berlin).
 */
export function changedSettings(
  entry: Readonly<Record<string, unknown>>,
  current: Readonly<Record<string, unknown>>,
  settingKeys: readonly string[] = [],
): SettingChange[] {
  const changes: SettingChange[] = [];
  for (const [setting, wanted] of Object.entries(entry)) {
    if (setting === "schedule_id") continue;
    const have = (current[setting] ?? DEFAULTS[setting] ?? null) as JsonValue;
    const want = (wanted ?? DEFAULTS[setting] ?? null) as JsonValue;
    if (!sameSetting(setting, want, have)) changes.push({ setting, from: have, to: (wanted ?? null) as JsonValue });
  }
  // A switch between cron and interval clears the other (settings.ts applyPatch): said as a change.
  for (const [given, cleared] of [
    ["cron", "interval"],
    ["interval", "cron"],
  ] as const) {
    if (settingKeys.length === 0 || entry[given] == null || entry[cleared] != null) continue;
    const have = current[cleared];
    if (have !== undefined && have !== null) changes.push({ setting: cleared, from: have as JsonValue, to: null });
  }
  for (const setting of settingKeys) {
    if (setting in entry || KEPT_WHEN_LEFT_OUT.has(setting) || current[setting] === undefined) continue;
    const have = current[setting] as JsonValue;
    const unset = (DEFAULTS[setting] ?? null) as JsonValue;
    if (!sameSetting(setting, unset, have)) changes.push({ setting, from: have, to: unset });
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
  // `notify` may be a URL, one target or a list; stored, it is a list of targets: the shorthand
  // was reported "updated" on every apply of an unchanged file.
  if (key === "notify") {
    const targets = (v: JsonValue) => notifyTargets(v) as unknown as JsonValue;
    return canonicalJson(targets(want)) === canonicalJson(targets(have));
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
