/**
 * Cron grammar (docs/design.md § Cron): 5 fields (minute hour day-of-month month day-of-week) or 6 with a
 * leading seconds field; values, ranges, steps (`*\/n`, `a-b/n`, `a/n`), lists, names, day of week
 * 0-7, macros, and the Quartz extensions `L`, `L-n`, `nW`, `LW` (day of month), `nL`, `n#k`
 * (day of week) and `?`. Parsing is pure and produces plain sets; cron-matcher.ts compiles them.
 */
import { invalidSchedule, type OrbitError } from "../domain/errors.js";

export interface CronSpec {
  /** The expression as given (trimmed). */
  readonly source: string;
  /** True for the 6-field form. */
  readonly hasSeconds: boolean;
  readonly seconds: readonly number[];
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  /** Plain days of month 1-31. */
  readonly days: readonly number[];
  readonly months: readonly number[];
  /** Plain days of week 0-6 (7 folded to 0). */
  readonly weekdays: readonly number[];
  /** `L` and `L-n`: n days before the last day of the month (0 for `L`). */
  readonly lastDayOffsets: readonly number[];
  /** `nW`: the weekday nearest day n, within the month. */
  readonly nearestWeekdays: readonly number[];
  /** `LW`: the last weekday (Mon-Fri) of the month. */
  readonly lastWeekday: boolean;
  /** `nL`: the last weekday n (0-6) of the month. */
  readonly lastWeekdaysOfMonth: readonly number[];
  /** `n#k`: the k-th (1-5) weekday n of the month. */
  readonly nthWeekdays: ReadonlyArray<readonly [weekday: number, nth: number]>;
  /** The day-of-month field starts with `*` or `?` (Vixie: then both day fields must match). */
  readonly daysStar: boolean;
  /** The day-of-week field starts with `*` or `?`. */
  readonly weekdaysStar: boolean;
  /** The five or six field texts, for descriptions. */
  readonly fields: readonly string[];
}

export const MACROS: Readonly<Record<string, string>> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

interface FieldDef {
  readonly label: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
  /** Index of the first name's value (JAN = 1, SUN = 0). */
  readonly nameBase?: number;
}

const SECOND: FieldDef = { label: "second", min: 0, max: 59 };
const MINUTE: FieldDef = { label: "minute", min: 0, max: 59 };
const HOUR: FieldDef = { label: "hour", min: 0, max: 23 };
const DAY_OF_MONTH: FieldDef = { label: "day of month", min: 1, max: 31 };
const MONTH: FieldDef = {
  label: "month",
  min: 1,
  max: 12,
  names: ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"],
  nameBase: 1,
};
const DAY_OF_WEEK: FieldDef = {
  label: "day of week",
  min: 0,
  max: 7,
  names: ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"],
  nameBase: 0,
};

function rangeText(f: FieldDef): string {
  const base = `${f.min}-${f.max}`;
  if (f.names === undefined) return base;
  return `${base} or ${f.names[0]}-${f.names[f.names.length - 1]}`;
}

class Parser {
  constructor(private readonly source: string) {}

  fail(message: string): OrbitError {
    return invalidSchedule(`cron \`${this.source}\`: ${message}`);
  }

  /** A single value: digits or (for month and day of week) a name. */
  value(text: string, f: FieldDef): number {
    let n: number;
    if (/^\d+$/.test(text)) {
      n = Number(text);
    } else if (f.names !== undefined && /^[A-Za-z]+$/.test(text)) {
      const i = f.names.indexOf(text.toUpperCase());
      if (i < 0) throw this.fail(`\`${text}\` is not a valid value for the ${f.label} field (${rangeText(f)})`);
      n = i + (f.nameBase ?? 0);
    } else if (text === "") {
      throw this.fail(`empty value in the ${f.label} field`);
    } else {
      throw this.fail(`\`${text}\` is not a valid value for the ${f.label} field (${rangeText(f)})`);
    }
    if (n < f.min || n > f.max)
      throw this.fail(`\`${text}\` is out of range for the ${f.label} field (${f.min}-${f.max})`);
    return n;
  }

