/**
 * The random settings and timings of the model-based test (model.test.ts): schedules' settings,
 * cron fields, and where a zone's next DST change is.
 */
import fc from "fast-check";
import type { CatchupPolicy, OverlapPolicy } from "../../../src/domain/schedule.js";

export const DAY = 86_400_000;

export type CronArb = { minutes: string; hours: string; dst: "once" | "wall_clock" };

export function cronArb(): fc.Arbitrary<CronArb> {
  return fc.record({
    minutes: fc.constantFrom("*", "*/5", "*/7", "0,30", "15,45", "30"),
    hours: fc.constantFrom("*", "1,2,3", "2"),
    dst: fc.constantFrom<"once" | "wall_clock">("once", "wall_clock"),
  });
}

export const timingText = (intervalS: number, cron: CronArb | null): string =>
  cron === null ? `interval=${intervalS}s` : `cron="${cron.minutes} ${cron.hours} * * *" dst=${cron.dst}`;

export function timingBody(intervalS: number, cron: CronArb | null, zone: string): Record<string, unknown> {
  return cron === null
    ? { interval: `${intervalS}s` }
    : { cron: `${cron.minutes} ${cron.hours} * * *`, timezone: zone, dst: cron.dst };
}

export const modelCron = (cron: CronArb | null, zone: string) => (cron === null ? null : { ...cron, zone });

/** The first instant after `t` at which `zone`'s UTC offset changes (a DST change), to the minute. */
export function zoneChangeAfter(zone: string, t: number): number {
  const f = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" });
  const offset = (u: number) => f.formatToParts(new Date(u)).find((p) => p.type === "timeZoneName")?.value;
  const first = offset(t);
  let hi = t + DAY;
  while (offset(hi) === first) hi += DAY;
  let lo = hi - DAY;
  while (hi - lo > 60_000) {
    const mid = Math.floor((lo + hi) / 2 / 60_000) * 60_000;
    if (offset(mid) === first) lo = mid;
    else hi = mid;
  }
  return hi;
}

export function maxRunsArb(): fc.Arbitrary<number | null> {
  return fc.option(fc.integer({ min: 1, max: 6 }), { nil: null, freq: 3 });
}

export const settingsArb = fc.record({
  intervalS: fc.constantFrom(5, 10, 15),
  overlap: overlapArb(),
  catchup: catchupArb(),
  windowS: fc.option(fc.constantFrom(25, 40), { nil: null }),
  cron: fc.option(cronArb(), { nil: null, freq: 2 }),
  endInS: fc.option(fc.integer({ min: 1, max: 300 }), { nil: null, freq: 4 }),
  /** Below the shortest gap between occurrences (5 s), so due times keep the occurrences' order. */
  jitterMs: fc.constantFrom(0, 0, 1500, 4000),
  maxRuns: maxRunsArb(),
});
export function overlapArb(): fc.Arbitrary<OverlapPolicy> {
  return fc.constantFrom("skip", "allow", "cancel_previous", "buffer_one", "buffer_all");
}

export function catchupArb(): fc.Arbitrary<[CatchupPolicy, number | null]> {
  return fc.oneof(
    fc.constant<[CatchupPolicy, number | null]>(["skip_missed", null]),
    fc.constant<[CatchupPolicy, number | null]>(["run_once", null]),
    fc.integer({ min: 1, max: 6 }).map((n): [CatchupPolicy, number | null] => ["catch_up", n]),
  );
}

export type SettingsArb = typeof settingsArb extends fc.Arbitrary<infer T> ? T : never;
