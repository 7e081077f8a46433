/**
 * The reference model's own cron (reference.ts): minute and hour fields every day in a zone, found
 * by walking UTC minutes and reading each one's wall time through Intl, with the DST rules the
 * model states (a repeated wall minute fires once or twice, a skipped one at the jump). Brute force
 * on purpose: it shares nothing with the time engine it checks.
 */
import { formatInstant } from "../../../src/time/format.js";
import { intlWallFields } from "../../helpers/intl-wall.js";
import type { ModelCron } from "./reference.js";

const MINUTE = 60_000;
const walls = new Map<string, number>();

/** The local wall time at UTC minute `u`, as minutes of a naive calendar (Date.UTC of its fields). */
function wallMinute(zone: string, u: number): number {
  const key = `${zone} ${u}`;
  const known = walls.get(key);
  if (known !== undefined) return known;
  const p = intlWallFields(zone, u);
  const local = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute) / MINUTE;
  if (walls.size > 200_000) walls.clear();
  walls.set(key, local);
  return local;
}

function fieldMatches(field: string, v: number): boolean {
  if (field === "*") return true;
  if (field.startsWith("*/")) return v % Number(field.slice(2)) === 0;
  return field.split(",").some((x) => Number(x) === v);
}

/** Does the cron match local wall minute `local`? */
function cronMatches(c: ModelCron, local: number): boolean {
  const minuteOfDay = ((local % 1440) + 1440) % 1440;
  return fieldMatches(c.minutes, minuteOfDay % 60) && fieldMatches(c.hours, Math.floor(minuteOfDay / 60));
}

/** The DST changes of the zones modelled: 30 minutes (Lord Howe) or an hour. */
const DST_STEPS = [30, 60];

/** Does UTC minute `u` (in minutes) fire? */
function cronFires(c: ModelCron, u: number): boolean {
  const local = wallMinute(c.zone, u * MINUTE);
  if (c.dst === "wall_clock") return cronMatches(c, local);
  // once: a local time seen twice fires at its first instant only.
  const repeat = DST_STEPS.some((d) => wallMinute(c.zone, (u - d) * MINUTE) === local);
  if (cronMatches(c, local) && !repeat) return true;
  // once: a local time the clock jumped over fires at the instant showing it plus the jump.
  for (let j = 0; j < 60; j++) {
    const jumpAt = u - j;
    const jump = wallMinute(c.zone, jumpAt * MINUTE) - wallMinute(c.zone, (jumpAt - 1) * MINUTE) - 1;
    if (jump > j && cronMatches(c, local - jump)) return true;
  }
  return false;
}

/** The first UTC minute after `t` that fires, walking minute by minute (at most 3 days). */
export function cronNextAfter(c: ModelCron, t: number): number {
  for (let u = Math.floor(t / MINUTE) + 1, n = 0; n < 3 * 1440; u++, n++) if (cronFires(c, u)) return u * MINUTE;
  throw new Error(`no occurrence of ${c.minutes} ${c.hours} within 3 days after ${formatInstant(t)}`);
}
