/**
 * Plain-English descriptions of timings, for `orbit schedule preview` and the UI:
 * `0 2 * * *` → "At 02:00, every day", `*\/15 * * * *` → "Every 15 minutes".
 *
 * The description is built from the parsed sets (what the expression means), so `0/15`, `*\/15`
 * and `0,15,30,45` read the same. It aims to be correct and readable rather than exhaustive:
 * shapes without a better phrase are listed value by value.
 */
import type { CronSpec } from "./cron-parse.js";
import { formatInstant } from "./format.js";

const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];
const ORDINALS = ["first", "second", "third", "fourth", "fifth"];

/** At most this many times of day are listed one by one ("At 02:00, 02:30 and 14:00"). */
const MAX_LISTED_TIMES = 6;

const pad2 = (n: number): string => (n < 10 ? `0${n}` : `${n}`);

/** "a", "a and b", "a, b and c". */
function joinAnd(items: readonly string[], last = "and"): string {
  if (items.length <= 1) return items[0] ?? "";
  return `${items.slice(0, -1).join(", ")} ${last} ${items[items.length - 1]}`;
}

/**
 * Values as a list, with runs of three or more consecutive values as "a through b".
 * `order` maps a value to its position (Monday-first weeks); `name` renders a value.
 */
function listValues(values: readonly number[], name: (v: number) => string, order = (v: number) => v): string {
  const sorted = [...values].sort((a, b) => order(a) - order(b));
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && order(sorted[j + 1] as number) === order(sorted[j] as number) + 1) j++;
    const first = sorted[i] as number;
    const last = sorted[j] as number;
    if (j - i >= 2) parts.push(`${name(first)} through ${name(last)}`);
    else for (let k = i; k <= j; k++) parts.push(name(sorted[k] as number));
    i = j + 1;
  }
  return joinAnd(parts);
}

/** How a set of values of a field with range [min, max] is shaped. */
type Shape =
  | { kind: "all" }
  | { kind: "single"; value: number }
  /** min + k·step over the whole range, step dividing the range: "every n". */
  | { kind: "every"; step: number; from: number }
  /** Consecutive values. */
  | { kind: "range"; from: number; to: number }
  | { kind: "list"; values: readonly number[] };

function shapeOf(values: readonly number[], min: number, max: number): Shape {
  const size = max - min + 1;
  const first = values[0] as number;
  if (values.length === size) return { kind: "all" };
  if (values.length === 1) return { kind: "single", value: first };
  const step = (values[1] as number) - first;
  const progression = values.every((v, i) => v === first + i * step);
  if (progression && step === 1) return { kind: "range", from: first, to: values[values.length - 1] as number };
  // `5/20` (5, 25, 45) reads better as a list; an offset progression is "every n" only when long.
  const last = values[values.length - 1] as number;
  const wholeRange = first < min + step && last + step > max && size % step === 0;
  if (progression && wholeRange && (first === min || values.length > MAX_LISTED_TIMES)) {
    return { kind: "every", step, from: first };
  }
  return { kind: "list", values };
}

const plural = (n: number, unit: string): string => (n === 1 ? unit : `${n} ${unit}s`);

// ---------------------------------------------------------------------------------------------------
// Time of day

interface Unit {
  readonly name: "second" | "minute" | "hour";
  readonly shape: Shape;
}

/** The phrase for the finest unit that matters, capitalised by the caller. */
function leadPhrase(u: Unit): { text: string; at: boolean } {
  const s = u.shape;
  switch (s.kind) {
    case "all":
      return { text: `every ${u.name}`, at: false };
    case "every":
      return { text: `every ${plural(s.step, u.name)}${fromText(u.name, s.from)}`, at: false };
    case "single":
      return u.name === "hour"
        ? { text: `every day at ${pad2(s.value)}:00`, at: false }
        : { text: `at ${u.name} ${s.value}`, at: true };
    case "range":
      return u.name === "hour"
        ? { text: `every hour ${hourRangeText(s)}`, at: false }
        : { text: `at ${u.name}s ${listValues(valuesOf(s), String)}`, at: true };
    case "list":
      return u.name === "hour"
        ? { text: `at minute 0 past hours ${listValues(s.values, String)}`, at: false }
        : { text: `at ${u.name}s ${listValues(s.values, String)}`, at: true };
  }
}

function fromText(name: Unit["name"], from: number): string {
  if (from === 0) return "";
  return name === "hour" ? ` from ${pad2(from)}:00` : ` from ${name} ${from}`;
}

function valuesOf(s: Shape & { kind: "range" | "list" }): readonly number[] {
  if (s.kind === "list") return s.values;
  const out: number[] = [];
  for (let v = s.from; v <= s.to; v++) out.push(v);
  return out;
}

