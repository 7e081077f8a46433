/**
 * TypeBox schemas of the HTTP API: the routes validate requests with them and /v1/openapi.json is
 * generated from them (with the response schemas, which document and are not enforced: the JSON
 * views in src/scheduler/view.ts and src/engine/serialize.ts fix the field order).
 */
import { type TSchema, Type } from "@sinclair/typebox";
import { EXECUTION_STATUSES } from "../domain/execution.js";
import { CATCHUP_POLICIES, OVERLAP_POLICIES } from "../domain/schedule.js";
import { SETTING_SCHEMAS } from "../domain/setting-table.js";
import { SCHEDULE_OUTCOMES, SCHEDULE_SORTS } from "../scheduler/schedule-search.js";

export const nullable = (type: string, description: string): TSchema =>
  Type.Unsafe({ type: [type, "null"], description });
export const text = (description: string): TSchema => nullable("string", description);
export const limit = (max: number, def: number) =>
  Type.Optional(Type.Integer({ minimum: 1, maximum: max, description: `page size, at most ${max} (default ${def})` }));
/** A string from a list (an `enum`, so a refusal lists the values). */
const oneOf = (values: readonly string[], description?: string): TSchema =>
  Type.Unsafe<string>({ type: "string", enum: [...values], ...(description ? { description } : {}) });
export const cursor = Type.Optional(Type.String({ description: "next_cursor of the previous page" }));

// ---- parameters

export const ScheduleIdParams = Type.Object({ id: Type.String({ description: "schedule_id" }) });
export const WorkflowNameParams = Type.Object({ name: Type.String({ description: "workflow name" }) });
export const ExecutionIdParams = Type.Object({ id: Type.String({ description: "execution_id" }) });

export const FenceQuery = Type.Object(
  {
    expected_revision: Type.Optional(
      // At most 2^53 − 1: a larger number is no revision, and read as a double it was answered "not the expected 1e+23".
      Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        description: "the schedule's revision; 409 CONFLICT when it is another",
      }),
    ),
  },
  { additionalProperties: false },
);

export const ListSchedulesQuery = Type.Object(
  {
    workflow: Type.Optional(Type.String({ description: "only schedules of this workflow" })),
    state: Type.Optional(oneOf(["active", "paused", "ended"])),
    q: Type.Optional(
      Type.String({
        maxLength: 200,
        description: "search: case-insensitive text in schedule_id, workflow or description",
      }),
    ),
    outcome: Type.Optional(oneOf([...SCHEDULE_OUTCOMES], "search: the schedule's last outcome")),
    overdue: Type.Optional(
      Type.Boolean({
        description: "search: only active schedules whose next fire is later than the misfire grace (60 s by default)",
      }),
    ),
    sort: Type.Optional(oneOf([...SCHEDULE_SORTS], "search: the order (default id); ties by schedule_id")),
    order: Type.Optional(oneOf(["asc", "desc"], "search: ascending (default) or descending; nulls last")),
    cursor,
    limit: limit(1000, 100),
  },
  { additionalProperties: false },
);

export const OccurrencesQuery = Type.Object({ cursor, limit: limit(1000, 100) }, { additionalProperties: false });

export const ListExecutionsQuery = Type.Object(
  {
    workflow: Type.Optional(Type.String()),
    status: Type.Optional(oneOf(EXECUTION_STATUSES)),
    schedule_id: Type.Optional(Type.String()),
    created_after: Type.Optional(
      Type.String({ format: "date-time", description: "only executions created at or after this instant" }),
    ),
    created_before: Type.Optional(
      Type.String({ format: "date-time", description: "only executions created before this instant" }),
    ),
    cursor,
    limit: limit(1000, 50),
    view: Type.Optional(
      oneOf(
        ["full", "summary"],
        "full (default): each execution whole; summary: without input and result, the error's type, message (cut to 1,000 characters) and step only (docs/api.md § Executions)",
      ),
    ),
  },
  { additionalProperties: false },
);

// ---- request bodies

/**
 * Each setting's schema, declared once with its default, flag and docs (src/domain/setting-table.ts)
 * as plain JSON schema, taken into TypeBox as it is.
 */
