/**
 * Shared by the cron benchmarks: the expression × zone matrix and thin adapters that give Orbit,
 * croner and cron-parser the same "next occurrence after an instant" shape.
 */

import { CronExpressionParser } from "cron-parser";
import { Cron } from "croner";
import { compileTiming } from "../../src/time/schedule-timing.js";
import type { Timing } from "../../src/time/timing.js";

export const BENCH_EXPRESSIONS: readonly string[] = [
  "0 2 * * *",
  "*/15 * * * *",
  "30 9 * * 1-5",
  "0 0 1 * *",
  "5/20 * * * *",
  "0 0 13 * 5",
  "0 */6 * * *",
  "0 0 * * 0",
  "*/10 * * * * *",
  "0 30 2 * * *",
];

export const BENCH_ZONES: readonly string[] = [
  "UTC",
  "Europe/Berlin",
  "America/New_York",
  "Australia/Lord_Howe",
  "Asia/Kolkata",
];

/** Upper bound of each field for 5 fields (minute … day-of-week); 6 fields get a leading seconds field. */
const FIELD_MAX_5 = [59, 23, 31, 12, 7];

/**
 * croner refuses `a/n` with a numeric start (`5/20`), which ORBIT and cron-parser read as
 * `a-max/n`. Rewrites such fields to the range form croner accepts (`5/20` → `5-59/20`); every other
 * field is left as it is.
 */
export function toCronerExpression(expr: string): string {
  const fields = expr.trim().split(/\s+/);
  const max = fields.length === 6 ? [59, ...FIELD_MAX_5] : FIELD_MAX_5;
  return fields
    .map((f, i) =>
      f
        .split(",")
        .map((part) => {
          const m = /^(\d+)\/(\d+)$/.exec(part);
          return m === null ? part : `${m[1]}-${max[i] ?? 59}/${m[2]}`;
        })
        .join(","),
    )
    .join(" ");
}

export function orbitTiming(expr: string, timezone: string, dst: "once" | "wall_clock" = "once"): Timing {
  return compileTiming({ cron: expr, timezone, dst }).timing;
}

export function cronerJob(expr: string, timezone: string): Cron {
  return new Cron(toCronerExpression(expr), { timezone });
}

export function cronParserIterator(expr: string, timezone: string, start: number) {
  return CronExpressionParser.parse(expr, { currentDate: new Date(start), tz: timezone });
}

/** `Error: message` → `message`, shortened for a table cell. */
export function errorText(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

export function iso(ms: number): string {
  return new Date(ms).toISOString().replace(".000Z", "Z");
}