/** Hours as a qualifier: "between 09:00 and 17:59", "during hours 1, 3 and 5". */
function hourRangeText(s: Shape): string {
  switch (s.kind) {
    case "range":
      return `between ${pad2(s.from)}:00 and ${pad2(s.to)}:59`;
    case "single":
      return `between ${pad2(s.value)}:00 and ${pad2(s.value)}:59`;
    case "list":
      return `during hours ${listValues(s.values, String)}`;
    case "every":
      return `every ${plural(s.step, "hour")}${fromText("hour", s.from)}`;
    case "all":
      return "";
  }
}

/** A coarser unit after the lead phrase. */
function qualifier(u: Unit): string {
  const s = u.shape;
  if (u.name === "hour") return hourRangeText(s);
  switch (s.kind) {
    case "all":
      return "";
    case "every":
      return `every ${plural(s.step, u.name)}${fromText(u.name, s.from)}`;
    case "single":
      return `at ${u.name} ${s.value}`;
    case "range":
    case "list":
      return `at ${u.name}s ${listValues(valuesOf(s), String)}`;
  }
}

const capitalise = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/** The time-of-day part, and whether it is a list of fixed times (then "every day" is spelled out). */
function describeTime(spec: CronSpec): { text: string; fixed: boolean } {
  const { seconds, minutes, hours, hasSeconds } = spec;
  if (seconds.length === 1 && minutes.length * hours.length <= MAX_LISTED_TIMES && hours.length < 24) {
    const sec = seconds[0] as number;
    const times: string[] = [];
    for (const h of hours) {
      for (const m of minutes) times.push(`${pad2(h)}:${pad2(m)}${hasSeconds ? `:${pad2(sec)}` : ""}`);
    }
    return { text: `At ${joinAnd(times)}`, fixed: true };
  }
  // Finest to coarsest; a zero second (and then a zero minute) is implied: "every 5 minutes".
  const units: Unit[] = [];
  const onTheMinute = seconds.length === 1 && seconds[0] === 0;
  if (!onTheMinute) units.push({ name: "second", shape: shapeOf(seconds, 0, 59) });
  if (!(onTheMinute && minutes.length === 1 && minutes[0] === 0)) {
    units.push({ name: "minute", shape: shapeOf(minutes, 0, 59) });
  }
  units.push({ name: "hour", shape: shapeOf(hours, 0, 23) });
  const [lead, ...rest] = units as [Unit, ...Unit[]];
  const first = leadPhrase(lead);
  let text = capitalise(first.text);
  let at = first.at;
  for (const u of rest) {
    if (u.shape.kind === "all") {
      // "At minutes 5, 25 and 45 past every hour"; after "every n seconds" the all-unit is implied.
      if (at) text += ` past every ${u.name}`;
      at = false;
      continue;
    }
    text += `, ${qualifier(u)}`;
    at = false;
  }
  return { text, fixed: false };
}

// ---------------------------------------------------------------------------------------------------
// Days and months

const weekdayName = (d: number): string => WEEKDAYS[d] as string;
/** Monday-first position, so that Saturday and Sunday are neighbours. */
const mondayFirst = (d: number): number => (d + 6) % 7;

function domPieces(spec: CronSpec): string[] {
  const pieces: string[] = [];
  const { days } = spec;
  if (days.length === 1) pieces.push(`on day ${days[0]} of the month`);
  else if (days.length > 1) pieces.push(`on days ${listValues(days, String)} of the month`);
  for (const n of spec.lastDayOffsets) {
    // "on the day before …", "on the day 2 days before …" (it read "day before the last day").
    const before = n === 1 ? "the day before" : `the day ${n} days before`;
    pieces.push(n === 0 ? "on the last day of the month" : `on ${before} the last day of the month`);
  }
  for (const n of spec.nearestWeekdays) pieces.push(`on the weekday nearest day ${n} of the month`);
  if (spec.lastWeekday) pieces.push("on the last weekday of the month");
  return pieces;
}

/** Plain weekdays as a noun phrase: "Friday", "Monday through Friday", "Monday and Friday". */
function weekdaysText(weekdays: readonly number[]): string {
  return listValues(weekdays, weekdayName, mondayFirst);
}

function dowPieces(spec: CronSpec, on: boolean): string[] {
  const pieces: string[] = [];
  if (spec.weekdays.length > 0) {
    const text = weekdaysText(spec.weekdays);
    const isRange = spec.weekdays.length >= 3 && !text.includes(",") && !text.includes(" and ");
    pieces.push(on || !isRange ? `on ${text}` : text);
  }
  for (const d of spec.lastWeekdaysOfMonth) pieces.push(`on the last ${weekdayName(d)} of the month`);
  for (const [d, k] of spec.nthWeekdays) pieces.push(`on the ${ORDINALS[k - 1]} ${weekdayName(d)} of the month`);
  return pieces;
}