const settingProperties = Object.fromEntries(
  Object.entries(SETTING_SCHEMAS).map(([key, schema]) => [key, Type.Unsafe(schema)]),
) as { [K in keyof typeof SETTING_SCHEMAS]: TSchema };

/**
 * Schedule settings (docs/design.md § Settings). Unknown keys pass the schema on purpose: the settings validator
 * (src/scheduler/settings.ts) refuses them with a suggestion (`did you mean "catchup"?`).
 */
export const CreateScheduleBody = Type.Partial(Type.Object(settingProperties), {
  additionalProperties: true,
  description: "schedule settings; unknown keys are refused with a suggestion",
});

const { schedule_id: _id, ...patchable } = settingProperties;
export const PatchScheduleBody = Type.Partial(Type.Object(patchable), {
  additionalProperties: true,
  description: "any settings but schedule_id; null unsets an optional one",
});

/** A new schedule as the OpenAPI document gives it: what the settings validator enforces. */
const {
  cron: _cron,
  interval: _interval,
  schedule_id: _newId,
  workflow: _newWorkflow,
  ...optional
} = settingProperties;
export const CreateScheduleDoc = Type.Object(
  {
    schedule_id: settingProperties.schedule_id,
    workflow: settingProperties.workflow,
    cron: Type.Optional(settingProperties.cron),
    interval: Type.Optional(settingProperties.interval),
    ...Object.fromEntries(Object.entries(optional).map(([k, v]) => [k, Type.Optional(v)])),
  },
  {
    additionalProperties: false,
    // A null one counts as absent, as the server reads it.
    oneOf: [
      { required: ["cron"], properties: { cron: { type: "string" } } },
      { required: ["interval"], properties: { interval: { type: "string" } } },
    ],
    description: "schedule settings: exactly one of cron and interval; an unknown key is refused with a suggestion",
  },
);
export const PatchScheduleDoc = Type.Partial(
  Type.Object({
    ...patchable,
    schedule_id: Type.Unsafe({ type: "string", description: "the schedule's own id, which cannot change" }),
  }),
  {
    additionalProperties: false,
    description:
      "any settings but schedule_id; null unsets an optional one; an unknown key is refused with a suggestion",
  },
);

export const PauseBody = Type.Object(
  { note: Type.Optional(Type.String({ maxLength: 1000 })) },
  { additionalProperties: false },
);
export const ResumeBody = Type.Object(
  { catch_up: Type.Optional(Type.Boolean({ description: "apply the catch-up policy to the paused span" })) },
  { additionalProperties: false },
);
export const TriggerBody = Type.Object(
  { input: Type.Optional(Type.Object({}, { additionalProperties: true, description: "overrides the input once" })) },
  { additionalProperties: false },
);
export const BackfillBody = Type.Object(
  {
    start_at: Type.String({ description: "RFC 3339, inclusive" }),
    end_at: Type.String({ description: "RFC 3339, inclusive" }),
  },
  { additionalProperties: false },
);

export const RegisterWorkflowBody = Type.Object(
  {
    name: Type.String(),
    version: Type.String({ description: "semver" }),
    input_schema: Type.Optional(nullable("object", "JSON Schema 2020-12; absent: any object")),
    description: Type.Optional(text("free text, at most 1000 characters")),
  },
  { additionalProperties: false },
);

export const StartExecutionBody = Type.Object(
  {
    execution_id: Type.Optional(Type.String({ description: "given: starting an existing id returns it (200)" })),
    workflow: Type.String(),
    version: Type.Optional(text("absent: the latest version")),
    input: Type.Optional(Type.Object({}, { additionalProperties: true })),
    run_timeout: Type.Optional(text("duration 1s-365d; default: the workflow's (docs/outcomes.md)")),
    start_timeout: Type.Optional(text("duration 1s-365d; default: the workflow's")),
  },
  { additionalProperties: false },
);

export const CancelBody = Type.Object(
  { reason: Type.Optional(text('at most 1000 characters (default "cancelled")')) },
  { additionalProperties: false },
);

// ---- responses (documentation)

export const instant = Type.String({ description: "RFC 3339 UTC" });
const open = (description: string, properties: Record<string, TSchema>) =>
  Type.Object(properties, { additionalProperties: true, description });

