/**
 * Validation of schedule settings (docs/design.md § Settings) at create and update: unknown keys refused with a
 * suggestion, every value checked, the timing compiled. Everything here is pure; the workflow's
 * existence and the input's schema are checked by the engine.
 */
import { invalidArgument, invalidSchedule, OrbitError } from "../domain/errors.js";
import { isJsonObject, type JsonObject } from "../domain/json.js";
import { own } from "../domain/own.js";
import {
  CATCHUP_POLICIES,
  type CatchupPolicy,
  OVERLAP_POLICIES,
  type OverlapPolicy,
  type ScheduleSettings,
  WHOLE_SETTING_RANGES,
} from "../domain/schedule.js";
import { SCHEDULE_DEFAULTS, SETTING_ALIASES, SETTING_KEYS } from "../domain/setting-table.js";
import { suggestKey } from "../domain/suggest.js";
import { validateOutcomeSettings, wholeNumber } from "../engine/outcome-settings.js";
import { invalidWorkflowName, isWorkflowVersion, notSemver } from "../engine/workflows.js";
import { durationText } from "../time/describe.js";
import { formatInstant, parseInstant } from "../time/format.js";
import { parseDuration } from "../time/interval.js";
import { type CompiledTiming, compileTiming, refuseBlankTiming, refuseLongTiming } from "../time/schedule-timing.js";
import { Zone } from "../time/zone.js";
import { VALUE_ALIASES } from "./aliases.js";
import { shortestCronGap } from "./cron-gap.js";
import { validateLabels } from "./labels.js";

export { SETTING_KEYS } from "../domain/setting-table.js";

export const SCHEDULE_ID = /^[A-Za-z0-9_.-]{1,100}$/;
export const CONCURRENCY_KEY = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const SECRET_PREFIXES = ["env://", "vault://", "secret://", "var://"];
/** A secret reference inside a template: after `{`, `(` or `$` and any blanks. */
const IN_TEMPLATE = /[{($]\s*((?:env|vault|secret|var):\/\/)/;
const MAX_DESCRIPTION = 1000;
const MIN_WINDOW_MS = 10_000;
const MAX_WINDOW_MS = 365 * 86_400_000;
/** The longest jitter: a day. A longer delay is a different schedule, not jitter. */
const MAX_JITTER_MS = 86_400_000;

/** Refuses keys that are not settings, naming the closest known key when one is near. */
export function refuseUnknownKeys(body: Record<string, unknown>, allowed: readonly string[]): void {
  for (const key of Object.keys(body)) {
    if (allowed.includes(key)) continue;
    const hint = suggestKey(key, allowed, SETTING_ALIASES);
    throw invalidArgument(`unknown setting "${key}"${hint === null ? "" : `; did you mean "${hint}"?`}`);
  }
}

function str(body: Record<string, unknown>, key: string): string | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw invalidArgument(`${key} must be a string`);
  return v;
}

function oneOf<T extends string>(body: Record<string, unknown>, key: string, values: readonly T[]): T | undefined {
  const v = str(body, key);
  if (v === undefined) return undefined;
  if (!(values as readonly string[]).includes(v)) {
    const hint = own(own(VALUE_ALIASES, key) ?? {}, v.toLowerCase()) ?? suggestKey(v, values);
    throw invalidArgument(
      `${key} "${v}" is not one of ${values.join(", ")}${hint === null ? "" : `; did you mean "${hint}"?`}`,
    );
  }
  return v as T;
}

/** A duration setting that is not the timing (catchup_window, jitter): every refusal is INVALID_ARGUMENT. */
function durationSetting(text: string, what: string): number {
  try {
    return parseDuration(text, what);
  } catch (err) {
    if (err instanceof OrbitError) throw invalidArgument(err.message);
    throw err;
  }
}

/** Refuses secret references anywhere in a schedule's input (it is stored verbatim on every execution). */
export function refuseSecretReferences(value: unknown, path = "input"): void {
  const found = secretReferenceIn(value);
  if (found === null) return;
  throw invalidArgument(
    `${path}${found.at} holds a secret reference ("${found.prefix}…"): secrets are refused in schedule input, which is stored verbatim on every execution; read the secret inside the workflow`,
  );
}

/**
 * The first secret reference in `value` and where it is (a suffix of the input's path), or null.
 * The path is built only for the one found: a 1 MB input of 300,000 elements built as many path
 * texts, a third of the time its create held the server.
 */
function secretReferenceIn(value: unknown): { at: string; prefix: string } | null {
  if (typeof value === "string") {
    const prefix = secretPrefix(value);
    return prefix === undefined ? null : { at: "", prefix };
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = secretReferenceIn(value[i]);
      if (found !== null) return { at: `[${i}]${found.at}`, prefix: found.prefix };
    }
  } else if (isJsonObject(value)) {
    for (const k of Object.keys(value)) {
      // Keys are strings of the input too.
      const prefix = secretPrefix(k);
      if (prefix !== undefined) return { at: ` key "${k}"`, prefix };
      const found = secretReferenceIn(value[k]);
      if (found !== null) return { at: `.${k}${found.at}`, prefix: found.prefix };
    }
  }
  return null;
}