  step(text: string, element: string, f: FieldDef): number {
    if (!/^\d+$/.test(text)) {
      throw this.fail(
        text === ""
          ? `missing step after \`/\` in the ${f.label} field`
          : `\`${text}\` is not a valid step in the ${f.label} field`,
      );
    }
    const n = Number(text);
    if (n === 0)
      throw this.fail(`step \`0\` in \`${element}\` is not allowed in the ${f.label} field (steps start at 1)`);
    // A step up to the field's size still means "every n": `*/60` minutes is hourly, `*/12` months
    // yearly. A larger one selects only the first value, so `*/99999999999999999999` would read as
    // "every hour" while saying otherwise: refused. Day of week has 7 days (7 is Sunday again).
    const size = f === DAY_OF_WEEK ? 7 : f.max - f.min + 1;
    if (n > size) {
      throw this.fail(
        `step \`${text}\` in \`${element}\` is larger than the ${f.label} field (at most ${size}, its number of values)`,
      );
    }
    return n;
  }

  /** Values of one list element (`*`, `a`, `a-b`, each optionally `/n`), added to `out`. */
  element(element: string, f: FieldDef, out: Set<number>): void {
    if (element === "") throw this.fail(`empty value in the ${f.label} field`);
    const slash = element.indexOf("/");
    const base = slash < 0 ? element : element.slice(0, slash);
    const step = slash < 0 ? 1 : this.step(element.slice(slash + 1), element, f);
    let lo: number;
    let hi: number;
    if (base === "*") {
      lo = f.min;
      hi = f.max;
    } else if (base === "?") {
      throw this.fail(`\`?\` is only allowed alone in the day of month and day of week fields`);
    } else {
      const dash = base.indexOf("-", 1);
      if (dash < 0) {
        lo = this.value(base, f);
        hi = slash < 0 ? lo : f.max;
      } else {
        lo = this.value(base.slice(0, dash), f);
        hi = this.value(base.slice(dash + 1), f);
        // `MON-SUN`, `5-0`: Sunday closing a day-of-week range means 7, as people read it.
        if (f === DAY_OF_WEEK && hi === 0 && lo > 0) hi = 7;
        if (lo > hi) throw this.fail(`range \`${base}\` is reversed in the ${f.label} field (${lo} is after ${hi})`);
      }
    }
    for (let v = lo; v <= hi; v += step) out.add(v);
  }

  field(text: string, f: FieldDef): Set<number> {
    const out = new Set<number>();
    for (const element of text.split(",")) this.element(element, f, out);
    return out;
  }
}

const sorted = (s: Iterable<number>): number[] => [...new Set(s)].sort((a, b) => a - b);

function parseDaysOfMonth(
  p: Parser,
  text: string,
): Pick<CronSpec, "days" | "lastDayOffsets" | "nearestWeekdays" | "lastWeekday"> {
  const days = new Set<number>();
  const lastDayOffsets = new Set<number>();
  const nearestWeekdays = new Set<number>();
  let lastWeekday = false;
  if (text === "?") return { days: range(1, 31), lastDayOffsets: [], nearestWeekdays: [], lastWeekday };
  for (const raw of text.split(",")) {
    const element = raw.toUpperCase();
    if (element === "L") lastDayOffsets.add(0);
    else if (element === "LW" || element === "WL") lastWeekday = true;
    else if (/^L-/.test(element)) {
      const n = element.slice(2);
      if (!/^\d+$/.test(n) || Number(n) < 1 || Number(n) > 30) {
        throw p.fail(`\`${raw}\` is out of range for the day of month field (L-1 to L-30)`);
      }
      lastDayOffsets.add(Number(n));
    } else if (/^[^,]*W$/.test(element)) {
      const day = element.slice(0, -1);
      if (!/^\d+$/.test(day)) {
        throw p.fail(
          `\`${raw}\`: \`W\` takes one day of the month (\`15W\` = the weekday nearest the 15th), not a range or a step`,
        );
      }
      nearestWeekdays.add(p.value(day, DAY_OF_MONTH));
    } else if (element.startsWith("L")) {
      throw p.fail(
        `\`${raw}\` is not a form of the day of month field: \`L\` (the last day), \`L-n\` (n days before it) or \`LW\` (the last weekday)`,
      );
    } else p.element(raw, DAY_OF_MONTH, days);
  }
  return {
    days: sorted(days),
    lastDayOffsets: sorted(lastDayOffsets),
    nearestWeekdays: sorted(nearestWeekdays),
    lastWeekday,
  };
}

