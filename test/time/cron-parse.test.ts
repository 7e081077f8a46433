import { describe, expect, it } from "vitest";
import { checkCronText, parseCron } from "../../src/time/cron-parse.js";
import { compileTiming } from "../../src/time/schedule-timing.js";
import { at, expectOrbitError } from "./support.js";

const range = (lo: number, hi: number, step = 1): number[] => {
  const out: number[] = [];
  for (let v = lo; v <= hi; v += step) out.push(v);
  return out;
};

/** The time-of-day and month fields of a spec, for compact comparisons. */
const plain = (expression: string) => {
  const s = parseCron(expression);
  return { sec: s.seconds, min: s.minutes, hour: s.hours, dom: s.days, month: s.months, dow: s.weekdays };
};

describe("parseCron: field count", () => {
  it("reads 5 fields as minute hour day-of-month month day-of-week, with second 0", () => {
    const s = parseCron("15 2 * * *");
    expect(s.hasSeconds).toBe(false);
    expect(s.seconds).toEqual([0]);
    expect(s.minutes).toEqual([15]);
    expect(s.hours).toEqual([2]);
    expect(s.days).toEqual(range(1, 31));
    expect(s.months).toEqual(range(1, 12));
    expect(s.weekdays).toEqual(range(0, 6));
    expect(s.fields).toEqual(["15", "2", "*", "*", "*"]);
  });

  it("reads 6 fields with a leading seconds field (Orion: `0 15 2 * * *` is 02:15:00)", () => {
    const s = parseCron("0 15 2 * * *");
    expect(s.hasSeconds).toBe(true);
    expect(s.seconds).toEqual([0]);
    expect(s.minutes).toEqual([15]);
    expect(s.hours).toEqual([2]);
    expect(s.fields).toHaveLength(6);
    expect(parseCron("*/20 * 2 * * *").seconds).toEqual([0, 20, 40]);
  });

  it("trims and accepts any run of blanks between fields", () => {
    const s = parseCron("  0\t2   *  * *  ");
    expect(s.source).toBe("0\t2   *  * *");
    expect(s.hours).toEqual([2]);
  });

  it("refuses a line break, another control character or a Unicode space in a new expression, shown escaped", () => {
    expectOrbitError(
      () => checkCronText("0 0 1 1 *\r\n"),
      'cron "0 0 1 1 *\\u000d\\u000a": the character U+000D at position 10 is not allowed: separate the fields with spaces',
    );
    expectOrbitError(
      () => checkCronText("0 0 1 1 *\u2028"),
      'cron "0 0 1 1 *\\u2028": the character U+2028 at position 10 is not allowed: separate the fields with spaces',
    );
    expectOrbitError(
      () => checkCronText("0\u00a00 1 1 *"),
      'cron "0\\u00a00 1 1 *": the character U+00A0 at position 2 is not allowed: separate the fields with spaces',
    );
    expectOrbitError(
      () => checkCronText("0 0 1 1 *\u001b]0;x\u0007"),
      'cron "0 0 1 1 *\\u001b]0;x\\u0007": the character U+001B at position 10 is not allowed: separate the fields with spaces',
    );
    // A stored schedule's expression (compiled without `now`) still loads.
    expect(parseCron("0 0 1 1 *\r\n").minutes).toEqual([0]);
    expect(() => compileTiming({ cron: "0 0 1 1 *\n" }, at("2026-01-01T00:00:00Z"))).toThrow(/U\+000A/);
  });

  it("refuses 4 fields", () => {
    expectOrbitError(
      () => parseCron("0 0 * *"),
      "cron `0 0 * *`: expected 5 fields (minute hour day-of-month month day-of-week) or 6 (second minute hour day-of-month month day-of-week), found 4",
    );
  });

  it("refuses 7 fields (a trailing year is not guessed at)", () => {
    expectOrbitError(
      () => parseCron("0 0 0 * * * 2027"),
      "cron `0 0 0 * * * 2027`: expected 5 fields (minute hour day-of-month month day-of-week) or 6 (second minute hour day-of-month month day-of-week), found 7; the seventh looks like a year, and cron has no year field: to fire within one year, use start_at and end_at",
    );
  });

  it("says a crontab line's user or command is not part of the cron", () => {
    // It said "`usr/bin/backup.sh` is not a valid step in the day of week field" (a tester).
    const said = (field: string) =>
      `\`${field}\` looks like a crontab line's user or command: a schedule's cron is the time fields alone (\`0 2 * * *\`), and what it starts is the schedule's workflow`;
    for (const [line, field] of [
      ["0 2 * * * /usr/bin/backup.sh", "/usr/bin/backup.sh"],
      ["0 2 * * * root /usr/bin/backup.sh", "root"],
      ["0 2 * * * backup.sh --full", "backup.sh"],
      ["0 2 * * * ./backup", "./backup"],
    ] as const) {
      expectOrbitError(() => parseCron(line), `cron \`${line}\`: ${said(field)}`);
    }
    // Six fields of cron's own are read as ever, a day's full name refused as a value.
    expect(() => parseCron("0 0 2 ? * MON#2")).not.toThrow();
    expect(() => parseCron("0 0 2 * * MONDAY")).toThrow(/day of week/);
  });

  it("says a year given as a sixth field is a year, not a day of the week", () => {
    // It said "`2027` is out of range for the day of week field (0-7)": the first field had
    // become the seconds, which the message did not say (a tester).
    for (const year of ["2027", "2027-2028", "2027,2028", "2027-*", "2026/1"]) {
      expectOrbitError(
        () => parseCron(`0 0 1 1 * ${year}`),
        `cron \`0 0 1 1 * ${year}\`: \`${year}\` looks like a year, and cron has no year field: 6 fields are second minute hour day-of-month month day-of-week; to fire within one year, use start_at and end_at`,
      );
    }
    for (const field of ["1,2027", "*,2027"]) {
      expectOrbitError(
        () => parseCron(`0 0 0 1 1 ${field}`),
        `cron \`0 0 0 1 1 ${field}\`: \`${field}\` looks like a year, and cron has no year field: 6 fields are second minute hour day-of-month month day-of-week; to fire within one year, use start_at and end_at`,
      );
    }
    expectOrbitError(
      () => parseCron("0 0 1 1 2027"),
      "cron `0 0 1 1 2027`: `2027` looks like a year, and cron has no year field: 5 fields are minute hour day-of-month month day-of-week; to fire within one year, use start_at and end_at",
    );
    expect(plain("0 0 1 1 * 5").dow).toEqual([5]);
    expect(plain("0 0 1 1 0007").dow).toEqual([0]);
  });

  it("refuses an empty expression", () => {
    expectOrbitError(() => parseCron("   "), "cron ``: the expression is empty");
  });
});

