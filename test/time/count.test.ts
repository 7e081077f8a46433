/**
 * countBetween, occurrenceRange and kthLast. Counting is O(days + transitions), never O(occurrences):
 * these tests count tens of millions of per-second occurrences, so each has a tight timeout.
 */
import { describe, expect, it } from "vitest";
import { formatInstant } from "../../src/time/format.js";
import { compileTiming } from "../../src/time/schedule-timing.js";
import { kthLast, nextOccurrences, occurrenceRange } from "../../src/time/timing.js";
import { at } from "./support.js";

const FAST = { timeout: 5_000 };
const berlin = (cron: string, dst: string) => compileTiming({ cron, timezone: "Europe/Berlin", dst }).timing;

// Berlin's local year 2026 is (2025-12-31T23:00Z, 2026-12-31T23:00Z]: 365 days of instants. Its
// spring night lacks 02:00-02:59 (3600 seconds) and its autumn night has 02:00-02:59 twice.
const LOCAL_YEAR = [at("2025-12-31T23:00:00Z"), at("2026-12-31T23:00:00Z")] as const;
const UTC_YEAR = [at("2026-01-01T00:00:00Z"), at("2027-01-01T00:00:00Z")] as const;
const SECONDS = 365 * 86_400;

describe("per-second over a whole year in Europe/Berlin", () => {
  // Every instant of the year has a wall reading that `* * * * * *` matches, so the only question is
  // which instants a policy leaves out. The gap's wall seconds exist on no instant; under `shift` they
  // move to 03:00:00-03:59:59 CEST, seconds that already fire, so they add nothing (duplicates). In
  // the repeat, `first` leaves out the 3600 second-pass instants and `last` the 3600 first-pass ones.
  // Counted as wall readings instead: 365·86400 − 3600 readings exist, plus 3600 for a repeat that fires twice.
  const expected: Array<[string, number]> = [
    ["once", SECONDS - 3600],
    ["wall_clock", SECONDS],
    ["shift:first", SECONDS - 3600],
    ["shift:last", SECONDS - 3600],
    ["shift:both", SECONDS],
    ["skip:first", SECONDS - 3600],
    ["skip:last", SECONDS - 3600],
    ["skip:both", SECONDS],
  ];

  it.each(expected)(
    "%s counts %i",
    (dst, n) => {
      const t = berlin("* * * * * *", dst);
      expect(t.countBetween(...LOCAL_YEAR)).toBe(n);
      expect(t.countBetween(...UTC_YEAR)).toBe(n);
    },
    FAST.timeout,
  );

  it("once: 365·86400 − 3600 = 31 532 400", FAST, () => {
    expect(berlin("* * * * * *", "once").countBetween(...LOCAL_YEAR)).toBe(31_532_400);
  });

  it("the spring night (local day of 29 March, 23 hours) and the autumn night (25 hours)", FAST, () => {
    const spring = [at("2026-03-28T23:00:00Z"), at("2026-03-29T22:00:00Z")] as const;
    const autumn = [at("2026-10-24T22:00:00Z"), at("2026-10-25T23:00:00Z")] as const;
    for (const dst of ["once", "wall_clock"])
      expect(berlin("* * * * * *", dst).countBetween(...spring)).toBe(23 * 3600);
    expect(berlin("* * * * * *", "once").countBetween(...autumn)).toBe(24 * 3600);
    expect(berlin("* * * * * *", "wall_clock").countBetween(...autumn)).toBe(25 * 3600);
  });

  it("`*/20 * 2 * * *` over the year: the gap hour and the repeated hour move the count by ±180", FAST, () => {
    const perDay = 180;
    expect(berlin("*/20 * 2 * * *", "once").countBetween(...LOCAL_YEAR)).toBe(365 * perDay);
    expect(berlin("*/20 * 2 * * *", "wall_clock").countBetween(...LOCAL_YEAR)).toBe(365 * perDay);
    expect(berlin("*/20 * 2 * * *", "skip:first").countBetween(...LOCAL_YEAR)).toBe(364 * perDay);
    expect(berlin("*/20 * 2 * * *", "shift:both").countBetween(...LOCAL_YEAR)).toBe(366 * perDay);
  });

  it("`30 2 * * *` over the year: 365, 365, 364, 366", FAST, () => {
    expect(berlin("30 2 * * *", "once").countBetween(...LOCAL_YEAR)).toBe(365);
    expect(berlin("30 2 * * *", "wall_clock").countBetween(...LOCAL_YEAR)).toBe(365);
    expect(berlin("30 2 * * *", "skip:first").countBetween(...LOCAL_YEAR)).toBe(364);
    expect(berlin("30 2 * * *", "shift:both").countBetween(...LOCAL_YEAR)).toBe(366);
  });

  it("kthLast across the left-out second pass of the autumn hour", FAST, () => {
    const t = berlin("* * * * * *", "once");
    const from = at("2026-10-25T00:00:00Z");
    const to = at("2026-10-25T02:00:00Z");
    // 00:00:01Z-00:59:59Z (3599), then nothing until 02:00:00Z (03:00:00 CET).
    expect(t.countBetween(from, to)).toBe(3600);
    expect(formatInstant(kthLast(t, from, to, 1) as number)).toBe("2026-10-25T02:00:00Z");
    expect(formatInstant(kthLast(t, from, to, 2) as number)).toBe("2026-10-25T00:59:59Z");
    expect(formatInstant(kthLast(t, from, to, 3600) as number)).toBe("2026-10-25T00:00:01Z");
    expect(kthLast(t, from, to, 3601)).toBeNull();
  });

  it("occurrenceRange over a year-long outage", FAST, () => {
    const r = occurrenceRange(berlin("* * * * * *", "wall_clock"), ...LOCAL_YEAR);
    expect(r.count).toBe(SECONDS);
    expect(formatInstant(r.first as number)).toBe("2025-12-31T23:00:01Z");
    expect(formatInstant(r.last as number)).toBe("2026-12-31T23:00:00Z");
  });
});

