/**
 * From a schedule's timing settings (cron or interval, timezone, dst, start_at, end_at) to a
 * validated Timing. This is the one entry point the scheduler, the API and the CLI use.
 */
import { invalidSchedule } from "../domain/errors.js";
import { CronMatcher } from "./cron-matcher.js";
import { type CronSpec, checkCronText, parseCron } from "./cron-parse.js";
import { CronTiming } from "./cron-timing.js";
import { DST_ONCE, type DstPolicy, parseDst } from "./dst.js";
import { IntervalTiming, parseInterval } from "./interval.js";
import { BoundedTiming, type Timing } from "./timing.js";
import { Zone } from "./zone.js";

export interface TimingSettings {
  cron?: string | undefined;
  interval?: string | undefined;
  /** IANA name; default UTC. Cron only. */
  timezone?: string | undefined;
  /** `once` (default), `wall_clock` or `<gap>:<repeat>`. Cron only. */
  dst?: string | undefined;
  /** Epoch ms; no occurrence before it. An interval's first occurrence is start_at itself. */
  startAt?: number | null | undefined;
  /** Epoch ms; no occurrence after it. */
  endAt?: number | null | undefined;
}

export interface CompiledTiming {
  readonly timing: Timing;
  readonly kind: "cron" | "interval";
  readonly cron: CronSpec | null;
  readonly intervalMs: number | null;
  readonly zone: Zone;
  readonly dst: DstPolicy;
}

const FIVE_YEARS_MS = 5 * 365.25 * 86_400_000;

/**
 * Compiles and validates timing settings. With `now`, a cron expression or an interval that has no
 * occurrence in the five years after `now` (`0 0 30 2 *`, `10000d`) is refused.
 */
export function compileTiming(s: TimingSettings, now?: number): CompiledTiming {
  const hasCron = s.cron !== undefined && s.cron !== null;
  const hasInterval = s.interval !== undefined && s.interval !== null;
  if (hasCron === hasInterval) {
    throw invalidSchedule(
      hasCron ? "give either cron or interval, not both" : "a schedule needs a cron or an interval",
    );
  }
  if (s.startAt != null && s.endAt != null && s.endAt < s.startAt) {
    // Within one millisecond they crossed by rounding: start_at rounds up, end_at down.
    throw invalidSchedule(
      s.startAt - s.endAt === 1
        ? "end_at is before start_at once both are taken to the millisecond (start_at rounds up, end_at down): no occurrence can lie between them"
        : "end_at is before start_at",
    );
  }
  const startAt = s.startAt ?? null;
  const endAt = s.endAt ?? null;
  if (hasInterval) {
    if (s.timezone !== undefined && s.timezone !== null) {
      throw invalidSchedule("timezone applies to cron schedules only: intervals are absolute");
    }
    if (s.dst !== undefined && s.dst !== null) throw invalidSchedule("dst applies to cron schedules only");
    const intervalMs = parseInterval(s.interval as string);
    const base = new IntervalTiming(intervalMs, startAt ?? 0);
    // The cron rule below, for intervals too: `10000000d` is a schedule that never fires.
    if (now !== undefined && base.countBetween(now, now + FIVE_YEARS_MS) === 0) {
      throw invalidSchedule(`interval "${s.interval}": never fires in the next five years`);
    }
    const timing = new BoundedTiming(base, startAt, endAt);
    return { timing, kind: "interval", cron: null, intervalMs, zone: Zone.of("UTC"), dst: DST_ONCE };
  }
  if (now !== undefined) checkCronText(s.cron as string);
  const cron = parseCron(s.cron as string);
  const zone = Zone.of(s.timezone ?? "UTC");
  const dst = s.dst === undefined || s.dst === null ? DST_ONCE : parseDst(s.dst);
  const base = new CronTiming(new CronMatcher(cron), zone, dst);
  // Counting is bounded by the five years; nextAfter would search a whole Gregorian cycle first.
  if (now !== undefined && base.countBetween(now, now + FIVE_YEARS_MS) === 0) {
    // Every time it names may fall in a spring-forward gap, which this dst skips: say so, or the
    // date reads as one that does not exist (`30 2 * 3 SUN#2` in New York under wall_clock).
    const once = s.dst === undefined || s.dst === null ? null : new CronTiming(new CronMatcher(cron), zone, DST_ONCE);
    const gaps =
      once !== null && once.countBetween(now, now + FIVE_YEARS_MS) > 0
        ? `: each of its times falls in a spring-forward gap of ${zone.name}, which dst "${s.dst}" skips (dst "once", the default, fires it after the gap)`
        : "";
    throw invalidSchedule(`cron \`${cron.source}\`: never fires in the next five years${gaps}`);
  }
  const timing = startAt === null && endAt === null ? base : new BoundedTiming(base, startAt, endAt);
  return { timing, kind: "cron", cron, intervalMs: null, zone, dst };
}

/** The longest cron, interval, timezone or dst text taken (each is stored and sent back with every read). */
export const MAX_TIMING_TEXT = 200;

/**
 * A timing text longer than {@link MAX_TIMING_TEXT}: INVALID_SCHEDULE, as any other refused cron,
 * interval, zone or DST mode (the zone and mode were INVALID_ARGUMENT when long and
 * INVALID_SCHEDULE otherwise, and a client that branches on the code told them apart; a tester).
 * Creates, updates and both previews refuse it alike (the preview answered INVALID_ARGUMENT from
 * its query schema, and `orbit schedule preview` took a 20,000-element list that a create
 * refuses; a tester).
 */
export function refuseLongTiming(fields: {
  cron?: string | undefined;
  interval?: string | undefined;
  timezone?: string | undefined;
  dst?: string | undefined;
}): void {
  for (const name of ["cron", "interval", "timezone", "dst"] as const) {
    const value = fields[name];
    if (value === undefined || value.length <= MAX_TIMING_TEXT) continue;
    throw invalidSchedule(`${name} is ${value.length} characters long; the most is ${MAX_TIMING_TEXT}`);
  }
}

/**
 * A cron or interval with blanks around it: kept as given, the blanks were stored and shown
 * (`cron " 0 0 * * * "`), as a timezone or dst with them is refused too. Creates, updates and both
 * previews refuse it alike.
 */
export function refuseBlankTiming(cron: string | undefined, interval: string | undefined): void {
  for (const [name, value] of [
    ["cron", cron],
    ["interval", interval],
  ] as const) {
    if (value !== undefined && value !== "" && value.trim() === "") {
      // All blanks: there is no expression to suggest (it said `give ""`; a tester).
      throw invalidSchedule(`${name} ${JSON.stringify(value)} is empty: give an expression`);
    }
    if (value !== undefined && value !== value.trim()) {
      throw invalidSchedule(
        `${name} ${JSON.stringify(value)} has blanks at its start or end; give ${JSON.stringify(value.trim())}`,
      );
    }
  }
}
