/**
 * A schedule's settings (docs/design.md § Settings) as validated and stored, and the policy
 * vocabularies. The words (occurrence, fire, overlap, catch-up…) are defined in glossary.ts.
 * The settings object keeps the API's snake_case names: it is stored verbatim (the `spec` column)
 * and read back into the API's schedule JSON.
 */
import type { JsonObject } from "./json.js";

/** The label `orbit schedule apply --owner NAME` stamps: `orbit/owner=NAME` (docs/cli.md § apply sets). */
export const OWNER_LABEL = "orbit/owner";
/**
 * The apply set of `orbit schedule apply` without `--owner` or `--selector`: `orbit/owner=default`.
 * A named set may take its schedules over (docs/cli.md § apply sets).
 */
export const DEFAULT_APPLY_OWNER = "default";

/** How many of its newest dead letters a schedule read lists (`dead_letters`). */
export const DEAD_LETTERS_SHOWN = 5;

/**
 * The range of each whole-number setting, the one place it is written: the server's validators
 * (src/scheduler/settings.ts, src/engine/outcome-settings.ts) and the CLI's flags
 * (src/cli/schedule-flags.ts, which refuses a value outside before sending it) read it.
 */
export const WHOLE_SETTING_RANGES = {
  max_catch_up: [1, 1000],
  pause_on_failure: [1, 1000],
  max_runs: [1, 1_000_000_000],
} as const satisfies Record<string, readonly [min: number, max: number]>;

export const OVERLAP_POLICIES = ["skip", "allow", "cancel_previous", "buffer_one", "buffer_all"] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

export const CATCHUP_POLICIES = ["skip_missed", "run_once", "catch_up"] as const;
export type CatchupPolicy = (typeof CATCHUP_POLICIES)[number];

/** Why an occurrence did not start (ledger `reason`, metric label). */
export type SkipReason = "overlap" | "concurrency" | "missed" | "buffer_full";

/** The events a `notify` target may ask for; all of them when it names none. */
export const NOTIFY_EVENTS = ["failure", "timeout", "dead_letter", "paused", "recovery"] as const;
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];

export interface ScheduleSettings {
  schedule_id: string;
  workflow: string;
  /** Pinned version; absent: the latest registered version at each start. */
  version?: string;
  input: JsonObject;
  cron?: string;
  interval?: string;
  /** IANA zone of a cron expression; default UTC. */
  timezone?: string;
  /** `once` (default), `wall_clock` or `<gap>:<repeat>`. */
  dst?: string;
  /** Default `skip`. */
  overlap: OverlapPolicy;
  concurrency_key?: string;
  /** Default `skip_missed`. */
  catchup: CatchupPolicy;
  /** 1-1000, with `catch_up` only. */
  max_catch_up?: number;
  /** Duration 10s-365d: a missed occurrence older than this never starts. */
  catchup_window?: string;
  /** RFC 3339. */
  start_at?: string;
  end_at?: string;
  /** Duration: deterministic delay below this. */
  jitter?: string;
  paused: boolean;
  pause_note?: string;
  description?: string;
  /** Duration: the whole execution, across retries, must end within it (docs/outcomes.md). */
  run_timeout?: string;
  /** Duration: a worker must take the execution within it after it was created. */
  start_timeout?: string;
  /** 1-1000: pause after this many consecutive failed executions. */
  pause_on_failure?: number;
  /** 1-1e9: the schedule ends after its timing started this many occurrences (docs/outcomes.md). */
  max_runs?: number;
  /** Webhooks called on failure, timeout, dead letter, pause-on-failure and recovery. */
  notify?: Array<{ url: string; events?: string[] }>;
  /** Names to values; `orbit schedule apply --owner/--selector` scopes its prune by them (docs/cli.md). */
  labels?: Record<string, string>;
}

// Each setting's schema, default, flag and whether it may be unset: setting-table.ts.

/**
 * The shortest misfire grace: the firing loop is itself a few milliseconds late (more in a herd), so
 * a grace of 0 (accepted before) recorded on-time occurrences as missed (docs/server.md).
 */
export const MIN_GRACE_MS = 1000;
/** The longest misfire grace: 365 days, as the other durations of a schedule (catchup_window). */
export const MAX_GRACE_MS = 365 * 86_400_000;

/** Why a misfire grace is refused, or null: at least 1 s, at most 365 d, whole milliseconds. */
export function graceProblem(graceMs: number): string | null {
  if (!Number.isSafeInteger(graceMs)) return `--misfire-grace must be a whole number of milliseconds, got ${graceMs}`;
  if (graceMs > MAX_GRACE_MS) return `--misfire-grace must be at most 365d, got ${graceMs} ms`;
  if (graceMs >= MIN_GRACE_MS) return null;
  return `--misfire-grace must be at least 1s, got ${graceMs} ms: the firing loop is itself a few milliseconds late, so a shorter grace records occurrences that are on time as missed`;
}