describe("parseCron: field grammar", () => {
  it("values, ranges and lists", () => {
    expect(plain("0,30 9-17 1,15 1-3,12 1-5")).toEqual({
      sec: [0],
      min: [0, 30],
      hour: range(9, 17),
      dom: [1, 15],
      month: [1, 2, 3, 12],
      dow: [1, 2, 3, 4, 5],
    });
  });

  it("`*/n` steps from the field's minimum", () => {
    expect(parseCron("*/15 * * * *").minutes).toEqual([0, 15, 30, 45]);
    expect(parseCron("0 */5 * * *").hours).toEqual([0, 5, 10, 15, 20]);
    expect(parseCron("0 0 */14 * *").days).toEqual([1, 15, 29]);
    expect(parseCron("0 0 1 */4 *").months).toEqual([1, 5, 9]);
    expect(parseCron("*/7 * * * * *").seconds).toEqual([0, 7, 14, 21, 28, 35, 42, 49, 56]);
  });

  it("`a-b/n` steps inside the range", () => {
    expect(parseCron("10-40/10 * * * *").minutes).toEqual([10, 20, 30, 40]);
    expect(parseCron("0 1-23/2 * * *").hours).toEqual(range(1, 23, 2));
    expect(parseCron("0 0 * * 1-5/2").weekdays).toEqual([1, 3, 5]);
  });

  it("`a/n` runs from a to the end of the range: `5/20` is 5, 25, 45", () => {
    expect(parseCron("5/20 * * * *").minutes).toEqual([5, 25, 45]);
    expect(parseCron("0 3/6 * * *").hours).toEqual([3, 9, 15, 21]);
    expect(parseCron("0 0 10/10 * *").days).toEqual([10, 20, 30]);
    expect(parseCron("0 0 1 2/5 *").months).toEqual([2, 7, 12]);
  });

  it("a list may mix values, ranges and steps; duplicates collapse and values are sorted", () => {
    expect(parseCron("50,1-3,*/20,5/30,2 * * * *").minutes).toEqual([0, 1, 2, 3, 5, 20, 35, 40, 50]);
  });

  it("month names, case-insensitive, in values, ranges and lists", () => {
    expect(parseCron("0 0 1 JAN,JUL *").months).toEqual([1, 7]);
    expect(parseCron("0 0 1 jan,Jul *").months).toEqual([1, 7]);
    expect(parseCron("0 0 1 mar-MAY *").months).toEqual([3, 4, 5]);
    expect(parseCron("0 0 1 FEB/3 *").months).toEqual([2, 5, 8, 11]);
    expect(parseCron("0 0 1 dec *").months).toEqual([12]);
  });

  it("day names, case-insensitive", () => {
    expect(parseCron("30 9 * * MON-FRI").weekdays).toEqual([1, 2, 3, 4, 5]);
    expect(parseCron("30 9 * * mon-fri").weekdays).toEqual([1, 2, 3, 4, 5]);
    expect(parseCron("30 9 * * sun,Sat").weekdays).toEqual([0, 6]);
    expect(parseCron("30 9 * * tUe").weekdays).toEqual([2]);
  });

  it("day of week 0-7 with 0 and 7 both Sunday", () => {
    expect(parseCron("0 0 * * 0").weekdays).toEqual([0]);
    expect(parseCron("0 0 * * 7").weekdays).toEqual([0]);
    expect(parseCron("0 0 * * 5-7").weekdays).toEqual([0, 5, 6]);
    expect(parseCron("0 0 * * 0,7").weekdays).toEqual([0]);
    expect(parseCron("0 0 * * *").weekdays).toEqual(range(0, 6));
  });

  it("records which day fields start with `*` or are `?` (the Vixie rule)", () => {
    const both = parseCron("0 0 13 * 5");
    expect([both.daysStar, both.weekdaysStar]).toEqual([false, false]);
    const stepStar = parseCron("0 0 */14 * 4");
    expect([stepStar.daysStar, stepStar.weekdaysStar]).toEqual([true, false]);
    const q = parseCron("0 0 ? * MON");
    expect([q.daysStar, q.weekdaysStar]).toEqual([true, false]);
    const q2 = parseCron("0 0 15 * ?");
    expect([q2.daysStar, q2.weekdaysStar]).toEqual([false, true]);
  });
});

