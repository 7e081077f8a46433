/**
 * What the worker writes of a task: its lines carry the task's ids, and a line never fails the run,
 * whatever its fields hold (docs/workflows.md § ctx).
 */
import { isInstance, safely, thrownText } from "../domain/error-text.js";
import type { TaskJson } from "../domain/worker-protocol.js";
import type { WorkflowLogger } from "./workflow.js";

/** `log` with the task's execution_id, workflow, task_id and schedule_id on every line. */
export function withTaskIds(log: WorkflowLogger, task: TaskJson): WorkflowLogger {
  const ids = {
    execution_id: task.execution_id,
    workflow: `${task.workflow}@${task.version}`,
    task_id: task.task_id,
    ...(task.schedule_id !== null ? { schedule_id: task.schedule_id } : {}),
  };
  // Fields as given (a plain object), else under `fields`: `ctx.log.info("x", "y")` is not spread.
  const bind = (fields: unknown): Record<string, unknown> => {
    if (fields === undefined) return { ...ids };
    // Spreading a revoked Proxy throws: then it is given as one unreadable value, the ids kept.
    const spread = isInstance(fields, Object) && !Array.isArray(fields) ? safely(() => ({ ...fields })) : null;
    return typeof spread === "object" && spread !== null ? { ...ids, ...spread } : { ...ids, fields };
  };
  // The message as text whatever it is (a revoked Proxy's String() threw, and the line was lost).
  const text = (message: unknown): string => (typeof message === "string" ? message : thrownText(message));
  // A log line never fails the run: a logger that cannot write these fields (a BigInt, a cycle)
  // gets them as text instead, and a logger that still throws loses the line, not the execution.
  const guarded =
    (write: (message: string, fields: Record<string, unknown>) => void) =>
    (message: string, fields?: Record<string, unknown>): void => {
      try {
        write(text(message), bind(fields));
      } catch {
        try {
          write(text(message), { ...ids, fields: jsonText(fields) });
        } catch {
          // nothing left to try
        }
      }
    };
  return {
    info: guarded((m, f) => log.info(m, f)),
    warn: guarded((m, f) => log.warn(m, f)),
    error: guarded((m, f) => log.error(m, f)),
  };
}

/**
 * `value` as JSON text whatever it holds: a BigInt as its digits, a repeated object as
 * "[Circular]", an object that cannot be read (a revoked Proxy, throwing traps) as what it is, the
 * rest of the value kept (one such field made the whole line "[object Object]", ids included).
 */
export function jsonText(value: unknown): string {
  return jsonWith(value, false) ?? jsonWith(value, true) ?? thrownText(value);
}

function jsonWith(value: unknown, probe: boolean): string | null {
  const seen = new WeakSet<object>();
  try {
    return (
      JSON.stringify(value, (_key, v: unknown) => {
        if (typeof v === "bigint") return v.toString();
        if (typeof v === "object" && v !== null) {
          if (seen.has(v)) return "[Circular]";
          seen.add(v);
          // Only once the plain pass failed: JSON asks a value for its toJSON before this replacer
          // sees it, so an unreadable value is replaced here, by its parent.
          if (probe) return readableCopy(v);
        }
        return v;
      }) ?? thrownText(value)
    );
  } catch {
    return null;
  }
}

/** `v` with each of its values that cannot be read replaced by what it is. */
function readableCopy(v: object): unknown {
  const keep = (child: unknown): unknown =>
    typeof child === "object" && child !== null && !readable(child) ? thrownText(child) : child;
  if (Array.isArray(v)) return v.map(keep);
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(v)) copy[key] = keep((v as Record<string, unknown>)[key]);
  return copy;
}

/** Whether JSON.stringify can read `v`'s own properties and toJSON without a trap throwing. */
function readable(v: object): boolean {
  try {
    for (const key of Object.keys(v)) void (v as Record<string, unknown>)[key];
    void (v as { toJSON?: unknown }).toJSON;
    return true;
  } catch {
    return false;
  }
}