export const ErrorBody = Type.Object({ code: Type.String(), message: Type.String() });

export const Occurrence = open("a ledger row", {
  id: Type.Integer(),
  kind: Type.Union(["started", "skipped", "buffered", "dead_letter"].map((k) => Type.Literal(k))),
  occurrence: nullable("string", "nominal occurrence"),
  recorded_at: instant,
  execution_id: Type.Optional(Type.String({ description: "started rows: the execution started" })),
  reason: Type.Optional(
    Type.String({ description: "skipped and dead_letter rows: why (overlap, concurrency, missed, …)" }),
  ),
  count: Type.Optional(Type.Integer({ description: "a row standing for several occurrences: how many" })),
  range_from: Type.Optional(Type.String({ description: "a row for a range of missed occurrences: the first" })),
  range_to: Type.Optional(Type.String({ description: "a row for a range of missed occurrences: the last" })),
  error: Type.Optional(Type.String({ description: "dead_letter rows: the start's error" })),
  status: Type.Optional(Type.String({ description: "started rows: the execution's status now (final once it ended)" })),
  error_type: Type.Optional(
    Type.String({ description: "started rows whose execution FAILED: its error's type (Timeout for a run timeout)" }),
  ),
});

export const ScheduleOutcome = Type.Object(
  {
    status: Type.Union(EXECUTION_STATUSES.map((s) => Type.Literal(s))),
    execution_id: Type.String(),
    ended_at: instant,
    error: nullable("string", "the error message (FAILED) or cancel reason (CANCELLED)"),
    error_type: Type.Optional(Type.String({ description: "the error's type, e.g. Timeout" })),
    error_step: Type.Optional(Type.String({ description: "the step whose function threw, when one did" })),
  },
  { description: "the last execution of the schedule that ended" },
);

/** The settings a schedule shows only when they are set, as they are given (docs/design.md § Settings). */
const {
  schedule_id: _sid,
  workflow: _wf,
  input: _in,
  overlap: _ov,
  catchup: _cu,
  paused: _pa,
  ...shownWhenSet
} = settingProperties;

export const Schedule = open("a schedule, fields in the order of docs/api.md", {
  schedule_id: Type.String(),
  workflow: Type.String(),
  input: Type.Object({}, { additionalProperties: true }),
  ...Object.fromEntries(Object.entries(shownWhenSet).map(([k, v]) => [k, Type.Optional(v)])),
  overlap: oneOf(OVERLAP_POLICIES),
  catchup: oneOf(CATCHUP_POLICIES),
  paused: Type.Boolean(),
  next_fire_at: nullable("string", "RFC 3339, jitter included"),
  next_fire_times: Type.Array(instant),
  last_fire_at: nullable("string", "RFC 3339"),
  last_execution_id: nullable("string", "the last execution the schedule started"),
  remaining_runs: Type.Optional(
    Type.Integer({ description: "with max_runs: occurrences still to start before the schedule ends" }),
  ),
  fired: Type.Integer(),
  skipped: Type.Integer(),
  last_error: nullable("string", "why the last start failed"),
  created_at: instant,
  updated_at: instant,
  state: Type.Union([Type.Literal("active"), Type.Literal("paused"), Type.Literal("ended")]),
  revision: Type.Integer(),
  last_outcome: Type.Union([ScheduleOutcome, Type.Null()]),
  last_success_at: nullable("string", "RFC 3339: when an execution last COMPLETED"),
  last_failure_at: nullable("string", "RFC 3339: when an execution last FAILED"),
  consecutive_failures: Type.Integer({ description: "FAILED executions since the last COMPLETED one" }),
  failures: Type.Integer({ description: "every FAILED execution of the schedule" }),
  last_tick: Type.Union([Occurrence, Type.Null()]),
  dead_letters: Type.Array(Occurrence),
  notify_failure: Type.Optional(
    Type.Object(
      {
        event: Type.String(),
        url: Type.String(),
        state: Type.Union([Type.Literal("failed"), Type.Literal("retrying")]),
        attempts: Type.Integer(),
        error: Type.String(),
        created_at: Type.String(),
      },
      {
        description:
          "GET of one schedule: its alerts are failing — the newest webhook delivery tried failed for good or is being retried after an error (GET /v1/schedules/{id}/notifications has them all)",
      },
    ),
  ),
  buffered: Type.Array(instant, {
    description:
      "occurrences held by overlap buffer_one / buffer_all, oldest first; each starts when the running execution ends (while paused: after a resume, once nothing runs)",
  }),
});