describe("parseCron: macros", () => {
  const cases: Array<[string, string]> = [
    ["@hourly", "0 * * * *"],
    ["@daily", "0 0 * * *"],
    ["@midnight", "0 0 * * *"],
    ["@weekly", "0 0 * * 0"],
    ["@monthly", "0 0 1 * *"],
    ["@yearly", "0 0 1 1 *"],
    ["@annually", "0 0 1 1 *"],
  ];
  it.each(cases)("%s stands for %s", (macro, expansion) => {
    const m = parseCron(macro);
    const e = parseCron(expansion);
    expect(m.source).toBe(macro);
    expect(m.hasSeconds).toBe(false);
    expect({ ...m, source: "", fields: [] }).toEqual({ ...e, source: "", fields: [] });
    expect(m.fields).toEqual(expansion.split(" "));
  });

  it("macros are case-insensitive", () => {
    expect(parseCron("@DAILY").hours).toEqual([0]);
  });

  it("refuses an unknown macro", () => {
    expectOrbitError(
      () => parseCron("@reboot"),
      "cron `@reboot`: unknown macro `@reboot` (use @hourly, @daily, @midnight, @weekly, @monthly, @yearly or @annually)",
    );
  });

  it("names the setting for what other schedulers write into the expression", () => {
    // Pasted from Kubernetes, robfig/cron or Go: "`Berlin` is not a valid step in the second field"
    // and "unknown macro `@every 1h`" did not say where the zone or the interval goes (a tester).
    for (const prefix of ["CRON_TZ", "TZ"]) {
      expectOrbitError(
        () => parseCron(`${prefix}=Europe/Berlin 0 2 * * *`),
        `cron \`${prefix}=Europe/Berlin 0 2 * * *\`: a time zone prefix (\`${prefix}=Europe/Berlin\`) is not part of Orbit's cron: give the zone as the schedule's timezone (--timezone Europe/Berlin; API: the \`timezone\` field) and the cron without it (\`0 2 * * *\`)`,
      );
    }
    expectOrbitError(
      () => parseCron("CRON_TZ="),
      "cron `CRON_TZ=`: a time zone prefix (`CRON_TZ=`) is not part of Orbit's cron: give the zone as the schedule's timezone (--timezone <zone>; API: the `timezone` field)",
    );
    expectOrbitError(
      () => parseCron("@every 1h"),
      "cron `@every 1h`: `@every` is not part of Orbit's cron: a fixed interval is the schedule's interval (--interval 1h; API: the `interval` field), in place of cron",
    );
    expectOrbitError(
      () => parseCron("@every"),
      "cron `@every`: `@every` is not part of Orbit's cron: a fixed interval is the schedule's interval (--interval <duration>; API: the `interval` field), in place of cron",
    );
    // The INVALID_SCHEDULE code, as every cron refusal.
    expect(() => parseCron("@every 1h")).toThrow(expect.objectContaining({ code: "INVALID_SCHEDULE" }));
  });
});

