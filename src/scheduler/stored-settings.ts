/**
 * A schedule's settings as read back from the database (the `spec` column), checked once against
 * the settings table (src/domain/setting-table.ts) instead of cast: a row written by another
 * release or edited by hand fails here with the schedule and the setting named, not later as a
 * wrong decision. Checked once per row read, with a schema compiled once; the check costs about
 * a microsecond per row on the fire path.
 */
import AjvModule from "ajv";
import type { ScheduleSettings } from "../domain/schedule.js";
import { SETTING_KEYS, SETTING_SCHEMAS } from "../domain/setting-table.js";
import type { ScheduleRow } from "../store/rows.js";

/** The settings every stored schedule has (the defaults are applied before it is written). */
const ALWAYS = ["schedule_id", "workflow", "input", "overlap", "catchup", "paused"];

const validate = new AjvModule.default({ allErrors: false, strict: false, validateSchema: false }).compile({
  type: "object",
  required: ALWAYS,
  properties: {
    // A stored optional setting is absent, never null: the value schemas allow null for the API's patches.
    ...Object.fromEntries(SETTING_KEYS.map((k) => [k, { ...SETTING_SCHEMAS[k], not: { type: "null" } }])),
    input: { type: "object" },
    /** The input as the user wrote it (docs/api.md § Numbers), kept beside the parsed one. */
    input_text: { type: "string" },
  },
});

const checked = new WeakSet<object>();

/** The stored settings of a schedule row; throws naming the schedule and the setting when they are not valid. */
export function settingsOf(row: ScheduleRow): ScheduleSettings {
  const spec = row.spec;
  if (!checked.has(spec)) {
    if (!validate(spec)) {
      const e = validate.errors?.[0];
      const where = e?.instancePath ? `setting ${e.instancePath.slice(1).replace(/\//g, ".")}` : "settings";
      throw new Error(
        `schedule ${row.scheduleId}: the stored ${where} ${e?.message ?? "is invalid"}; the database holds settings this release cannot read`,
      );
    }
    checked.add(spec);
  }
  return spec as unknown as ScheduleSettings;
}
