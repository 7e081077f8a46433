/**
 * Other products' names for Orbit's policy values and action fields (the jobs product's
 * `cancel_other`, `pause_note`, …). Orbit refuses them, naming its own in a "did you mean", rather
 * than taking them silently: one spelling per setting in stored schedules, exports and GitOps
 * files (docs/scheduling.md, "Other products' names").
 */

/** Per setting: a foreign value → Orbit's value. */
export const VALUE_ALIASES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  // Temporal's ScheduleOverlapPolicy (CANCEL_OTHER, TERMINATE_OTHER, ALLOW_ALL), a Kubernetes
  // CronJob's concurrencyPolicy (Forbid, Replace, Allow); looked up in lower case.
  overlap: {
    cancel_other: "cancel_previous",
    terminate_other: "cancel_previous",
    cancel_running: "cancel_previous",
    replace: "cancel_previous",
    forbid: "skip",
    allow_all: "allow",
  },
  // The search's last outcome (GET /v1/schedules?outcome=) by the execution status every view shows.
  outcome: {
    completed: "succeeded",
    success: "succeeded",
    failure: "failed",
    timed_out: "failed",
    canceled: "cancelled",
  },
  // "latest" (run the most recent missed occurrence), "all", "none": the usual catch-up names.
  catchup: {
    catchup: "catch_up",
    catch_up_all: "catch_up",
    all: "catch_up",
    skip: "skip_missed",
    none: "skip_missed",
    once: "run_once",
    latest: "run_once",
  },
};

/** A foreign field name of an action body (pause, resume) → Orbit's. */
export const FIELD_ALIASES: Readonly<Record<string, string>> = {
  pause_note: "note",
  reason: "note",
  catchup: "catch_up",
};