describe("parseCron: Quartz extensions", () => {
  it("`L` and `L-n` in day of month", () => {
    const s = parseCron("0 0 L * *");
    expect(s.lastDayOffsets).toEqual([0]);
    expect(s.days).toEqual([]);
    expect(s.daysStar).toBe(false);
    expect(parseCron("0 0 L-3 * *").lastDayOffsets).toEqual([3]);
    expect(parseCron("0 0 l,L-1,1 * *")).toMatchObject({ lastDayOffsets: [0, 1], days: [1] });
    expect(parseCron("0 0 L-30 * *").lastDayOffsets).toEqual([30]);
  });

  it("`nW` and `LW` in day of month", () => {
    expect(parseCron("0 0 15W * *").nearestWeekdays).toEqual([15]);
    expect(parseCron("0 0 1w,31W * *").nearestWeekdays).toEqual([1, 31]);
    const lw = parseCron("0 0 LW * *");
    expect(lw.lastWeekday).toBe(true);
    expect(lw.lastDayOffsets).toEqual([]);
    expect(parseCron("0 0 lw * *").lastWeekday).toBe(true);
  });

  it("`nL` in day of week (`5L` = last Friday), by number or name", () => {
    expect(parseCron("0 0 * * 5L").lastWeekdaysOfMonth).toEqual([5]);
    expect(parseCron("0 0 * * FRIL").lastWeekdaysOfMonth).toEqual([5]);
    expect(parseCron("0 0 * * 7l").lastWeekdaysOfMonth).toEqual([0]);
    expect(parseCron("0 0 * * 5L").weekdays).toEqual([]);
  });

  it("`n#k` in day of week (`MON#2`)", () => {
    expect(parseCron("0 0 * * MON#2").nthWeekdays).toEqual([[1, 2]]);
    expect(parseCron("0 0 * * fri#5,1#1,7#3").nthWeekdays).toEqual([
      [0, 3],
      [1, 1],
      [5, 5],
    ]);
  });

  it("`?` means `*` in either day field", () => {
    const a = parseCron("0 0 ? * MON");
    expect(a.days).toEqual(range(1, 31));
    expect(a.weekdays).toEqual([1]);
    const b = parseCron("0 0 15 * ?");
    expect(b.days).toEqual([15]);
    expect(b.weekdays).toEqual(range(0, 6));
  });

  it("refuses `?` outside the day fields and the extensions' out-of-range forms", () => {
    expectOrbitError(
      () => parseCron("? * * * *"),
      "cron `? * * * *`: `?` is only allowed alone in the day of month and day of week fields",
    );
    expectOrbitError(
      () => parseCron("0 0 L-31 * *"),
      "cron `0 0 L-31 * *`: `L-31` is out of range for the day of month field (L-1 to L-30)",
    );
    expectOrbitError(
      () => parseCron("0 0 32W * *"),
      "cron `0 0 32W * *`: `32` is out of range for the day of month field (1-31)",
    );
    expectOrbitError(
      () => parseCron("0 0 * * 5#6"),
      "cron `0 0 * * 5#6`: `6` is out of range for the week number in `5#6` (1-5)",
    );
    expectOrbitError(
      () => parseCron("0 0 * * 5#0"),
      "cron `0 0 * * 5#0`: `0` is out of range for the week number in `5#0` (1-5)",
    );
    expectOrbitError(
      () => parseCron("0 0 * * 8L"),
      "cron `0 0 * * 8L`: `8` is out of range for the day of week field (0-7)",
    );
    expectOrbitError(
      () => parseCron("0 0 * * L"),
      "cron `0 0 * * L`: `L` alone is not allowed in the day of week field; use `nL` for the last weekday n (`5L` = last Friday)",
    );
  });

  it("names the form a Quartz element misuses, not a token of it (`LW` alone is valid; `-1` is the mistake)", () => {
    expectOrbitError(
      () => parseCron("0 2 LW-1 * *"),
      "cron `0 2 LW-1 * *`: `LW-1` is not a form of the day of month field: `L` (the last day), `L-n` (n days before it) or `LW` (the last weekday)",
    );
    expectOrbitError(
      () => parseCron("0 2 1-5W * *"),
      "cron `0 2 1-5W * *`: `1-5W`: `W` takes one day of the month (`15W` = the weekday nearest the 15th), not a range or a step",
    );
    expectOrbitError(
      () => parseCron("0 2 * * 5#1-3"),
      "cron `0 2 * * 5#1-3`: `5#1-3`: `#` takes one week number from 1 to 5 (`5#3` = the third Friday), not a range or a step",
    );
    expectOrbitError(
      () => parseCron("0 2 * * MON#2/2"),
      "cron `0 2 * * MON#2/2`: `MON#2/2`: `#` takes one week number from 1 to 5 (`5#3` = the third Friday), not a range or a step",
    );
  });
});