describe("intervals", () => {
  it("a 1-second interval down for a day counts 86400", FAST, () => {
    const t = compileTiming({ interval: "1s" }).timing;
    const from = at("2026-11-15T18:51:00Z");
    const to = at("2026-11-16T18:51:00Z");
    expect(t.countBetween(from, to)).toBe(86_400);
    const r = occurrenceRange(t, from, to);
    expect(r).toEqual({ count: 86_400, first: at("2026-11-15T18:51:01Z"), last: to });
    expect(kthLast(t, from, to, 86_400)).toBe(at("2026-11-15T18:51:01Z"));
  });

  it("start_at and end_at clip the count", FAST, () => {
    const t = compileTiming({
      interval: "1s",
      startAt: at("2026-11-15T20:00:00Z"),
      endAt: at("2026-11-15T21:00:00Z"),
    }).timing;
    // start_at itself is the first occurrence, end_at the last: 3601.
    expect(t.countBetween(at("2026-11-15T00:00:00Z"), at("2026-11-16T00:00:00Z"))).toBe(3601);
    expect(t.countBetween(at("2026-11-15T20:00:00Z"), at("2026-11-16T00:00:00Z"))).toBe(3600);
    expect(occurrenceRange(t, at("2026-11-15T00:00:00Z"), at("2026-11-16T00:00:00Z"))).toEqual({
      count: 3601,
      first: at("2026-11-15T20:00:00Z"),
      last: at("2026-11-15T21:00:00Z"),
    });
  });
});

describe("occurrenceRange and kthLast", () => {
  const tenMinutes = compileTiming({ cron: "*/10 * * * *" }).timing;
  const from = at("2026-11-15T00:00:00Z");
  const to = at("2026-11-15T00:35:00Z");

  it("a 10-minute schedule between 00:00 and 00:35: first 00:10, last 00:30, count 3", () => {
    expect(occurrenceRange(tenMinutes, from, to)).toEqual({
      count: 3,
      first: at("2026-11-15T00:10:00Z"),
      last: at("2026-11-15T00:30:00Z"),
    });
  });

  it("kthLast: k=1 is 00:30, k=2 is 00:20, k=3 is 00:10, k=4 does not exist", () => {
    expect(kthLast(tenMinutes, from, to, 1)).toBe(at("2026-11-15T00:30:00Z"));
    expect(kthLast(tenMinutes, from, to, 2)).toBe(at("2026-11-15T00:20:00Z"));
    expect(kthLast(tenMinutes, from, to, 3)).toBe(at("2026-11-15T00:10:00Z"));
    expect(kthLast(tenMinutes, from, to, 4)).toBeNull();
    expect(kthLast(tenMinutes, from, to, 0)).toBeNull();
  });

  it("the bounds are (from, to]: an occurrence at `to` counts, one at `from` does not", () => {
    expect(occurrenceRange(tenMinutes, from, at("2026-11-15T00:30:00Z"))).toEqual({
      count: 3,
      first: at("2026-11-15T00:10:00Z"),
      last: at("2026-11-15T00:30:00Z"),
    });
    expect(occurrenceRange(tenMinutes, at("2026-11-15T00:30:00Z"), at("2026-11-15T00:39:59Z"))).toEqual({
      count: 0,
      first: null,
      last: null,
    });
    expect(occurrenceRange(tenMinutes, to, from)).toEqual({ count: 0, first: null, last: null });
  });

  it("agrees with iteration across DST nights for every policy", FAST, () => {
    for (const dst of ["once", "wall_clock", "shift:last", "skip:first"]) {
      for (const [tz, night] of [
        ["America/New_York", "2026-11-01T06:00:00Z"],
        ["America/New_York", "2026-03-08T07:00:00Z"],
        ["Australia/Lord_Howe", "2026-04-04T15:00:00Z"],
        ["Australia/Lord_Howe", "2026-10-03T15:30:00Z"],
      ] as const) {
        const t = compileTiming({ cron: "*/7 * * * *", timezone: tz, dst }).timing;
        const a = at(night) - 2 * 3_600_000;
        const b = at(night) + 2 * 3_600_000;
        const listed = nextOccurrences(t, a, 1000).filter((x) => x <= b);
        const r = occurrenceRange(t, a, b);
        expect(r.count).toBe(listed.length);
        expect(r.first).toBe(listed[0]);
        expect(r.last).toBe(listed[listed.length - 1]);
        expect(kthLast(t, a, b, 5)).toBe(listed[listed.length - 5]);
      }
    }
  });

  it("the last occurrence of a monthly schedule before a ten-year outage", FAST, () => {
    const t = compileTiming({ cron: "0 3 L * *", timezone: "Europe/Berlin" }).timing;
    const r = occurrenceRange(t, at("2026-01-01T00:00:00Z"), at("2036-01-01T00:00:00Z"));
    expect(r.count).toBe(120);
    expect(formatInstant(r.first as number)).toBe("2026-01-31T02:00:00Z");
    expect(formatInstant(r.last as number)).toBe("2035-12-31T02:00:00Z");
  });
});
