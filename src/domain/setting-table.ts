/**
 * A schedule's settings, declared once (docs/design.md § Settings; how to add one: CONTRIBUTING.md).
 * Each entry gives the setting's JSON schema (type, constraints, description: the API validates
 * request bodies with it and /v1/openapi.json shows it), its default, whether an update may clear
 * it, and its `orbit schedule create/update` flag. Derived from this table, never listed again:
 * the accepted keys (an unknown one is refused with a suggestion), the API's create and patch
 * bodies, the CLI's flags and the body they build, `--unset`'s list, the defaults, and the checks
 * that docs/design.md and docs/cli.md name every setting (test/domain/setting-table.test.ts). The
 * stored settings type, ScheduleSettings (schedule.ts), must have exactly these keys: the
 * compiler checks it below. Rules between settings (max_catch_up only with catch_up, a cron or an
 * interval) and the meaning of values (a cron expression, a duration) are checked by
 * src/scheduler/settings.ts.
 */
import { CATCHUP_POLICIES, OVERLAP_POLICIES, type ScheduleSettings } from "./schedule.js";

/**
 * A setting's JSON schema, written as plain JSON: the CLI reads this table on every command, and
 * loading a schema builder for it cost each command about 130 ms (the API wraps these with
 * TypeBox where it builds its bodies, src/api/schemas.ts).
 */
export type SettingSchema = Readonly<Record<string, unknown>>;

const nullable = (type: string, description: string): SettingSchema => ({ type: [type, "null"], description });
const text = (description: string): SettingSchema => nullable("string", description);
const choice = (values: readonly string[], description: string): SettingSchema => ({
  type: ["string", "null"],
  enum: [...values, null],
  description,
});

/** How the CLI reads a flag's value. */
export type FlagValue = "text" | "whole" | "json-object" | "repeat" | "key-value" | "switch";

export interface SettingFlag {
  /** `--name <arg>` as commander takes it. */
  readonly spec: string;
  readonly help: string | { readonly create: string; readonly update: string };
  readonly value?: FlagValue;
  /** Required by `create` (the workflow). */
  readonly required?: true;
  /** A flag it cannot be given with (cron with interval). */
  readonly conflicts?: string;
}

export interface SettingDeclaration {
  readonly schema: SettingSchema;
  /** What a schedule has when it is not given. */
  readonly default?: string | boolean;
  /** An update may clear it (`null` in a PATCH, `orbit schedule update --unset`). */
  readonly unsettable?: true;
  /** Set only at create (the id). */
  readonly createOnly?: true;
  readonly flag?: SettingFlag;
}

const DURATION = "duration 1s-365d";

