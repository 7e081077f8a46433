/**
 * Validation of the outcome settings (docs/outcomes.md) of a schedule and of a workflow:
 * run_timeout, start_timeout, pause_on_failure, max_runs and notify.
 */

import { isBlockedAddress } from "../domain/blocked-address.js";
import { invalidArgument, OrbitError } from "../domain/errors.js";
import { isJsonObject } from "../domain/json.js";
import { NOTIFY_EVENTS, type ScheduleSettings, WHOLE_SETTING_RANGES } from "../domain/schedule.js";
import { parseDuration } from "../time/interval.js";

export { NOTIFY_EVENTS, type NotifyEvent } from "../domain/schedule.js";

const MIN_TIMEOUT_MS = 1000;
const MAX_TIMEOUT_MS = 365 * 86_400_000;
const MAX_TARGETS = 5;
const MAX_URL = 2000;

export type OutcomeSettings = Pick<
  ScheduleSettings,
  "run_timeout" | "start_timeout" | "pause_on_failure" | "max_runs" | "notify"
>;

/** A timeout duration (1s-365d) in milliseconds; undefined when absent. */
export function timeoutMs(value: unknown, key: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw invalidArgument(`${key} must be a duration such as 30s, 15m or 2h`);
  // A timeout is not the schedule's timing: every refusal of it is INVALID_ARGUMENT (docs/errors.md).
  let ms: number;
  try {
    ms = parseDuration(value, key);
  } catch (err) {
    if (err instanceof OrbitError) throw invalidArgument(err.message);
    throw err;
  }
  if (ms < MIN_TIMEOUT_MS || ms > MAX_TIMEOUT_MS)
    throw invalidArgument(`${key} "${value}" must be between 1s and 365d`);
  return ms;
}

export function wholeNumber(value: unknown, key: keyof typeof WHOLE_SETTING_RANGES): number | undefined {
  if (value === undefined || value === null) return undefined;
  const [min, max] = WHOLE_SETTING_RANGES[key];
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw invalidArgument(`${key} must be a whole number from ${min} to ${max}`);
  }
  return value;
}

/** `notify`: a URL, `{url, events}`, or a list of those (at most 5), as a list of targets. */
export function validateNotify(value: unknown, key = "notify"): Array<{ url: string; events?: string[] }> | undefined {
  if (value === undefined || value === null) return undefined;
  const list = Array.isArray(value) ? value : [value];
  if (list.length > MAX_TARGETS) throw invalidArgument(`${key} takes at most ${MAX_TARGETS} webhooks`);
  return list.map((item, i) => {
    const where = Array.isArray(value) ? `${key}[${i}]` : key;
    const target = typeof item === "string" ? { url: item } : item;
    if (!isJsonObject(target)) throw invalidArgument(`${where} must be a URL or {"url": …, "events": […]}`);
    for (const k of Object.keys(target)) {
      if (k !== "url" && k !== "events") throw invalidArgument(`${where} has unknown key "${k}": use url and events`);
    }
    const url = target.url;
    // URL parsing drops a tab or a line break and trims spaces: "…/echo\r\nX-Injected: 1" was kept
    // as given and shown so, and sent to /echoX-Injected:%201 (a tester).
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
    if (typeof url === "string" && /[\u0000-\u0020\u007f]/.test(url)) {
      throw invalidArgument(
        `${where}.url holds a space or a control character (a line break, a tab), which URL parsing drops or rewrites: the webhook would go elsewhere than it shows; percent-encode it (%20, %0A)`,
      );
    }
    let parsed: URL | null = null;
    try {
      parsed = typeof url === "string" && url.length <= MAX_URL ? new URL(url) : null;
    } catch {
      parsed = null;
    }
    if (parsed === null || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
      throw invalidArgument(`${where}.url must be an http or https URL of at most ${MAX_URL} characters`);
    }
    if (isBlockedAddress(parsed.hostname)) {
      throw invalidArgument(
        `${where}.url points at ${parsed.hostname}, a link-local or cloud metadata address, which webhooks may not reach (docs/security.md § Webhooks)`,
      );
    }
    const out: { url: string; events?: string[] } = { url: url as string };
    if (target.events !== undefined && target.events !== null) {
      const events = target.events;
      if (
        !Array.isArray(events) ||
        events.some((e) => typeof e !== "string" || !(NOTIFY_EVENTS as readonly string[]).includes(e))
      ) {
        throw invalidArgument(`${where}.events must be a list of: ${NOTIFY_EVENTS.join(", ")}`);
      }
      out.events = events as string[];
    }
    return out;
  });
}

/** The outcome settings of a schedule body, validated; absent ones are left out. */
export function validateOutcomeSettings(body: Record<string, unknown>): OutcomeSettings {
  const out: OutcomeSettings = {};
  for (const key of ["run_timeout", "start_timeout"] as const) {
    if (timeoutMs(body[key], key) !== undefined) out[key] = body[key] as string;
  }
  const pause = wholeNumber(body.pause_on_failure, "pause_on_failure");
  if (pause !== undefined) out.pause_on_failure = pause;
  const maxRuns = wholeNumber(body.max_runs, "max_runs");
  if (maxRuns !== undefined) out.max_runs = maxRuns;
  const notify = validateNotify(body.notify);
  if (notify !== undefined) out.notify = notify;
  return out;
}
