// @ts-check
/**
 * Saving an edit of a schedule that fires meanwhile. Every fire moves `revision` (docs/design.md
 * § Changes), so the `If-Match` of a form opened before the last fire was refused (412) although
 * nobody had touched a setting, and Save kept sending the old revision: a schedule that fires every
 * few seconds could not be edited at all. On a 412 the schedule is read again. When none of the
 * settings the form shows changed (only counters, the next fire and the revision moved), the same
 * PATCH goes again under the new revision. When one did, nothing is sent: the caller says which
 * and offers the schedule as it is now, so someone else's edit is never overwritten.
 */
import { ApiError, getSchedule, patchSchedule } from "./api.js";
import { jsonText } from "./json-text.js";

/** The settings the edit form shows and edits, by their API names. */
export const FORM_SETTINGS = [
  "workflow",
  "cron",
  "interval",
  "timezone",
  "overlap",
  "catchup",
  "max_catch_up",
  "input",
  "description",
  "version",
  "dst",
  "concurrency_key",
  "catchup_window",
  "start_at",
  "end_at",
  "jitter",
  "run_timeout",
  "start_timeout",
  "pause_on_failure",
  "max_runs",
  "notify",
];

/**
 * The form's settings that differ between two readings of a schedule (unset and null are alike).
 * @param {any} before
 * @param {any} after
 */
export function changedSettings(before, after) {
  return FORM_SETTINGS.filter((k) => jsonText(before[k] ?? null) !== jsonText(after[k] ?? null));
}

/** A setting the form shows was changed on the server since the form was filled. */
export class EditConflict extends Error {
  /**
   * @param {any} fresh the schedule as the server has it now
   * @param {string[]} changed the settings that differ from the form's starting point
   */
  constructor(fresh, changed) {
    const now = changed.map((k) => {
      const v = JSON.stringify(fresh[k] ?? null);
      return `${k} (now ${v.length > 60 ? `${v.slice(0, 59)}…` : v})`;
    });
    super(
      `Changed on the server since this form was opened: ${now.join(", ")}. Nothing was saved; reload the form to edit the schedule as it is now.`,
    );
    this.fresh = fresh;
    this.changed = changed;
  }
}

/** A schedule that fires every second may fire again between the read and the resend. */
const TRIES = 5;

/**
 * PATCHes `patch` onto the schedule the form was filled from (`base`), fenced by its revision and,
 * after a 412 caused only by fires, by the revision read again.
 * @param {any} base
 * @param {Record<string, unknown>} patch
 * @returns {Promise<any>} the schedule as saved
 */
export async function saveEdit(base, patch) {
  let revision = base.revision;
  for (let attempt = 1; ; attempt++) {
    try {
      return await patchSchedule(base.schedule_id, patch, revision);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 412) || attempt >= TRIES) throw err;
    }
    const fresh = await getSchedule(base.schedule_id);
    const changed = changedSettings(base, fresh);
    if (changed.length > 0) throw new EditConflict(fresh, changed);
    revision = fresh.revision;
  }
}