describe("parseCron: errors in the seed's form", () => {
  const cases: Array<[string, string]> = [
    ["0 25 * * *", "`25` is out of range for the hour field (0-23)"],
    ["60 * * * *", "`60` is out of range for the minute field (0-59)"],
    ["60 * * * * *", "`60` is out of range for the second field (0-59)"],
    ["0 0 0 * *", "`0` is out of range for the day of month field (1-31)"],
    ["0 0 32 * *", "`32` is out of range for the day of month field (1-31)"],
    ["0 0 * 0 *", "`0` is out of range for the month field (1-12)"],
    ["0 0 * 13 *", "`13` is out of range for the month field (1-12)"],
    ["0 0 * * 8", "`8` is out of range for the day of week field (0-7)"],
    ["0 0-24 * * *", "`24` is out of range for the hour field (0-23)"],
    ["*/0 * * * *", "step `0` in `*/0` is not allowed in the minute field (steps start at 1)"],
    ["0 1-5/0 * * *", "step `0` in `1-5/0` is not allowed in the hour field (steps start at 1)"],
    ["*/ * * * *", "missing step after `/` in the minute field"],
    ["*/x * * * *", "`x` is not a valid step in the minute field"],
    ["5-1 * * * *", "range `5-1` is reversed in the minute field (5 is after 1)"],
    ["0 0 * DEC-JAN *", "range `DEC-JAN` is reversed in the month field (12 is after 1)"],
    ["0 0 * FOO *", "`FOO` is not a valid value for the month field (1-12 or JAN-DEC)"],
    ["0 0 * * FOO", "`FOO` is not a valid value for the day of week field (0-7 or SUN-SAT)"],
    ["0 0 * * MONDAY", "`MONDAY` is not a valid value for the day of week field (0-7 or SUN-SAT)"],
    ["a * * * *", "`a` is not a valid value for the minute field (0-59)"],
    ["0 JAN * * *", "`JAN` is not a valid value for the hour field (0-23)"],
    ["1,,2 * * * *", "empty value in the minute field"],
    ["1, * * * *", "empty value in the minute field"],
    ["0 0 * * 1-", "empty value in the day of week field"],
  ];
  it.each(cases)("`%s` → %s", (expression, message) => {
    expectOrbitError(() => parseCron(expression), `cron \`${expression}\`: ${message}`);
  });

  it("the exact seed example", () => {
    expectOrbitError(
      () => compileTiming({ cron: "0 25 * * *" }),
      "cron `0 25 * * *`: `25` is out of range for the hour field (0-23)",
    );
  });
});

