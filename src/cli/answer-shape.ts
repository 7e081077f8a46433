/**
 * The fields a command prints, checked on the server's answer before printing: an Orbit-labelled
 * server answering `{}` printed `undefined undefined  undefined@undefined` and `elapsed: NaNdNaNh`
 * with exit 0 (`orbit status`), and a `schedules` page holding a nested array a blank row (a
 * tester). A missing field is a TypeError, which `run()` reports as an answer of another shape
 * (exit 1, one line), as a page without its list already was.
 */

const KINDS = {
  text: (v: unknown) => typeof v === "string",
  "text or null": (v: unknown) => typeof v === "string" || v === null,
  number: (v: unknown) => typeof v === "number",
  boolean: (v: unknown) => typeof v === "boolean",
  list: (v: unknown) => Array.isArray(v),
} as const;

export type FieldKind = keyof typeof KINDS;

/** `value`, if it is a JSON object with each of `fields` of its kind; else a TypeError naming the first that is not. */
export function checked<T>(value: T, what: string, fields: Readonly<Record<string, FieldKind>>): T {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new TypeError(`${what} is not a JSON object`);
  }
  for (const [name, kind] of Object.entries(fields)) {
    if (!KINDS[kind]((value as Record<string, unknown>)[name])) throw new TypeError(`${what} has no ${name} (${kind})`);
  }
  return value;
}

/** What `orbit status`, `ps`, `start`, `cancel` and `retry` print of an execution. */
export const EXECUTION_FIELDS = {
  execution_id: "text",
  workflow: "text",
  version: "text",
  status: "text",
  schedule_id: "text or null",
  created_at: "text",
  started_at: "text or null",
  ended_at: "text or null",
} as const satisfies Record<string, FieldKind>;

/** What `orbit schedule list`, `pause` and `resume` print of a schedule. */
export const SCHEDULE_FIELDS = {
  schedule_id: "text",
  workflow: "text",
  state: "text",
  next_fire_at: "text or null",
} as const satisfies Record<string, FieldKind>;

/** What `orbit schedule get`, `create` and `update` print of a schedule (its block). */
export const SCHEDULE_BLOCK_FIELDS = {
  ...SCHEDULE_FIELDS,
  overlap: "text",
  catchup: "text",
  fired: "number",
  skipped: "number",
  last_fire_at: "text or null",
  last_execution_id: "text or null",
  last_error: "text or null",
  dead_letters: "list",
  next_fire_times: "list",
} as const satisfies Record<string, FieldKind>;

/** What `orbit events` prints of an event. */
export const EVENT_FIELDS = { seq: "number", at: "text", type: "text" } as const satisfies Record<string, FieldKind>;

/** What `orbit workers` prints of a worker. */
export const WORKER_FIELDS = {
  worker_id: "text",
  status: "text",
  last_seen_at: "text",
  running_tasks: "number",
  workflows: "list",
} as const satisfies Record<string, FieldKind>;

/** What `orbit schedule occurrences` prints of a ledger row. */
export const OCCURRENCE_FIELDS = { recorded_at: "text", kind: "text" } as const satisfies Record<string, FieldKind>;

/** What `orbit workflow list`, `register` and `deprecate` print of a workflow version. */
export const WORKFLOW_FIELDS = { name: "text", version: "text" } as const satisfies Record<string, FieldKind>;

/** What `orbit schedule apply` prints of its result (its steps are checked one by one). */
export const APPLY_FIELDS = {
  dry_run: "boolean",
  created: "number",
  updated: "number",
  unchanged: "number",
  deleted: "number",
} as const satisfies Record<string, FieldKind>;

/** What `orbit schedule apply` prints of a step. */
export const APPLY_STEP_FIELDS = { action: "text", schedule_id: "text" } as const satisfies Record<string, FieldKind>;