export const nextCursor = nullable("string", "null on the last page");
/** Most schedules one batch create takes (one transaction). */
export const MAX_SCHEDULES_PER_BATCH = 1000;
/**
 * Most schedules one apply takes: a whole file is one transaction (all or nothing, and prune must
 * see the whole set), so it cannot be split into requests; 10,000 plain entries are about 1 MB of the
 * 2 MB a request body may hold (docs/cli.md § orbit schedule apply).
 */
export const MAX_SCHEDULES_PER_APPLY = 10_000;
export const CreateSchedulesBody = Type.Object(
  { schedules: Type.Array(CreateScheduleBody, { minItems: 1, maxItems: MAX_SCHEDULES_PER_BATCH }) },
  { additionalProperties: false },
);
export const CreateSchedulesDoc = Type.Object(
  { schedules: Type.Array(CreateScheduleDoc, { minItems: 1, maxItems: MAX_SCHEDULES_PER_BATCH }) },
  { additionalProperties: false, required: ["schedules"] },
);
export const ValidateSchedulesBody = Type.Object(
  {
    schedules: Type.Array(
      Type.Object(
        { schedule_id: Type.String({ minLength: 1 }) },
        { additionalProperties: true, description: "a new schedule's settings, or the settings to change" },
      ),
      { minItems: 1, maxItems: MAX_SCHEDULES_PER_APPLY },
    ),
  },
  { additionalProperties: false },
);
export const ScheduleFileCheck = Type.Object({
  valid: Type.Integer({ description: "how many entries were checked" }),
  actions: Type.Array(Type.Union([Type.Literal("create"), Type.Literal("update")]), {
    description: "per entry, in order: what applying it would do",
  }),
});
export const ApplySchedulesBody = Type.Object(
  {
    schedules: Type.Array(
      Type.Object(
        { schedule_id: Type.String({ minLength: 1 }) },
        { additionalProperties: true, description: "a new schedule's settings, or the settings it should have" },
      ),
      { maxItems: MAX_SCHEDULES_PER_APPLY },
    ),
    scope: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description:
          "the apply set's labels: stamped on every schedule written; prune deletes only schedules with all of them",
      }),
    ),
    workflows: Type.Optional(
      Type.Array(RegisterWorkflowBody, {
        maxItems: MAX_SCHEDULES_PER_BATCH,
        description: "`kind: workflow` entries: registered first, as POST /v1/workflows would",
      }),
    ),
    allow_unregistered: Type.Optional(
      Type.Boolean({ description: "accept schedules whose workflow is not registered (they wait for it)" }),
    ),
    prune: Type.Optional(Type.Boolean({ description: "delete the scope's schedules the file does not name" })),
    dry_run: Type.Optional(Type.Boolean({ description: "validate and plan everything, then roll back" })),
  },
  { additionalProperties: false },
);
const settingChange = Type.Object({
  setting: Type.String(),
  from: Type.Unknown({ description: "the stored value (its default when unset, else null)" }),
  to: Type.Unknown({ description: "the file's value (null unsets)" }),
});
export const ApplyResult = Type.Object({
  dry_run: Type.Boolean(),
  scope: Type.Record(Type.String(), Type.String()),
  workflows: Type.Array(
    Type.Object({
      action: Type.Union([Type.Literal("register"), Type.Literal("unchanged")]),
      name: Type.String(),
      version: Type.String(),
    }),
  ),
  steps: Type.Array(
    Type.Object({
      action: Type.Union(["create", "update", "unchanged", "delete"].map((a) => Type.Literal(a))),
      schedule_id: Type.String(),
      changes: Type.Optional(Type.Array(settingChange)),
      waiting: Type.Optional(Type.String({ description: "allow_unregistered: why it cannot start executions yet" })),
    }),
    { description: "the file's entries in order, then the deletions by id" },
  ),
  created: Type.Integer(),
  updated: Type.Integer(),
  unchanged: Type.Integer(),
  deleted: Type.Integer(),
});
export const ScheduleBatch = Type.Object({ created: Type.Integer(), schedule_ids: Type.Array(Type.String()) });
export const ScheduleList = Type.Object({
  schedules: Type.Array(Schedule),
  next_cursor: nextCursor,
  total: Type.Optional(Type.Integer({ description: "search only: how many schedules match (all pages)" })),
  counts: Type.Optional(
    Type.Object(
      { active: Type.Integer(), paused: Type.Integer(), ended: Type.Integer() },
      { description: "search only: the matches by state, before the state filter" },
    ),
  ),
});
export const OccurrenceList = Type.Object({ occurrences: Type.Array(Occurrence), next_cursor: nextCursor });
export const TriggerResult = open("whether the trigger started an execution", {
  started: Type.Boolean(),
  execution_id: nullable("string", "the execution started"),
  message: Type.Optional(Type.String({ description: "not started: why" })),
  overlap: oneOf(OVERLAP_POLICIES),
});
export const BackfillResult = Type.Object({
  start_at: instant,
  end_at: instant,
  occurrences: Type.Integer(),
  started: Type.Integer(),
  already_existed: Type.Integer(),
});