/** A character outside ASCII: a text without one and without "://" holds no reference even after NFKC. */
const NON_ASCII = /[\u0080-\uffff]/;

function secretPrefix(value: string): string | undefined {
  if (!value.includes("://") && !NON_ASCII.test(value)) return undefined;
  // Any case or width (NFKC), after any blanks or invisible characters: "ENV://X" is as much a
  // reference as "env://X"; and inside a template ("${env://HOME}", "${ env://HOME}", "{{env://X}}",
  // "$(env://X)", "$env://X"), which Orbit does not fill in either (they were taken, a tester). A
  // scheme mentioned in a text ("see env://X") is left alone.
  const text = value
    .normalize("NFKC")
    .toLowerCase()
    .replace(/^[\s\p{Cf}]+/u, "");
  return SECRET_PREFIXES.find((p) => text.startsWith(p)) ?? (IN_TEMPLATE.exec(text)?.[1] as string | undefined);
}

export interface ValidatedSchedule {
  settings: ScheduleSettings;
  timing: CompiledTiming;
  startAtMs: number | null;
  endAtMs: number | null;
  jitterMs: number;
  catchupWindowMs: number | null;
}

/**
 * Validates a complete settings object (a create body, or an existing schedule merged with a patch)
 * and compiles its timing. `now` is used for the "never fires in the next five years" check.
 */
/**
 * `compile` lets a caller validating many schedules at once (Schedules.createMany) share one compiled
 * timing between identical settings; default compileTiming.
 */
