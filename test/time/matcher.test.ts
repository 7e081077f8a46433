import { describe, expect, it } from "vitest";
import { CronMatcher, NONE } from "../../src/time/cron-matcher.js";
import { parseCron } from "../../src/time/cron-parse.js";
import { at, next } from "./support.js";

/** Dates (YYYY-MM-DD, UTC) of the next n occurrences of a daily-at-midnight style expression. */
const dates = (cron: string, from: string, n: number): string[] => next({ cron }, from, n).map((t) => t.slice(0, 10));

const matcher = (cron: string) => new CronMatcher(parseCron(cron));

describe("day fields: the Vixie rule", () => {
  it("`0 0 13 * 5` fires on the 13th and on every Friday (both restricted: either)", () => {
    expect(dates("0 0 13 * 5", "2025-12-31T23:59:59Z", 6)).toEqual([
      "2026-01-02",
      "2026-01-09",
      "2026-01-13",
      "2026-01-16",
      "2026-01-23",
      "2026-01-30",
    ]);
  });

  it("`0 0 */14 * 4` fires only on the 1st, 15th and 29th when they are Thursdays (`*`-field: both)", () => {
    expect(dates("0 0 */14 * 4", "2025-12-31T00:00:00Z", 6)).toEqual([
      "2026-01-01",
      "2026-01-15",
      "2026-01-29",
      "2026-10-01",
      "2026-10-15",
      "2026-10-29",
    ]);
  });

  it("`0 0 1-7 * MON` is days 1-7 or any Monday, the classic Vixie surprise", () => {
    expect(dates("0 0 1-7 * MON", "2026-01-31T12:00:00Z", 10)).toEqual([
      "2026-02-01",
      "2026-02-02",
      "2026-02-03",
      "2026-02-04",
      "2026-02-05",
      "2026-02-06",
      "2026-02-07",
      "2026-02-09",
      "2026-02-16",
      "2026-02-23",
    ]);
  });

  it("`?` and a bare `*` in one day field leave the other in charge", () => {
    expect(dates("0 0 ? * 5", "2026-01-01T00:00:00Z", 3)).toEqual(["2026-01-02", "2026-01-09", "2026-01-16"]);
    expect(dates("0 0 13 * ?", "2026-01-01T00:00:00Z", 2)).toEqual(["2026-01-13", "2026-02-13"]);
    expect(dates("0 0 13 * *", "2026-01-01T00:00:00Z", 2)).toEqual(["2026-01-13", "2026-02-13"]);
    expect(dates("0 0 * * 5", "2026-01-01T00:00:00Z", 2)).toEqual(["2026-01-02", "2026-01-09"]);
  });

  it("Quartz day-of-month forms count as restricted: `L` with Fridays is either", () => {
    expect(dates("0 0 L * 5", "2026-02-01T00:00:00Z", 5)).toEqual([
      "2026-02-06",
      "2026-02-13",
      "2026-02-20",
      "2026-02-27",
      "2026-02-28",
    ]);
  });
});

describe("day fields: `nW`", () => {
  it("1W on a Saturday moves forward to Monday the 3rd, never back into the previous month", () => {
    // August 2026 and November 2025 start on a Saturday.
    expect(dates("0 0 1W 8 *", "2026-01-01T00:00:00Z", 1)).toEqual(["2026-08-03"]);
    expect(dates("0 0 1W 11 *", "2025-01-01T00:00:00Z", 1)).toEqual(["2025-11-03"]);
  });

  it("1W on a Sunday is Monday the 2nd; on a weekday it is the 1st", () => {
    expect(dates("0 0 1W * *", "2026-01-15T00:00:00Z", 4)).toEqual([
      "2026-02-02", // Sunday 1st
      "2026-03-02", // Sunday 1st
      "2026-04-01", // Wednesday
      "2026-05-01", // Friday
    ]);
  });

  it("31W when the 31st is a Sunday moves back to Friday the 29th, never into the next month", () => {
    // May 2026 and January 2027 end on a Sunday.
    expect(dates("0 0 31W 5 *", "2026-01-01T00:00:00Z", 1)).toEqual(["2026-05-29"]);
    expect(dates("0 0 31W 1 *", "2026-06-01T00:00:00Z", 1)).toEqual(["2027-01-29"]);
  });

  it("the last day of a shorter month on a Sunday also moves back to the Friday", () => {
    // November 2025 ends on Sunday the 30th; February 2027 on Sunday the 28th.
    expect(dates("0 0 30W 11 *", "2025-01-01T00:00:00Z", 1)).toEqual(["2025-11-28"]);
    expect(dates("0 0 28W 2 *", "2026-06-01T00:00:00Z", 1)).toEqual(["2027-02-26"]);
  });

  it("31W on a Saturday is Friday the 30th", () => {
    // January and October 2026 end on a Saturday.
    expect(dates("0 0 31W 1,10 *", "2025-12-01T00:00:00Z", 2)).toEqual(["2026-01-30", "2026-10-30"]);
  });

  it("a mid-month day moves to the nearest weekday on either side", () => {
    // 15 Feb 2026 is a Sunday → Monday 16th; 15 Aug 2026 is a Saturday → Friday 14th.
    expect(dates("0 0 15W 2,8 *", "2026-01-01T00:00:00Z", 2)).toEqual(["2026-02-16", "2026-08-14"]);
  });

  it("nW for a day the month does not have does not fire that month (31W skips 30-day months)", () => {
    expect(dates("0 0 31W 4,5 *", "2026-01-01T00:00:00Z", 1)).toEqual(["2026-05-29"]);
  });
});