describe("compileTiming: expressions that never fire", () => {
  const now = at("2026-11-15T18:51:00Z");

  it("refuses `0 0 30 2 *` (30 February) as never firing in the next five years", () => {
    expectOrbitError(
      () => compileTiming({ cron: "0 0 30 2 *" }, now),
      "cron `0 0 30 2 *`: never fires in the next five years",
    );
    expectOrbitError(
      () => compileTiming({ cron: "0 0 0 30 2 *", timezone: "Europe/Berlin" }, now),
      "cron `0 0 0 30 2 *`: never fires in the next five years",
    );
    expectOrbitError(
      () => compileTiming({ cron: "0 0 31 4,6,9,11 *", timezone: "America/New_York" }, now),
      "cron `0 0 31 4,6,9,11 *`: never fires in the next five years",
    );
  });

  it("accepts rare expressions that fire within five years, refuses those that fire later", () => {
    expect(compileTiming({ cron: "0 0 29 2 *" }, now).kind).toBe("cron");
    // Only a leap February that starts on a Friday has a fifth Friday; the next one is in 2036.
    expectOrbitError(
      () => compileTiming({ cron: "0 0 * 2 FRI#5" }, now),
      "cron `0 0 * 2 FRI#5`: never fires in the next five years",
    );
    // February 2028 has 29 days and starts on a Tuesday: its 5th Tuesday is the 29th.
    expect(compileTiming({ cron: "0 0 * 2 TUE#5" }, now).timing.nextAfter(now)).toBe(at("2028-02-29T00:00:00Z"));
  });

  it("without `now` it does not check (the API passes now at create and update)", () => {
    expect(compileTiming({ cron: "0 0 30 2 *" }).timing.nextAfter(now)).toBeNull();
  });
});

describe("day-of-week ranges closed by Sunday", () => {
  it("MON-SUN and 5-0 read Sunday as 7", () => {
    expect(parseCron("0 0 * * MON-SUN").weekdays).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(parseCron("0 0 * * 5-0").weekdays).toEqual([0, 5, 6]);
    expect(() => parseCron("0 0 * * 3-1")).toThrow("range `3-1` is reversed in the day of week field (3 is after 1)");
  });
});