export const SCHEDULE_SETTINGS = {
  schedule_id: { schema: { type: "string", description: "[A-Za-z0-9_.-]{1,100}" }, createOnly: true },
  workflow: {
    schema: { type: "string", description: "the workflow to start" },
    flag: {
      spec: "--workflow <name>",
      help: "workflow to start (registered with `orbit workflow register` or by a worker)",
      required: true,
    },
  },
  version: {
    schema: text("pinned version; absent: the latest at each start"),
    unsettable: true,
    flag: {
      spec: "--version <semver>",
      help: "pin a workflow version (default: the latest not deprecated at each start)",
    },
  },
  input: {
    schema: nullable("object", "the input of every start (default {})"),
    flag: {
      spec: "--input <json>",
      help: "workflow input: JSON, @file holding it, or @- for the standard input (default: {})",
      value: "json-object",
    },
  },
  cron: {
    schema: text("cron expression (5 or 6 fields, macros, Quartz extensions)"),
    flag: { spec: "--cron <expression>", help: "cron expression (5 fields, or 6 with seconds)", conflicts: "interval" },
  },
  interval: {
    schema: text("duration such as 10s or 1h30m (at least 1s)"),
    flag: {
      spec: "--interval <duration>",
      help: "fixed interval such as 10s, 15m or 1h30m, aligned to --start-at or the epoch",
    },
  },
  timezone: {
    schema: text("IANA zone of the cron expression (default UTC)"),
    unsettable: true,
    flag: { spec: "--timezone <tz>", help: "IANA time zone of the cron expression (default: UTC)" },
  },
  dst: {
    schema: text("once (default), wall_clock or <gap>:<repeat>"),
    unsettable: true,
    flag: { spec: "--dst <mode>", help: "DST handling: once, wall_clock or <gap>:<repeat> (default: once)" },
  },
  overlap: {
    schema: choice(OVERLAP_POLICIES, "default skip"),
    default: "skip",
    flag: {
      spec: "--overlap <policy>",
      help: "skip, allow, cancel_previous, buffer_one or buffer_all (default: skip)",
    },
  },
  concurrency_key: {
    schema: text("schedules with the same key serialise"),
    unsettable: true,
    flag: { spec: "--concurrency-key <key>", help: "serialise with every schedule naming the same key" },
  },
  catchup: {
    schema: choice(CATCHUP_POLICIES, "default skip_missed"),
    default: "skip_missed",
    flag: { spec: "--catchup <policy>", help: "skip_missed, run_once or catch_up (default: skip_missed)" },
  },
  max_catch_up: {
    schema: nullable("integer", "1-1000, required with catchup catch_up"),
    unsettable: true,
    flag: {
      spec: "--max-catch-up <n>",
      help: "with --catchup catch_up: start at most n missed occurrences",
      value: "whole",
    },
  },
  catchup_window: {
    schema: text("duration 10s-365d: older missed occurrences never start"),
    unsettable: true,
    flag: {
      spec: "--catchup-window <duration>",
      help: "a missed occurrence older than this never starts (10s to 365d)",
    },
  },
  start_at: {
    schema: text("RFC 3339: no occurrence before"),
    unsettable: true,
    flag: { spec: "--start-at <time>", help: "RFC 3339: no occurrence before it (an interval's first occurrence)" },
  },
  end_at: {
    schema: text("RFC 3339: no occurrence after"),
    unsettable: true,
    flag: { spec: "--end-at <time>", help: "RFC 3339: no occurrence after it" },
  },
  jitter: {
    schema: text("duration: deterministic delay below it"),
    unsettable: true,
    flag: { spec: "--jitter <duration>", help: "delay each fire by a deterministic amount below this duration" },
  },
  paused: {
    schema: nullable("boolean", "default false"),
    default: false,
    flag: {
      spec: "--paused",
      help: { create: "create the schedule paused", update: "pause the schedule" },
      value: "switch",
    },
  },
  pause_note: {
    schema: text("why it is paused"),
    unsettable: true,
    flag: { spec: "--pause-note <text>", help: "why the schedule is paused" },
  },
  description: {
    schema: text("free text, at most 1000 characters"),
    unsettable: true,
    flag: { spec: "--description <text>", help: "free text, at most 1000 characters" },
  },
  run_timeout: {
    schema: text(`${DURATION}: the whole execution, across retries (default: the workflow's)`),
    unsettable: true,
    flag: {
      spec: "--run-timeout <duration>",
      help: "the whole execution must end within it, retries included (1s to 365d)",
    },
  },
  start_timeout: {
    schema: text(`${DURATION}: created → first taken by a worker (default: the workflow's)`),
    unsettable: true,
    flag: { spec: "--start-timeout <duration>", help: "a worker must take the execution within it (1s to 365d)" },
  },
  pause_on_failure: {
    schema: nullable("integer", "1-1000: pause after this many consecutive failed executions"),
    unsettable: true,
    flag: { spec: "--pause-on-failure <n>", help: "pause after n consecutive failed executions", value: "whole" },
  },
  max_runs: {
    schema: nullable(
      "integer",
      "1-1000000000: the schedule ends after its timing started this many occurrences (triggers and backfills do not count; docs/outcomes.md)",
    ),
    unsettable: true,
    flag: {
      spec: "--max-runs <n>",
      help: "end the schedule after n occurrences started (triggers and backfills do not count)",
      value: "whole",
    },
  },
  notify: {
    schema: {
      type: ["string", "object", "array", "null"],
      description:
        'webhook(s): a URL, {"url","events"} or a list of up to 5; events: failure, timeout, dead_letter, paused, recovery (default all)',
    },
    unsettable: true,
    flag: {
      spec: "--notify <url>",
      help: "webhook called on failure, timeout, dead letter, pause and recovery (repeatable)",
      value: "repeat",
    },
  },
  labels: {
    schema: {
      type: ["object", "null"],
      additionalProperties: { type: "string" },
      description: "up to 20 name → value strings; `orbit schedule apply --owner/--selector` scopes by them",
    },
    unsettable: true,
    flag: {
      spec: "--label <key=value>",
      help: { create: "a label (repeatable)", update: "a label (repeatable; the labels given replace the schedule's)" },
      value: "key-value",
    },
  },
} as const satisfies Record<string, SettingDeclaration>;