describe("day fields: `LW`, `L`, `L-n`", () => {
  it("LW is the last weekday of the month", () => {
    expect(dates("0 0 LW * *", "2026-01-01T00:00:00Z", 5)).toEqual([
      "2026-01-30", // 31st is a Saturday
      "2026-02-27", // 28th is a Saturday
      "2026-03-31", // Tuesday
      "2026-04-30", // Thursday
      "2026-05-29", // 31st is a Sunday
    ]);
  });

  it("L is the last day, leap years included", () => {
    expect(dates("0 0 L 2 *", "2026-06-01T00:00:00Z", 3)).toEqual(["2027-02-28", "2028-02-29", "2029-02-28"]);
  });

  it("L-3 is three days before the last day", () => {
    expect(dates("0 0 L-3 * *", "2026-01-01T00:00:00Z", 4)).toEqual([
      "2026-01-28",
      "2026-02-25",
      "2026-03-28",
      "2026-04-27",
    ]);
    expect(dates("0 0 L-3 2 *", "2027-06-01T00:00:00Z", 1)).toEqual(["2028-02-26"]);
  });

  it("L-30 only exists in 31-day months", () => {
    expect(dates("0 0 L-30 * *", "2026-01-15T00:00:00Z", 2)).toEqual(["2026-03-01", "2026-05-01"]);
  });
});

describe("day of week: `nL` and `n#k`", () => {
  it("5L is the last Friday of the month", () => {
    expect(dates("0 0 * * 5L", "2026-01-01T00:00:00Z", 5)).toEqual([
      "2026-01-30",
      "2026-02-27",
      "2026-03-27",
      "2026-04-24",
      "2026-05-29",
    ]);
  });

  it("MON#2 is the second Monday", () => {
    expect(dates("0 0 * * MON#2", "2026-01-01T00:00:00Z", 3)).toEqual(["2026-01-12", "2026-02-09", "2026-03-09"]);
  });

  it("5#5 skips the months without a fifth Friday", () => {
    expect(dates("0 0 * * 5#5", "2026-01-01T00:00:00Z", 4)).toEqual([
      "2026-01-30",
      "2026-05-29",
      "2026-07-31",
      "2026-10-30",
    ]);
  });

  it("7#1 is the first Sunday (7 is Sunday)", () => {
    expect(dates("0 0 * * 7#1", "2026-01-01T00:00:00Z", 2)).toEqual(["2026-01-04", "2026-02-01"]);
  });
});

describe("CronMatcher on wall time", () => {
  it("next is the first match at or after w and below the limit", () => {
    const m = matcher("*/15 * * * *");
    expect(m.next(at("2026-03-29T02:00:00Z"), at("2026-03-30T00:00:00Z"))).toBe(at("2026-03-29T02:00:00Z"));
    expect(m.next(at("2026-03-29T02:00:00.001Z"), at("2026-03-30T00:00:00Z"))).toBe(at("2026-03-29T02:15:00Z"));
    expect(m.next(at("2026-03-29T23:50:00Z"), at("2026-03-30T00:00:00Z"))).toBe(NONE);
    expect(m.next(at("2026-03-29T23:50:00Z"), at("2026-03-30T00:00:01Z"))).toBe(at("2026-03-30T00:00:00Z"));
  });

  it("next rolls over seconds, minutes, hours, days, months and years", () => {
    const m = matcher("30 59 23 31 12 *");
    expect(m.next(at("2026-01-01T00:00:00Z"), at("2030-01-01T00:00:00Z"))).toBe(at("2026-12-31T23:59:30Z"));
    expect(m.next(at("2026-12-31T23:59:30.5Z"), at("2030-01-01T00:00:00Z"))).toBe(at("2027-12-31T23:59:30Z"));
  });

  it("matches and count agree with the expression", () => {
    const m = matcher("*/20 * 2 * * *");
    expect(m.matches(at("2026-03-29T02:00:40Z"))).toBe(true);
    expect(m.matches(at("2026-03-29T02:00:41Z"))).toBe(false);
    expect(m.matches(at("2026-03-29T03:00:00Z"))).toBe(false);
    expect(m.perDay).toBe(180);
    expect(m.count(at("2026-03-29T00:00:00Z"), at("2026-03-30T00:00:00Z"))).toBe(180);
    expect(m.count(at("2026-03-29T02:00:00Z"), at("2026-03-29T02:00:40Z"))).toBe(2);
    expect(m.count(at("2026-03-29T02:00:00Z"), at("2026-03-29T02:00:40.001Z"))).toBe(3);
    expect(m.count(at("2026-01-01T00:00:00Z"), at("2027-01-01T00:00:00Z"))).toBe(365 * 180);
  });

  it("count over months with Quartz day fields counts days from the mask", () => {
    // One fire per month at the last weekday: 12 in 2026.
    expect(matcher("0 0 LW * *").count(at("2026-01-01T00:00:00Z"), at("2027-01-01T00:00:00Z"))).toBe(12);
    // Fridays in 2026: 52; 13ths: 12, of which Feb, Mar and Nov are Fridays.
    expect(matcher("0 0 13 * 5").count(at("2026-01-01T00:00:00Z"), at("2027-01-01T00:00:00Z"))).toBe(52 + 12 - 3);
  });
});
