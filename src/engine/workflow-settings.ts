/** Validation of a workflow's settings (docs/outcomes.md): run_timeout, start_timeout, notify. */
import { invalidArgument } from "../domain/errors.js";
import type { JsonObject } from "../domain/json.js";
import { timeoutMs, validateNotify } from "./outcome-settings.js";

const KEYS = ["run_timeout", "start_timeout", "notify"];

export function validateWorkflowSettings(body: Record<string, unknown>): JsonObject {
  for (const key of Object.keys(body)) {
    if (!KEYS.includes(key)) throw invalidArgument(`unknown workflow setting "${key}": use ${KEYS.join(", ")}`);
  }
  const out: JsonObject = {};
  for (const key of ["run_timeout", "start_timeout"] as const) {
    if (timeoutMs(body[key], key) !== undefined) out[key] = body[key] as string;
  }
  const notify = validateNotify(body.notify);
  if (notify !== undefined) out.notify = notify;
  return out;
}