export type SettingKey = keyof typeof SCHEDULE_SETTINGS;

/** Every setting, in the table's order. */
export const SETTING_KEYS = Object.keys(SCHEDULE_SETTINGS) as SettingKey[];

/** The settings an update may clear. */
export const UNSETTABLE_SETTINGS = SETTING_KEYS.filter(
  (k) => (SCHEDULE_SETTINGS[k] as SettingDeclaration).unsettable === true,
);

/** The settings a schedule has when they are not given. */
export const SCHEDULE_DEFAULTS = {
  overlap: SCHEDULE_SETTINGS.overlap.default,
  catchup: SCHEDULE_SETTINGS.catchup.default,
  paused: SCHEDULE_SETTINGS.paused.default,
} as const;

/** The API's JSON schema of each setting (request bodies, /v1/openapi.json). */
export const SETTING_SCHEMAS = Object.fromEntries(SETTING_KEYS.map((k) => [k, SCHEDULE_SETTINGS[k].schema])) as {
  [K in SettingKey]: SettingSchema;
};

// The stored settings type has exactly the declared keys: adding a setting here without its field
// on ScheduleSettings (or the reverse) does not compile.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameKeys: Same<keyof ScheduleSettings, SettingKey> = true;
void sameKeys;

/**
 * Names other schedulers use for Orbit's settings: a typo of one still finds its Orbit name (the
 * API's "did you mean"), and the CLI suggests the setting's flag for the alias written as a flag.
 */
export const SETTING_ALIASES: Readonly<Record<string, string>> = {
  misfire_policy: "catchup",
  misfirepolicy: "catchup",
  catch_up: "catchup",
  catchUp: "catchup",
  catchup_policy: "catchup",
  max_catchup: "max_catch_up",
  maxCatchUp: "max_catch_up",
  catchupWindow: "catchup_window",
  schedule: "cron",
  cron_expression: "cron",
  cronExpression: "cron",
  every: "interval",
  everySeconds: "interval",
  time_zone: "timezone",
  timeZone: "timezone",
  tz: "timezone",
  overlap_policy: "overlap",
  concurrency: "overlap",
  concurrency_policy: "overlap",
  singleton_key: "concurrency_key",
  concurrencyKey: "concurrency_key",
  payload: "input",
  args: "input",
  workflow_id: "workflow",
  workflow_type: "workflow",
  startAt: "start_at",
  endAt: "end_at",
  id: "schedule_id",
  scheduleId: "schedule_id",
  pause: "paused",
  // Kubernetes CronJob's `suspend`, and the words for it elsewhere (`enabled: false`).
  suspend: "paused",
  suspended: "paused",
  disabled: "paused",
  enabled: "paused",
  note: "pause_note",
  notes: "description",
  timeout_ms: "run_timeout",
  timeout: "run_timeout",
  runTimeout: "run_timeout",
  execution_timeout: "run_timeout",
  // A Kubernetes Job's limit on its run (it was offered start_timeout, by spelling).
  active_deadline_seconds: "run_timeout",
  activeDeadlineSeconds: "run_timeout",
  schedule_to_start_timeout: "start_timeout",
  // Kubernetes skips a run it could not start within this long of its time: a missed occurrence
  // older than the window never starts (start_timeout fails an execution no worker took).
  starting_deadline_seconds: "catchup_window",
  startingDeadlineSeconds: "catchup_window",
  pause_on_failures: "pause_on_failure",
  pauseOnFailure: "pause_on_failure",
  limit: "max_runs",
  remaining_actions: "max_runs",
  maxRuns: "max_runs",
  webhook: "notify",
  webhooks: "notify",
  alert: "notify",
  label: "labels",
  tag: "labels",
  tags: "labels",
  metadata: "labels",
};