export function validateSettings(
  body: Record<string, unknown>,
  now: number,
  compile: typeof compileTiming = compileTiming,
): ValidatedSchedule {
  refuseUnknownKeys(body, SETTING_KEYS);
  const scheduleId = str(body, "schedule_id");
  if (scheduleId === undefined) throw invalidArgument("schedule_id is required");
  if (!SCHEDULE_ID.test(scheduleId)) {
    throw invalidArgument(`schedule_id "${scheduleId}" is invalid: use 1 to 100 letters, digits, "-", "_" or "."`);
  }
  // "." and ".." are path segments of their own: /v1/schedules/.. would never reach the schedule.
  if (scheduleId === "." || scheduleId === "..") {
    throw invalidArgument(`schedule_id "${scheduleId}" is invalid: it must not be "." or ".."`);
  }
  const workflow = str(body, "workflow");
  if (workflow === undefined || workflow === "") throw invalidArgument("workflow is required");
  const badName = invalidWorkflowName(workflow);
  if (badName !== null) throw invalidArgument(badName);
  const version = str(body, "version");
  // Workflow versions are registered as semver only: another pin could never start (it was answered 404).
  if (version !== undefined && !isWorkflowVersion(version)) {
    throw invalidArgument(
      `version ${JSON.stringify(version)} ${notSemver(version)}: pin a registered version, or leave version out for the latest`,
    );
  }
  const input = body.input ?? {};
  if (!isJsonObject(input)) throw invalidArgument("input must be a JSON object");
  refuseSecretReferences(input);

  const overlap: OverlapPolicy = oneOf(body, "overlap", OVERLAP_POLICIES) ?? SCHEDULE_DEFAULTS.overlap;
  const catchup: CatchupPolicy = oneOf(body, "catchup", CATCHUP_POLICIES) ?? SCHEDULE_DEFAULTS.catchup;
  const concurrencyKey = str(body, "concurrency_key");
  if (concurrencyKey !== undefined && !CONCURRENCY_KEY.test(concurrencyKey)) {
    throw invalidArgument(
      `concurrency_key "${concurrencyKey}" is invalid: start with a letter or digit, then up to 127 letters, digits, "_", "." or "-"`,
    );
  }
  const maxCatchUp = body.max_catch_up;
  if (maxCatchUp !== undefined && maxCatchUp !== null) {
    if (catchup !== "catch_up") throw invalidArgument('max_catch_up is only allowed with catchup "catch_up"');
    wholeNumber(maxCatchUp, "max_catch_up");
  } else if (catchup === "catch_up") {
    const [min, max] = WHOLE_SETTING_RANGES.max_catch_up;
    throw invalidArgument(
      `catchup "catch_up" needs max_catch_up (${min} to ${max}): how many missed occurrences may start`,
    );
  }
  const windowText = str(body, "catchup_window");
  const catchupWindowMs = windowText === undefined ? null : durationSetting(windowText, "catchup_window");
  if (catchupWindowMs !== null && (catchupWindowMs < MIN_WINDOW_MS || catchupWindowMs > MAX_WINDOW_MS)) {
    throw invalidArgument(`catchup_window "${windowText}" must be between 10s and 365d`);
  }
  const jitterText = str(body, "jitter");
  const jitterMs = jitterText === undefined ? 0 : durationSetting(jitterText, "jitter");
  if (jitterText !== undefined && (jitterMs < 1 || jitterMs > MAX_JITTER_MS)) {
    throw invalidArgument(`jitter "${jitterText}" must be between 1ms and 1d`);
  }
  const startAt = str(body, "start_at");
  const endAt = str(body, "end_at");
  const startAtMs = startAt === undefined ? null : parseInstant(startAt, "start_at", "up");
  const endAtMs = endAt === undefined ? null : parseInstant(endAt, "end_at");
  const paused = body.paused ?? false;
  if (typeof paused !== "boolean") throw invalidArgument("paused must be true or false");
  const pauseNote = str(body, "pause_note");
  const description = str(body, "description");
  for (const [name, text] of [
    ["description", description],
    ["pause_note", pauseNote],
  ] as const) {
    // Characters as a person counts them (code points): an emoji is one, not two UTF-16 units.
    const length = text === undefined || text.length <= MAX_DESCRIPTION ? 0 : [...text].length;
    if (length > MAX_DESCRIPTION) {
      throw invalidArgument(`${name} is ${length} characters long; the most is ${MAX_DESCRIPTION}`);
    }
  }

  const outcomeSettings = validateOutcomeSettings(body);
  const labels = validateLabels(body.labels);

  const cron = str(body, "cron");
  const interval = str(body, "interval");
  const timezone = str(body, "timezone");
  const dst = str(body, "dst");
  // A 1 MB cron was stored and sent back with every read of the schedule.
  refuseLongTiming({ cron, interval, timezone, dst });
  refuseBlankTiming(cron, interval);
  if (cron === undefined && interval === undefined) throw invalidSchedule("a schedule needs a cron or an interval");
  const timing = compile({ cron, interval, timezone, dst, startAt: startAtMs, endAt: endAtMs }, now);
  if (jitterMs > 0) {
    // From the first occurrence's side of now: with a start_at years ahead, a scan of the years
    // from now found no occurrence and let any jitter through.
    const from = Math.max(now, startAtMs ?? now);
    const gap = timing.intervalMs ?? shortestCronGap(timing, from, timezone === undefined ? null : Zone.of(timezone));
    if (gap !== null && jitterMs > gap) {
      // Due times would overtake the next occurrence's, and the firing order is the occurrences'
      // (docs/design.md § Jitter). Temporal caps such a jitter silently; we say so.
      throw invalidArgument(
        `jitter "${jitterText}" is longer than the shortest time between two occurrences (${countedDuration(gap)}): an occurrence would come due after the next one; use a jitter of at most that`,
      );
    }
  }

  const settings: ScheduleSettings = {
    schedule_id: scheduleId,
    workflow,
    input: input as JsonObject,
    overlap,
    catchup,
    paused,
  };
  const optional: Array<[keyof ScheduleSettings, unknown]> = [
    ["version", version],
    ["cron", cron],
    ["interval", interval],
    ["timezone", timezone],
    ["dst", dst],
    ["concurrency_key", concurrencyKey],
    ["max_catch_up", maxCatchUp ?? undefined],
    ["catchup_window", windowText],
    // Kept and shown in UTC like every other time of the API, whatever offset they came with.
    ["start_at", startAtMs === null ? undefined : formatInstant(startAtMs)],
    ["end_at", endAtMs === null ? undefined : formatInstant(endAtMs)],
    ["jitter", jitterText],
    ["pause_note", pauseNote],
    ["description", description],
    ["labels", labels],
  ];
  for (const [key, value] of optional)
    if (value !== undefined) (settings as unknown as Record<string, unknown>)[key] = value;
  Object.assign(settings, outcomeSettings);
  return { settings, timing, startAtMs, endAtMs, jitterMs, catchupWindowMs };
}