function parseDaysOfWeek(p: Parser, text: string): Pick<CronSpec, "weekdays" | "lastWeekdaysOfMonth" | "nthWeekdays"> {
  const weekdays = new Set<number>();
  const lastOfMonth = new Set<number>();
  const nth = new Map<string, readonly [number, number]>();
  if (text === "?") return { weekdays: range(0, 6), lastWeekdaysOfMonth: [], nthWeekdays: [] };
  for (const raw of text.split(",")) {
    const hash = raw.indexOf("#");
    if (hash >= 0) {
      const wd = p.value(raw.slice(0, hash), DAY_OF_WEEK) % 7;
      const k = raw.slice(hash + 1);
      if (!/^\d+$/.test(k)) {
        throw p.fail(
          `\`${raw}\`: \`#\` takes one week number from 1 to 5 (\`5#3\` = the third Friday), not a range or a step`,
        );
      }
      if (Number(k) < 1 || Number(k) > 5) {
        throw p.fail(`\`${k}\` is out of range for the week number in \`${raw}\` (1-5)`);
      }
      nth.set(`${wd}#${k}`, [wd, Number(k)] as const);
    } else if (raw.length > 1 && /L$/i.test(raw)) {
      lastOfMonth.add(p.value(raw.slice(0, -1), DAY_OF_WEEK) % 7);
    } else if (raw.toUpperCase() === "L") {
      throw p.fail(
        "`L` alone is not allowed in the day of week field; use `nL` for the last weekday n (`5L` = last Friday)",
      );
    } else {
      const values = new Set<number>();
      p.element(raw, DAY_OF_WEEK, values);
      for (const v of values) weekdays.add(v % 7);
    }
  }
  return {
    weekdays: sorted(weekdays),
    lastWeekdaysOfMonth: sorted(lastOfMonth),
    nthWeekdays: [...nth.values()].sort((a, b) => a[0] - b[0] || a[1] - b[1]),
  };
}

function range(lo: number, hi: number): number[] {
  const out: number[] = [];
  for (let v = lo; v <= hi; v++) out.push(v);
  return out;
}

/** Control characters (line breaks included) and whitespace other than a space or a tab (crontab's blanks). */
const ODD_CHARACTER =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is its purpose
  /[\u0000-\u0008\u000a-\u001f\u007f-\u00a0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]/;