function isQuartzDom(spec: CronSpec): boolean {
  return spec.lastDayOffsets.length > 0 || spec.nearestWeekdays.length > 0 || spec.lastWeekday;
}

function isQuartzDow(spec: CronSpec): boolean {
  return spec.lastWeekdaysOfMonth.length > 0 || spec.nthWeekdays.length > 0;
}

/** The day part: "every day", "on day 13 of the month or on Friday", "Monday through Friday" … */
function describeDays(spec: CronSpec): string | null {
  const domAll = spec.days.length === 31 && !isQuartzDom(spec);
  const dowAll = spec.weekdays.length === 7 && !isQuartzDow(spec);
  if (domAll && dowAll) return null;
  const vixieOr = !spec.daysStar && !spec.weekdaysStar;
  if (vixieOr) {
    // Either day field matching is enough, so an unrestricted one makes every day match.
    if (domAll || dowAll) return null;
    return `${joinAnd(domPieces(spec), "and")} or ${joinAnd(dowPieces(spec, true), "or")}`;
  }
  if (dowAll) return joinAnd(domPieces(spec));
  if (domAll) return joinAnd(dowPieces(spec, false));
  // Both restricted and both must match (one of them starts with `*`, like `*/14`).
  const conditions = [...spec.weekdays]
    .sort((a, b) => mondayFirst(a) - mondayFirst(b))
    .map((d) => `a ${weekdayName(d)}`);
  for (const d of spec.lastWeekdaysOfMonth) conditions.push(`the last ${weekdayName(d)} of the month`);
  for (const [d, k] of spec.nthWeekdays) conditions.push(`the ${ORDINALS[k - 1]} ${weekdayName(d)} of the month`);
  return `${joinAnd(domPieces(spec))} if it is ${joinAnd(conditions, "or")}`;
}

function describeMonths(spec: CronSpec): string | null {
  if (spec.months.length === 12) return null;
  return `in ${listValues(spec.months, (m) => MONTHS[m - 1] as string)}`;
}

/** A cron expression in plain English, e.g. "At 09:30, Monday through Friday". */
export function describeCron(spec: CronSpec): string {
  const time = describeTime(spec);
  const days = describeDays(spec);
  const months = describeMonths(spec);
  const parts = [time.text];
  if (days !== null) parts.push(days);
  else if (time.fixed) parts.push("every day");
  if (months !== null) parts.push(months);
  return parts.join(", ");
}

// ---------------------------------------------------------------------------------------------------
// Intervals

const DURATION_UNITS: ReadonlyArray<readonly [ms: number, name: string]> = [
  [86_400_000, "day"],
  [3_600_000, "hour"],
  [60_000, "minute"],
  [1000, "second"],
  [1, "millisecond"],
];

/** 5_400_000 → "1 hour and 30 minutes"; 10_000 → "10 seconds"; 3_600_000 → "hour" (for "Every hour"). */
export function durationText(ms: number): string {
  const parts: string[] = [];
  let rest = ms;
  for (const [size, name] of DURATION_UNITS) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0) parts.push(`${n} ${name}${n === 1 ? "" : "s"}`);
  }
  if (parts.length === 1 && parts[0]?.startsWith("1 ")) return parts[0].slice(2);
  return joinAnd(parts);
}

/**
 * An interval in plain English: "Every 10 seconds, aligned to the Unix epoch", or with `startAt`
 * (epoch ms) "Every 10 seconds, aligned to start_at 2026-11-15T18:51:00Z".
 */
export function describeInterval(ms: number, startAt?: number | null): string {
  const anchor = startAt === undefined || startAt === null ? "the Unix epoch" : `start_at ${formatInstant(startAt)}`;
  return `Every ${durationText(ms)}, aligned to ${anchor}`;
}

/**
 * A timing in plain English with its bounds, as `orbit schedule preview` and `GET /v1/preview`
 * both say it: "At 02:30, every day, from start_at …, until end_at …"; an interval's start_at is
 * its alignment ("Every 10 seconds, aligned to start_at …, until end_at …").
 */
export function describeTiming(
  timing: { cron: CronSpec | null; intervalMs: number | null },
  startAt: number | null,
  endAt: number | null,
): string {
  const until = endAt === null ? "" : `, until end_at ${formatInstant(endAt)}`;
  if (timing.cron === null) return `${describeInterval(timing.intervalMs as number, startAt)}${until}`;
  const since = startAt === null ? "" : `, from start_at ${formatInstant(startAt)}`;
  return `${describeCron(timing.cron)}${since}${until}`;
}