export const Workflow = Type.Object({
  name: Type.String(),
  version: Type.String(),
  input_schema: nullable("object", "JSON Schema"),
  description: nullable("string", "free text"),
  created_at: instant,
  deprecated_at: nullable("string", 'RFC 3339 UTC: when it was deprecated ("latest" skips it), or null'),
});
export const WorkflowList = Type.Object({ workflows: Type.Array(Workflow) });
export const WorkflowVersions = Type.Object({ name: Type.String(), versions: Type.Array(Workflow) });

export const Execution = open("an execution", {
  execution_id: Type.String(),
  workflow: Type.String(),
  version: Type.String(),
  input: Type.Object({}, { additionalProperties: true }),
  status: Type.Union(EXECUTION_STATUSES.map((s) => Type.Literal(s))),
  schedule_id: nullable("string", "the schedule that started it"),
  trigger: nullable("object", "what started it (docs/design.md § What the execution receives)"),
  result: Type.Unknown(),
  error: Type.Unknown(),
  created_at: instant,
  started_at: nullable("string", "RFC 3339"),
  ended_at: nullable("string", "RFC 3339"),
  run: Type.Integer({ description: "1 for the first run; +1 per continue-as-new or retry" }),
  attempt: Type.Integer({ description: "worker attempt of the current run" }),
  cancel_reason: Type.Optional(Type.String({ description: "why it was cancelled (or is being cancelled)" })),
  waiting: Type.Optional(
    Type.Object(
      {
        reason: Type.Union(
          ["no_worker", "no_worker_for_version", "retry_backoff", "queued"].map((r) => Type.Literal(r)),
        ),
        message: Type.String(),
      },
      { description: "GET /v1/executions/{id} of a RUNNING execution no worker holds: why it waits" },
    ),
  ),
});
export const EventList = Type.Object({
  events: Type.Array(
    Type.Object({
      seq: Type.Integer(),
      type: Type.String(),
      at: instant,
      data: Type.Object({}, { additionalProperties: true }),
    }),
  ),
});

export const Health = Type.Object({ status: Type.Literal("ok") });
export const DoctorReport = Type.Object({
  server_time: Type.String({ description: "this server's clock, RFC 3339" }),
  checks: Type.Array(
    Type.Object({
      name: Type.String(),
      status: Type.Union([Type.Literal("ok"), Type.Literal("warn"), Type.Literal("fail")]),
      message: Type.String(),
      hint: Type.Optional(Type.String({ description: "what to do about a warn or fail" })),
    }),
  ),
});
export const Ready = Type.Object({
  status: Type.String({ description: "ready, or not_ready with 503" }),
  role: Type.Union(["single", "leader", "standby", "shared"].map((r) => Type.Literal(r))),
});