/**
 * An update (PATCH) merged onto the current settings: `null` unsets an optional setting; giving
 * `cron` drops `interval` and vice versa (with timezone and dst, which only cron takes).
 */
export function mergeSettings(current: ScheduleSettings, patch: Record<string, unknown>): Record<string, unknown> {
  if ("schedule_id" in patch && patch.schedule_id !== current.schedule_id) {
    throw invalidArgument("schedule_id cannot be changed: create a schedule with the new id and delete this one");
  }
  const { schedule_id: _same, ...rest } = patch;
  patch = rest;
  refuseUnknownKeys(
    patch,
    SETTING_KEYS.filter((k) => k !== "schedule_id"),
  );
  for (const key of ["cron", "interval"] as const) {
    const other = key === "cron" ? "interval" : "cron";
    // Unsetting the timing leaves none: say which way to change it instead.
    if (patch[key] === null && current[key] !== undefined && (patch[other] === undefined || patch[other] === null)) {
      throw invalidSchedule(
        `${key} cannot be unset on its own: a schedule needs a cron or an interval; give ${other} to switch to it`,
      );
    }
  }
  const merged: Record<string, unknown> = { ...current };
  if (patch.cron !== undefined && patch.cron !== null) delete merged.interval;
  if (patch.interval !== undefined && patch.interval !== null) {
    delete merged.cron;
    delete merged.timezone;
    delete merged.dst;
  }
  if (patch.catchup !== undefined && patch.catchup !== "catch_up" && patch.max_catch_up === undefined) {
    delete merged.max_catch_up;
  }
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

/** `1 hour`, `23 hours`, `1 hour and 30 minutes`: a duration as an amount (durationText says `hour`). */
function countedDuration(ms: number): string {
  const text = durationText(ms);
  return /^\d/.test(text) ? text : `1 ${text}`;
}