/** `text` with each character {@link ODD_CHARACTER} matches written as a `\uXXXX` escape. */
const escapedOdd = (text: string): string =>
  text.replace(new RegExp(ODD_CHARACTER.source, "g"), (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

/**
 * Refuses a new expression (input, not a stored one: a schedule stored before this check still
 * loads) holding a control character (a line break, an escape) or a space other than a blank:
 * stored as given, a line break split the schedule's row in `orbit schedule list` and a control
 * character reached the terminal. Shown escaped.
 */
export function checkCronText(expression: string): void {
  const odd = ODD_CHARACTER.exec(expression);
  if (odd === null) return;
  const code = `U+${(odd[0].codePointAt(0) as number).toString(16).toUpperCase().padStart(4, "0")}`;
  throw invalidSchedule(
    `cron "${escapedOdd(expression)}": the character ${code} at position ${odd.index + 1} is not allowed: separate the fields with spaces`,
  );
}

/**
 * Refuses what other schedulers put in a cron expression and Orbit keeps in a setting of its own,
 * naming that setting: pasted from them, `CRON_TZ=Europe/Berlin 0 2 * * *` was refused as
 * "`Berlin` is not a valid step in the second field" and `@every 1h` as an unknown macro, neither
 * saying where the zone or the interval goes (a tester).
 */
function refuseOtherDialects(p: Parser, source: string): void {
  const zoned = /^(CRON_TZ|TZ)=(\S*)\s*(.*)$/i.exec(source);
  if (zoned !== null) {
    const [, prefix, zone, rest] = zoned as unknown as [string, string, string, string];
    const name = zone === "" ? "<zone>" : zone;
    throw p.fail(
      `a time zone prefix (\`${prefix}=${zone}\`) is not part of Orbit's cron: give the zone as the schedule's timezone (--timezone ${name}; API: the \`timezone\` field)${rest === "" ? "" : ` and the cron without it (\`${rest}\`)`}`,
    );
  }
  const every = /^@every(?:\s+(\S.*))?$/i.exec(source);
  if (every !== null) {
    const duration = every[1] ?? "<duration>";
    throw p.fail(
      `\`@every\` is not part of Orbit's cron: a fixed interval is the schedule's interval (--interval ${duration}; API: the \`interval\` field), in place of cron`,
    );
  }
}

/**
 * A crontab line pasted whole, with its user column or its command after the five time fields
 * (`0 2 * * * /usr/bin/backup.sh`, `/etc/crontab`'s `0 2 * * * root backup.sh`): read as six
 * fields, it was refused for "`usr/bin/backup.sh` is not a valid step in the day of week field"
 * (a tester). A field from the sixth on that no cron field could hold (a path, a word of four or
 * more letters that is no day's name, a character outside cron's) is said to be the command.
 */
function refuseCrontabCommand(p: Parser, parts: readonly string[]): void {
  if (parts.length < 6) return;
  const command = parts
    .slice(5)
    .find(
      (f) =>
        /^[./~$]/.test(f) ||
        (/^[A-Za-z_]{4,}$/.test(f) && !/^(mon|tue|wed|thu|fri|sat|sun)/i.test(f)) ||
        /[^\w*,/?#-]/.test(f),
    );
  if (command === undefined) return;
  throw p.fail(
    `\`${command}\` looks like a crontab line's user or command: a schedule's cron is the time fields alone (\`${parts.slice(0, 5).join(" ")}\`), and what it starts is the schedule's workflow`,
  );
}

/** Parses a cron expression; throws INVALID_SCHEDULE with the seed's message form. */
export function parseCron(expression: string): CronSpec {
  const source = expression.trim();
  const p = new Parser(source);
  if (source === "") throw p.fail("the expression is empty");
  let text = source;
  // Only a text with `=` or a macro can be one of them: the common cron pays nothing for the check.
  if (source.startsWith("@") || source.includes("=")) refuseOtherDialects(p, source);
  if (source.startsWith("@")) {
    const macro = MACROS[source.toLowerCase()];
    if (macro === undefined) {
      throw p.fail(
        `unknown macro \`${source}\` (use @hourly, @daily, @midnight, @weekly, @monthly, @yearly or @annually)`,
      );
    }
    text = macro;
  }
  const parts = text.split(/\s+/);
  refuseCrontabCommand(p, parts);
  if (parts.length !== 5 && parts.length !== 6) {
    // Quartz's seventh field is a year: said, as for six fields.
    const year = parts.length === 7 && /^([1-9]\d{3}([-,/].*)?|\*)$/.test(parts[6] as string);
    throw p.fail(
      `expected 5 fields (minute hour day-of-month month day-of-week) or 6 (second minute hour day-of-month month day-of-week), found ${parts.length}${year ? "; the seventh looks like a year, and cron has no year field: to fire within one year, use start_at and end_at" : ""}`,
    );
  }
  const hasSeconds = parts.length === 6;
  // A year last (Quartz's and AWS's seventh field, given as a sixth, or as a fifth in place of the
  // day of week), alone, in a list, a range or a step (`2027`, `1,2027`, `2027-*`, `2026/1`):
  // "`2027` is out of range for the day of week field" did not say what was wrong (a tester).
  const last = parts[parts.length - 1] as string;
  if (last.split(",").some((e) => /^[1-9]\d{3}([-/].*)?$/.test(e))) {
    const names = hasSeconds
      ? "6 fields are second minute hour day-of-month month day-of-week"
      : "5 fields are minute hour day-of-month month day-of-week";
    throw p.fail(
      `\`${last}\` looks like a year, and cron has no year field: ${names}; to fire within one year, use start_at and end_at`,
    );
  }
  const fields = hasSeconds ? parts : ["0", ...parts];
  const [sec, min, hour, dom, month, dow] = fields as [string, string, string, string, string, string];
  return {
    source,
    hasSeconds,
    seconds: sorted(p.field(sec, SECOND)),
    minutes: sorted(p.field(min, MINUTE)),
    hours: sorted(p.field(hour, HOUR)),
    ...parseDaysOfMonth(p, dom),
    months: sorted(p.field(month, MONTH)),
    ...parseDaysOfWeek(p, dow),
    daysStar: dom.startsWith("*") || dom === "?",
    weekdaysStar: dow.startsWith("*") || dow === "?",
    fields: parts,
  };
}
