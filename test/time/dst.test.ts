/**
 * DST behaviour, with every expected instant worked out by hand from the zone rules:
 *
 * - Europe/Berlin: CET +01 / CEST +02, changes at 01:00Z on the last Sunday of March (02:00 → 03:00
 *   local) and of October (03:00 → 02:00 local, so 02:00-02:59 happens twice).
 * - America/New_York: EST -05 / EDT -04, second Sunday of March 02:00 → 03:00 (07:00Z), first Sunday
 *   of November 02:00 → 01:00 (06:00Z; 01:00-01:59 twice).
 * - Australia/Sydney: AEST +10 / AEDT +11, first Sunday of April 03:00 → 02:00 (16:00Z Saturday),
 *   first Sunday of October 02:00 → 03:00 (16:00Z Saturday).
 * - Australia/Lord_Howe: +10:30 / +11 (a 30-minute shift), first Sunday of April 02:00 → 01:30
 *   (15:00Z Saturday), first Sunday of October 02:00 → 02:30 (15:30Z Saturday).
 * - Asia/Kolkata: +05:30, no DST.
 * - America/Sao_Paulo: -03 since DST was abolished in 2019; before, -02 in summer (2018-11-04 00:00 →
 *   01:00, 2019-02-17 00:00 → 2019-02-16 23:00).
 */
import { describe, expect, it } from "vitest";
import { HOUR } from "../../src/time/civil.js";
import { formatInstant } from "../../src/time/format.js";
import { compileTiming } from "../../src/time/schedule-timing.js";
import { validateTimeZone, Zone } from "../../src/time/zone.js";
import { at, expectOrbitError, next } from "./support.js";

const POLICIES = [
  "once",
  "wall_clock",
  "shift:first",
  "shift:last",
  "shift:both",
  "skip:first",
  "skip:last",
  "skip:both",
];

const count = (cron: string, timezone: string, dst: string, from: string, to: string): number =>
  compileTiming({ cron, timezone, dst }).timing.countBetween(at(from), at(to));

describe("the seed's examples", () => {
  it("`0 2 * * *` in Europe/Berlin from 2026-11-15T18:51:00Z", () => {
    expect(next({ cron: "0 2 * * *", timezone: "Europe/Berlin" }, "2026-11-15T18:51:00Z", 5)).toEqual([
      "2026-11-16T01:00:00Z",
      "2026-11-17T01:00:00Z",
      "2026-11-18T01:00:00Z",
      "2026-11-19T01:00:00Z",
      "2026-11-20T01:00:00Z",
    ]);
  });

  it("02:00 in Berlin is 01:00:00Z in winter and 00:00:00Z in summer", () => {
    expect(next({ cron: "0 2 * * *", timezone: "Europe/Berlin" }, "2026-01-15T12:00:00Z", 1)).toEqual([
      "2026-01-16T01:00:00Z",
    ]);
    expect(next({ cron: "0 2 * * *", timezone: "Europe/Berlin" }, "2026-07-15T12:00:00Z", 1)).toEqual([
      "2026-07-16T00:00:00Z",
    ]);
  });

  it("interval `10s` created at 2026-11-15T18:51:00.347Z", () => {
    expect(next({ interval: "10s" }, "2026-11-15T18:51:00.347Z", 5)).toEqual([
      "2026-11-15T18:51:10Z",
      "2026-11-15T18:51:20Z",
      "2026-11-15T18:51:30Z",
      "2026-11-15T18:51:40Z",
      "2026-11-15T18:51:50Z",
    ]);
  });

  it("Orion: `0 30 1 * * *` in Europe/London with wall_clock skips the spring night and fires twice in autumn", () => {
    const s = { cron: "0 30 1 * * *", timezone: "Europe/London", dst: "wall_clock" };
    expect(next(s, "2026-03-27T12:00:00Z", 2)).toEqual(["2026-03-28T01:30:00Z", "2026-03-30T00:30:00Z"]);
    expect(next(s, "2026-10-24T12:00:00Z", 3)).toEqual([
      "2026-10-25T00:30:00Z",
      "2026-10-25T01:30:00Z",
      "2026-10-26T01:30:00Z",
    ]);
  });
});

describe("the transitions 2025-2027 as the zone table sees them", () => {
  const table = (name: string) =>
    Zone.of(name)
      .transitionsBetween(at("2025-01-01T00:00:00Z"), at("2028-01-01T00:00:00Z"))
      .map((t) => `${formatInstant(t.at)} ${t.before / 60_000} → ${t.after / 60_000}`);

  it("Europe/Berlin", () => {
    expect(table("Europe/Berlin")).toEqual([
      "2025-03-30T01:00:00Z 60 → 120",
      "2025-10-26T01:00:00Z 120 → 60",
      "2026-03-29T01:00:00Z 60 → 120",
      "2026-10-25T01:00:00Z 120 → 60",
      "2027-03-28T01:00:00Z 60 → 120",
      "2027-10-31T01:00:00Z 120 → 60",
    ]);
  });

  it("America/New_York", () => {
    expect(table("America/New_York")).toEqual([
      "2025-03-09T07:00:00Z -300 → -240",
      "2025-11-02T06:00:00Z -240 → -300",
      "2026-03-08T07:00:00Z -300 → -240",
      "2026-11-01T06:00:00Z -240 → -300",
      "2027-03-14T07:00:00Z -300 → -240",
      "2027-11-07T06:00:00Z -240 → -300",
    ]);
  });

  it("Australia/Sydney", () => {
    expect(table("Australia/Sydney")).toEqual([
      "2025-04-05T16:00:00Z 660 → 600",
      "2025-10-04T16:00:00Z 600 → 660",
      "2026-04-04T16:00:00Z 660 → 600",
      "2026-10-03T16:00:00Z 600 → 660",
      "2027-04-03T16:00:00Z 660 → 600",
      "2027-10-02T16:00:00Z 600 → 660",
    ]);
  });

  it("Australia/Lord_Howe (30 minutes)", () => {
    expect(table("Australia/Lord_Howe")).toEqual([
      "2025-04-05T15:00:00Z 660 → 630",
      "2025-10-04T15:30:00Z 630 → 660",
      "2026-04-04T15:00:00Z 660 → 630",
      "2026-10-03T15:30:00Z 630 → 660",
      "2027-04-03T15:00:00Z 660 → 630",
      "2027-10-02T15:30:00Z 630 → 660",
    ]);
  });

  it("Asia/Kolkata and America/Sao_Paulo have none; Sao Paulo had some before 2019", () => {
    expect(table("Asia/Kolkata")).toEqual([]);
    expect(table("America/Sao_Paulo")).toEqual([]);
    expect(
      Zone.of("America/Sao_Paulo")
        .transitionsBetween(at("2018-06-01T00:00:00Z"), at("2020-01-01T00:00:00Z"))
        .map((t) => `${formatInstant(t.at)} ${t.before / 60_000} → ${t.after / 60_000}`),
    ).toEqual(["2018-11-04T03:00:00Z -180 → -120", "2019-02-17T02:00:00Z -120 → -180"]);
  });
});

describe("Europe/Berlin `30 2 * * *`", () => {
  const spring: Record<string, string[]> = {
    shift: ["2026-03-28T01:30:00Z", "2026-03-29T01:30:00Z", "2026-03-30T00:30:00Z", "2026-03-31T00:30:00Z"],
    skip: ["2026-03-28T01:30:00Z", "2026-03-30T00:30:00Z", "2026-03-31T00:30:00Z", "2026-04-01T00:30:00Z"],
  };
  const autumn: Record<string, string[]> = {
    first: ["2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z", "2026-10-27T01:30:00Z"],
    both: ["2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z", "2026-10-26T01:30:00Z"],
    last: ["2026-10-24T00:30:00Z", "2026-10-25T01:30:00Z", "2026-10-26T01:30:00Z", "2026-10-27T01:30:00Z"],
  };
  const rulesOf = (dst: string): [string, string] =>
    dst === "once"
      ? ["shift", "first"]
      : dst === "wall_clock"
        ? ["skip", "both"]
        : (dst.split(":") as [string, string]);

  it.each(POLICIES)("spring night (02:30 does not exist) under %s", (dst) => {
    const [gap] = rulesOf(dst);
    expect(next({ cron: "30 2 * * *", timezone: "Europe/Berlin", dst }, "2026-03-27T12:00:00Z", 4)).toEqual(
      spring[gap],
    );
  });

  it.each(POLICIES)("autumn night (02:30 happens twice) under %s", (dst) => {
    const [, repeat] = rulesOf(dst);
    expect(next({ cron: "30 2 * * *", timezone: "Europe/Berlin", dst }, "2026-10-23T12:00:00Z", 4)).toEqual(
      autumn[repeat],
    );
  });

  it("the default is once", () => {
    expect(next({ cron: "30 2 * * *", timezone: "Europe/Berlin" }, "2026-03-28T12:00:00Z", 1)).toEqual([
      "2026-03-29T01:30:00Z",
    ]);
  });

  it("2025 and 2027 nights too", () => {
    const once = { cron: "30 2 * * *", timezone: "Europe/Berlin", dst: "once" };
    const wall = { ...once, dst: "wall_clock" };
    expect(next(once, "2025-03-30T00:00:00Z", 1)).toEqual(["2025-03-30T01:30:00Z"]);
    expect(next(wall, "2025-03-30T00:00:00Z", 1)).toEqual(["2025-03-31T00:30:00Z"]);
    expect(next(wall, "2025-10-26T00:00:00Z", 2)).toEqual(["2025-10-26T00:30:00Z", "2025-10-26T01:30:00Z"]);
    expect(next(once, "2027-03-28T00:00:00Z", 1)).toEqual(["2027-03-28T01:30:00Z"]);
    expect(next(once, "2027-10-31T00:00:00Z", 2)).toEqual(["2027-10-31T00:30:00Z", "2027-11-01T01:30:00Z"]);
    expect(next(wall, "2027-10-31T00:00:00Z", 2)).toEqual(["2027-10-31T00:30:00Z", "2027-10-31T01:30:00Z"]);
  });

  it("counts agree: the spring night has one under once and none under wall_clock; autumn one and two", () => {
    expect(count("30 2 * * *", "Europe/Berlin", "once", "2026-03-28T22:00:00Z", "2026-03-29T22:00:00Z")).toBe(1);
    expect(count("30 2 * * *", "Europe/Berlin", "wall_clock", "2026-03-28T22:00:00Z", "2026-03-29T22:00:00Z")).toBe(0);
    expect(count("30 2 * * *", "Europe/Berlin", "once", "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z")).toBe(1);
    expect(count("30 2 * * *", "Europe/Berlin", "wall_clock", "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z")).toBe(2);
    expect(count("30 2 * * *", "Europe/Berlin", "skip:last", "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z")).toBe(1);
  });
});

describe("Europe/Berlin, dense and per-second expressions", () => {
  it("`*/15 * * * *` runs straight through the spring gap in either mode", () => {
    for (const dst of ["once", "wall_clock"]) {
      expect(next({ cron: "*/15 * * * *", timezone: "Europe/Berlin", dst }, "2026-03-29T00:30:00Z", 4)).toEqual([
        "2026-03-29T00:45:00Z",
        "2026-03-29T01:00:00Z",
        "2026-03-29T01:15:00Z",
        "2026-03-29T01:30:00Z",
      ]);
    }
  });

  it("`*/15 * * * *` in the autumn hour: once pauses an hour, wall_clock does not", () => {
    const s = { cron: "*/15 * * * *", timezone: "Europe/Berlin" };
    expect(next({ ...s, dst: "once" }, "2026-10-25T00:30:00Z", 3)).toEqual([
      "2026-10-25T00:45:00Z",
      "2026-10-25T02:00:00Z",
      "2026-10-25T02:15:00Z",
    ]);
    expect(next({ ...s, dst: "wall_clock" }, "2026-10-25T00:30:00Z", 3)).toEqual([
      "2026-10-25T00:45:00Z",
      "2026-10-25T01:00:00Z",
      "2026-10-25T01:15:00Z",
    ]);
    expect(next({ ...s, dst: "shift:last" }, "2026-10-24T23:30:00Z", 3)).toEqual([
      "2026-10-24T23:45:00Z",
      "2026-10-25T01:00:00Z",
      "2026-10-25T01:15:00Z",
    ]);
  });

  it("`* * * * * *` across the gap and the repeat", () => {
    for (const dst of ["once", "wall_clock"]) {
      expect(next({ cron: "* * * * * *", timezone: "Europe/Berlin", dst }, "2026-03-29T00:59:58Z", 3)).toEqual([
        "2026-03-29T00:59:59Z",
        "2026-03-29T01:00:00Z",
        "2026-03-29T01:00:01Z",
      ]);
    }
    expect(next({ cron: "* * * * * *", timezone: "Europe/Berlin" }, "2026-10-25T00:59:58Z", 3)).toEqual([
      "2026-10-25T00:59:59Z",
      "2026-10-25T02:00:00Z",
      "2026-10-25T02:00:01Z",
    ]);
    expect(
      next({ cron: "* * * * * *", timezone: "Europe/Berlin", dst: "wall_clock" }, "2026-10-25T00:59:58Z", 3),
    ).toEqual(["2026-10-25T00:59:59Z", "2026-10-25T01:00:00Z", "2026-10-25T01:00:01Z"]);
    expect(
      next({ cron: "* * * * * *", timezone: "Europe/Berlin", dst: "skip:last" }, "2026-10-24T23:59:58Z", 3),
    ).toEqual(["2026-10-24T23:59:59Z", "2026-10-25T01:00:00Z", "2026-10-25T01:00:01Z"]);
  });

  it("`*/20 * 2 * * *` on the spring night: once moves the whole hour to 03:xx local, wall_clock skips it", () => {
    const s = { cron: "*/20 * 2 * * *", timezone: "Europe/Berlin" };
    expect(next({ ...s, dst: "once" }, "2026-03-29T00:00:00Z", 3)).toEqual([
      "2026-03-29T01:00:00Z",
      "2026-03-29T01:00:20Z",
      "2026-03-29T01:00:40Z",
    ]);
    expect(next({ ...s, dst: "once" }, "2026-03-29T01:59:20Z", 2)).toEqual([
      "2026-03-29T01:59:40Z",
      "2026-03-30T00:00:00Z",
    ]);
    expect(next({ ...s, dst: "wall_clock" }, "2026-03-28T12:00:00Z", 1)).toEqual(["2026-03-30T00:00:00Z"]);
    // The local day of 29 March runs from 2026-03-28T23:00Z to 2026-03-29T22:00Z.
    expect(count(s.cron, s.timezone, "once", "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z")).toBe(180);
    expect(count(s.cron, s.timezone, "wall_clock", "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z")).toBe(0);
  });

  it("`*/20 * 2 * * *` on the autumn night: 180, 360 or 180 occurrences", () => {
    const s = { cron: "*/20 * 2 * * *", timezone: "Europe/Berlin" };
    // The local day of 25 October runs from 2026-10-24T22:00Z to 2026-10-25T23:00Z (25 hours).
    expect(count(s.cron, s.timezone, "once", "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z")).toBe(180);
    expect(count(s.cron, s.timezone, "wall_clock", "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z")).toBe(360);
    expect(count(s.cron, s.timezone, "skip:last", "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z")).toBe(180);
    expect(next({ ...s, dst: "once" }, "2026-10-25T00:59:20Z", 2)).toEqual([
      "2026-10-25T00:59:40Z",
      "2026-10-26T01:00:00Z",
    ]);
    expect(next({ ...s, dst: "wall_clock" }, "2026-10-25T00:59:20Z", 2)).toEqual([
      "2026-10-25T00:59:40Z",
      "2026-10-25T01:00:00Z",
    ]);
    expect(next({ ...s, dst: "shift:last" }, "2026-10-24T12:00:00Z", 1)).toEqual(["2026-10-25T01:00:00Z"]);
  });

  it("`30 15 2 * * *` (02:15:30) inside the gap and inside the repeat", () => {
    const s = { cron: "30 15 2 * * *", timezone: "Europe/Berlin" };
    expect(next({ ...s, dst: "once" }, "2026-03-28T12:00:00Z", 2)).toEqual([
      "2026-03-29T01:15:30Z",
      "2026-03-30T00:15:30Z",
    ]);
    expect(next({ ...s, dst: "wall_clock" }, "2026-03-28T12:00:00Z", 1)).toEqual(["2026-03-30T00:15:30Z"]);
    expect(next({ ...s, dst: "once" }, "2026-10-24T12:00:00Z", 2)).toEqual([
      "2026-10-25T00:15:30Z",
      "2026-10-26T01:15:30Z",
    ]);
    expect(next({ ...s, dst: "wall_clock" }, "2026-10-24T12:00:00Z", 2)).toEqual([
      "2026-10-25T00:15:30Z",
      "2026-10-25T01:15:30Z",
    ]);
  });

  it("a gap wall time that also matches after the change fires once, not twice (`30 2,3 * * *`)", () => {
    // 02:30 shifts to 03:30 CEST = 01:30Z, which is also the regular 03:30.
    expect(next({ cron: "30 2,3 * * *", timezone: "Europe/Berlin" }, "2026-03-28T23:00:00Z", 2)).toEqual([
      "2026-03-29T01:30:00Z",
      "2026-03-30T00:30:00Z",
    ]);
    expect(count("30 2,3 * * *", "Europe/Berlin", "once", "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z")).toBe(1);
  });
});

describe("America/New_York", () => {
  it("`30 2 * * *` on the spring night", () => {
    const s = { cron: "30 2 * * *", timezone: "America/New_York" };
    expect(next({ ...s, dst: "once" }, "2026-03-06T12:00:00Z", 3)).toEqual([
      "2026-03-07T07:30:00Z",
      "2026-03-08T07:30:00Z",
      "2026-03-09T06:30:00Z",
    ]);
    expect(next({ ...s, dst: "wall_clock" }, "2026-03-06T12:00:00Z", 2)).toEqual([
      "2026-03-07T07:30:00Z",
      "2026-03-09T06:30:00Z",
    ]);
  });

  it("`30 1 * * *` on the autumn night (01:30 EDT and 01:30 EST)", () => {
    const s = { cron: "30 1 * * *", timezone: "America/New_York" };
    expect(next({ ...s, dst: "once" }, "2026-10-30T12:00:00Z", 3)).toEqual([
      "2026-10-31T05:30:00Z",
      "2026-11-01T05:30:00Z",
      "2026-11-02T06:30:00Z",
    ]);
    expect(next({ ...s, dst: "wall_clock" }, "2026-10-30T12:00:00Z", 4)).toEqual([
      "2026-10-31T05:30:00Z",
      "2026-11-01T05:30:00Z",
      "2026-11-01T06:30:00Z",
      "2026-11-02T06:30:00Z",
    ]);
    expect(next({ ...s, dst: "skip:last" }, "2026-10-30T12:00:00Z", 3)).toEqual([
      "2026-10-31T05:30:00Z",
      "2026-11-01T06:30:00Z",
      "2026-11-02T06:30:00Z",
    ]);
  });

  it("`*/15 * * * *` over both nights", () => {
    for (const dst of ["once", "wall_clock"]) {
      expect(next({ cron: "*/15 * * * *", timezone: "America/New_York", dst }, "2026-03-08T06:30:00Z", 4)).toEqual([
        "2026-03-08T06:45:00Z",
        "2026-03-08T07:00:00Z",
        "2026-03-08T07:15:00Z",
        "2026-03-08T07:30:00Z",
      ]);
      expect(count("*/15 * * * *", "America/New_York", dst, "2026-03-08T06:00:00Z", "2026-03-08T08:00:00Z")).toBe(8);
    }
    expect(next({ cron: "*/15 * * * *", timezone: "America/New_York" }, "2026-11-01T05:40:00Z", 2)).toEqual([
      "2026-11-01T05:45:00Z",
      "2026-11-01T07:00:00Z",
    ]);
    // (04:00Z, 08:00Z]: 16 quarter hours; once leaves out the four of the second 01:xx (06:00Z-06:45Z).
    expect(count("*/15 * * * *", "America/New_York", "once", "2026-11-01T04:00:00Z", "2026-11-01T08:00:00Z")).toBe(12);
    expect(
      count("*/15 * * * *", "America/New_York", "wall_clock", "2026-11-01T04:00:00Z", "2026-11-01T08:00:00Z"),
    ).toBe(16);
  });

  it("2025 and 2027 spring nights under once", () => {
    const s = { cron: "30 2 * * *", timezone: "America/New_York" };
    expect(next(s, "2025-03-09T00:00:00Z", 1)).toEqual(["2025-03-09T07:30:00Z"]);
    expect(next(s, "2027-03-14T00:00:00Z", 1)).toEqual(["2027-03-14T07:30:00Z"]);
    expect(next({ cron: "30 1 * * *", timezone: "America/New_York" }, "2027-11-07T00:00:00Z", 2)).toEqual([
      "2027-11-07T05:30:00Z",
      "2027-11-08T06:30:00Z",
    ]);
  });
});

describe("Australia/Sydney", () => {
  it("`30 2 * * *` on the spring night (October)", () => {
    const s = { cron: "30 2 * * *", timezone: "Australia/Sydney" };
    expect(next({ ...s, dst: "once" }, "2026-10-02T00:00:00Z", 3)).toEqual([
      "2026-10-02T16:30:00Z",
      "2026-10-03T16:30:00Z",
      "2026-10-04T15:30:00Z",
    ]);
    expect(next({ ...s, dst: "wall_clock" }, "2026-10-02T00:00:00Z", 2)).toEqual([
      "2026-10-02T16:30:00Z",
      "2026-10-04T15:30:00Z",
    ]);
  });

  it("`30 2 * * *` on the autumn night (April)", () => {
    const s = { cron: "30 2 * * *", timezone: "Australia/Sydney" };
    expect(next({ ...s, dst: "once" }, "2026-04-03T00:00:00Z", 3)).toEqual([
      "2026-04-03T15:30:00Z",
      "2026-04-04T15:30:00Z",
      "2026-04-05T16:30:00Z",
    ]);
    expect(next({ ...s, dst: "wall_clock" }, "2026-04-03T00:00:00Z", 4)).toEqual([
      "2026-04-03T15:30:00Z",
      "2026-04-04T15:30:00Z",
      "2026-04-04T16:30:00Z",
      "2026-04-05T16:30:00Z",
    ]);
    expect(next({ ...s, dst: "skip:last" }, "2026-04-03T00:00:00Z", 3)).toEqual([
      "2026-04-03T15:30:00Z",
      "2026-04-04T16:30:00Z",
      "2026-04-05T16:30:00Z",
    ]);
  });

  it("2025 and 2027 nights", () => {
    const s = { cron: "30 2 * * *", timezone: "Australia/Sydney" };
    expect(next(s, "2025-10-04T12:00:00Z", 1)).toEqual(["2025-10-04T16:30:00Z"]);
    expect(next({ ...s, dst: "wall_clock" }, "2025-04-05T12:00:00Z", 2)).toEqual([
      "2025-04-05T15:30:00Z",
      "2025-04-05T16:30:00Z",
    ]);
    expect(next(s, "2027-10-02T12:00:00Z", 1)).toEqual(["2027-10-02T16:30:00Z"]);
  });
});

describe("Australia/Lord_Howe (a 30-minute shift)", () => {
  it("`0 2 * * *` on the spring night: 02:00 does not exist, once fires at 02:30 LHDT", () => {
    const s = { cron: "0 2 * * *", timezone: "Australia/Lord_Howe" };
    expect(next({ ...s, dst: "once" }, "2026-10-02T00:00:00Z", 3)).toEqual([
      "2026-10-02T15:30:00Z",
      "2026-10-03T15:30:00Z",
      "2026-10-04T15:00:00Z",
    ]);
    expect(next({ ...s, dst: "wall_clock" }, "2026-10-02T00:00:00Z", 2)).toEqual([
      "2026-10-02T15:30:00Z",
      "2026-10-04T15:00:00Z",
    ]);
  });

  it("`0 2 * * *` on the autumn night: 02:00 is not repeated (01:30-01:59 is), one fire in every mode", () => {
    for (const dst of POLICIES) {
      expect(next({ cron: "0 2 * * *", timezone: "Australia/Lord_Howe", dst }, "2026-04-03T00:00:00Z", 3)).toEqual([
        "2026-04-03T15:00:00Z",
        "2026-04-04T15:30:00Z",
        "2026-04-05T15:30:00Z",
      ]);
    }
  });

  it("`30 1 * * *` on the autumn night: 01:30 happens at +11 and at +10:30", () => {
    const s = { cron: "30 1 * * *", timezone: "Australia/Lord_Howe" };
    expect(next({ ...s, dst: "once" }, "2026-04-04T12:00:00Z", 2)).toEqual([
      "2026-04-04T14:30:00Z",
      "2026-04-05T15:00:00Z",
    ]);
    expect(next({ ...s, dst: "wall_clock" }, "2026-04-04T12:00:00Z", 2)).toEqual([
      "2026-04-04T14:30:00Z",
      "2026-04-04T15:00:00Z",
    ]);
  });

  it("`*/10 * * * *` across the overlap in three modes", () => {
    const s = { cron: "*/10 * * * *", timezone: "Australia/Lord_Howe" };
    expect(next({ ...s, dst: "once" }, "2026-04-04T14:15:00Z", 6)).toEqual([
      "2026-04-04T14:20:00Z",
      "2026-04-04T14:30:00Z",
      "2026-04-04T14:40:00Z",
      "2026-04-04T14:50:00Z",
      "2026-04-04T15:30:00Z",
      "2026-04-04T15:40:00Z",
    ]);
    expect(next({ ...s, dst: "wall_clock" }, "2026-04-04T14:15:00Z", 9)).toEqual([
      "2026-04-04T14:20:00Z",
      "2026-04-04T14:30:00Z",
      "2026-04-04T14:40:00Z",
      "2026-04-04T14:50:00Z",
      "2026-04-04T15:00:00Z",
      "2026-04-04T15:10:00Z",
      "2026-04-04T15:20:00Z",
      "2026-04-04T15:30:00Z",
      "2026-04-04T15:40:00Z",
    ]);
    expect(next({ ...s, dst: "shift:last" }, "2026-04-04T14:15:00Z", 3)).toEqual([
      "2026-04-04T14:20:00Z",
      "2026-04-04T15:00:00Z",
      "2026-04-04T15:10:00Z",
    ]);
  });

  it("`*/10 * * * *` across the gap: the shifted 02:00-02:20 coincide with 02:30-02:50", () => {
    for (const dst of ["once", "wall_clock"]) {
      expect(next({ cron: "*/10 * * * *", timezone: "Australia/Lord_Howe", dst }, "2026-10-03T15:15:00Z", 4)).toEqual([
        "2026-10-03T15:20:00Z",
        "2026-10-03T15:30:00Z",
        "2026-10-03T15:40:00Z",
        "2026-10-03T15:50:00Z",
      ]);
    }
  });

  it("inside the gap local order and instant order differ (`20,40 2 * * *`)", () => {
    // 02:20 does not exist and shifts to 02:50 LHDT (15:50Z); 02:40 exists (15:40Z): returned in instant order.
    expect(next({ cron: "20,40 2 * * *", timezone: "Australia/Lord_Howe" }, "2026-10-03T12:00:00Z", 3)).toEqual([
      "2026-10-03T15:40:00Z",
      "2026-10-03T15:50:00Z",
      "2026-10-04T15:20:00Z",
    ]);
    expect(
      next({ cron: "20,40 2 * * *", timezone: "Australia/Lord_Howe", dst: "wall_clock" }, "2026-10-03T12:00:00Z", 2),
    ).toEqual(["2026-10-03T15:40:00Z", "2026-10-04T15:20:00Z"]);
    const once = compileTiming({ cron: "20,40 2 * * *", timezone: "Australia/Lord_Howe" }).timing;
    expect(once.countBetween(at("2026-10-03T12:00:00Z"), at("2026-10-03T15:45:00Z"))).toBe(1);
    expect(once.countBetween(at("2026-10-03T12:00:00Z"), at("2026-10-03T15:50:00Z"))).toBe(2);
  });

  it("per-second `0 15 2 * * *` inside the 30-minute gap", () => {
    // 02:15:00 does not exist; once fires at 02:45:00 LHDT = 15:45Z.
    expect(next({ cron: "0 15 2 * * *", timezone: "Australia/Lord_Howe" }, "2026-10-03T12:00:00Z", 1)).toEqual([
      "2026-10-03T15:45:00Z",
    ]);
  });
});

describe("Asia/Kolkata (no DST)", () => {
  it.each(POLICIES)("`30 2 * * *` is 21:00Z the day before under %s", (dst) => {
    expect(next({ cron: "30 2 * * *", timezone: "Asia/Kolkata", dst }, "2026-03-28T00:00:00Z", 3)).toEqual([
      "2026-03-28T21:00:00Z",
      "2026-03-29T21:00:00Z",
      "2026-03-30T21:00:00Z",
    ]);
  });

  it("per-second counts are exact", () => {
    expect(count("* * * * * *", "Asia/Kolkata", "once", "2026-10-25T00:00:00Z", "2026-10-26T00:00:00Z")).toBe(86400);
  });
});

describe("America/Sao_Paulo (DST abolished in 2019)", () => {
  it("`0 0 * * *` is 03:00Z every day through the old DST dates of 2025-2027", () => {
    expect(next({ cron: "0 0 * * *", timezone: "America/Sao_Paulo" }, "2026-10-31T12:00:00Z", 3)).toEqual([
      "2026-11-01T03:00:00Z",
      "2026-11-02T03:00:00Z",
      "2026-11-03T03:00:00Z",
    ]);
    expect(next({ cron: "0 0 * * *", timezone: "America/Sao_Paulo" }, "2027-02-19T12:00:00Z", 2)).toEqual([
      "2027-02-20T03:00:00Z",
      "2027-02-21T03:00:00Z",
    ]);
  });

  it("2018: midnight did not exist on 4 November (the gap was at 00:00)", () => {
    const s = { cron: "0 0 * * *", timezone: "America/Sao_Paulo" };
    expect(next({ ...s, dst: "once" }, "2018-11-02T12:00:00Z", 3)).toEqual([
      "2018-11-03T03:00:00Z",
      "2018-11-04T03:00:00Z",
      "2018-11-05T02:00:00Z",
    ]);
    expect(next({ ...s, dst: "wall_clock" }, "2018-11-02T12:00:00Z", 2)).toEqual([
      "2018-11-03T03:00:00Z",
      "2018-11-05T02:00:00Z",
    ]);
  });

  it("2019: 23:30 on 16 February happened twice", () => {
    const s = { cron: "30 23 * * *", timezone: "America/Sao_Paulo" };
    expect(next({ ...s, dst: "once" }, "2019-02-15T12:00:00Z", 3)).toEqual([
      "2019-02-16T01:30:00Z",
      "2019-02-17T01:30:00Z",
      "2019-02-18T02:30:00Z",
    ]);
    expect(next({ ...s, dst: "wall_clock" }, "2019-02-15T12:00:00Z", 4)).toEqual([
      "2019-02-16T01:30:00Z",
      "2019-02-17T01:30:00Z",
      "2019-02-17T02:30:00Z",
      "2019-02-18T02:30:00Z",
    ]);
  });
});

describe("occurrences are strictly increasing around every 2025-2027 transition", () => {
  const zones = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Australia/Sydney"];
  it.each(zones)("%s, `*/5 * * * *` and `*/30 * 1-3 * * *`, every policy", (tz) => {
    const transitions = Zone.of(tz).transitionsBetween(at("2025-01-01T00:00:00Z"), at("2028-01-01T00:00:00Z"));
    expect(transitions).toHaveLength(6);
    for (const { at: t } of transitions) {
      for (const cron of ["*/5 * * * *", "*/30 * 1-3 * * *"]) {
        for (const dst of POLICIES) {
          const timing = compileTiming({ cron, timezone: tz, dst }).timing;
          let prev = t - 3 * HOUR;
          let n = 0;
          for (let x = timing.nextAfter(prev); x !== null && x <= t + 3 * HOUR; x = timing.nextAfter(x)) {
            expect(x).toBeGreaterThan(prev);
            prev = x;
            n++;
          }
          expect(timing.countBetween(t - 3 * HOUR, t + 3 * HOUR)).toBe(n);
        }
      }
    }
  });
});

describe("time zone names", () => {
  it.each([
    ["EST", "America/New_York"],
    ["IST", "Asia/Kolkata"],
    ["CET", "Europe/Berlin"],
    ["PST8PDT", "America/Los_Angeles"],
  ])("refuses the abbreviation %s and suggests %s", (name, hint) => {
    expectOrbitError(
      () => validateTimeZone(name),
      `timezone "${name}" is not an IANA time zone name (abbreviations are ambiguous and refused); use a name such as "${hint}" or "UTC"`,
    );
  });

  it.each([
    ["Japan", "Asia/Tokyo"],
    ["NZ", "Pacific/Auckland"],
    ["GB", "Europe/London"],
    ["Cuba", "America/Havana"],
  ])("refuses the old alias %s naming the zone it stands for, %s", (name, place) => {
    // They were refused as ambiguous abbreviations, with "Europe/Berlin" for an example.
    expectOrbitError(
      () => validateTimeZone(name),
      `timezone "${name}" is an old alias of "${place}"; write "${place}"`,
    );
  });

  it("refuses a fixed offset and an empty name saying which they are", () => {
    expectOrbitError(
      () => validateTimeZone("+05:00"),
      'timezone "+05:00" is a fixed offset, not a time zone; give "Etc/GMT-5" (POSIX\'s reversed sign) or the IANA name of the place (Area/Location, such as "Asia/Kolkata")',
    );
    expectOrbitError(
      () => validateTimeZone("-03:30"),
      'timezone "-03:30" is a fixed offset, not a time zone; give the IANA name of the place (Area/Location, such as "Asia/Kolkata")',
    );
    expectOrbitError(
      () => validateTimeZone(""),
      'timezone is empty; give an IANA name such as "Europe/Berlin", or leave it out for UTC',
    );
    // UTC+1 and GMT+2 were told they are ambiguous abbreviations, with "Europe/Berlin" (+1 in winter).
    expectOrbitError(
      () => validateTimeZone("GMT+2"),
      'timezone "GMT+2" is a fixed offset, not a time zone; give "Etc/GMT-2" for UTC+2 (POSIX\'s reversed sign) or the IANA name of the place (Area/Location, such as "Asia/Kolkata")',
    );
    expectOrbitError(() => validateTimeZone("UTC+0"), 'timezone "UTC+0" is UTC; write "UTC"');
    // No Etc zone for UTC-13 or UTC-14 (they run from Etc/GMT-14 to Etc/GMT+12): no Etc name offered.
    expectOrbitError(
      () => validateTimeZone("GMT-14"),
      'timezone "GMT-14" is a fixed offset, not a time zone; give the IANA name of the place (Area/Location, such as "Asia/Kolkata")',
    );
    expectOrbitError(
      () => validateTimeZone("utc-05:00"),
      'timezone "utc-05:00" is a fixed offset, not a time zone; give "Etc/GMT+5" for UTC-5 (POSIX\'s reversed sign) or the IANA name of the place (Area/Location, such as "Asia/Kolkata")',
    );
  });

  it.each(["GMT", "utc", "Zulu", "UCT", "Universal", "Z"])(
    "refuses %s as UTC under another name (not as an ambiguous abbreviation), naming UTC",
    (name) => {
      expectOrbitError(() => validateTimeZone(name), `timezone "${name}" is UTC under another name; write "UTC"`);
    },
  );

  it("refuses unknown names", () => {
    expectOrbitError(
      () => validateTimeZone("Mars/Olympus"),
      `timezone "Mars/Olympus" is not a known IANA time zone name`,
    );
  });

  it.each([
    ["europe/berlin", "Europe/Berlin"],
    ["America/new_york", "America/New_York"],
    ["Europe/Berln", "Europe/Berlin"],
    ["America/Nw_York", "America/New_York"],
  ])("refuses %s (wrongly cased or misspelt) with a did-you-mean %s", (given, known) => {
    expectOrbitError(
      () => validateTimeZone(given),
      `timezone "${given}" is not a known IANA time zone name; did you mean "${known}"?`,
    );
  });

  it("refuses a name too long to be one without searching for the nearest", () => {
    const long = `Europe/${"x".repeat(200_000)}`;
    expectOrbitError(() => validateTimeZone(long), `timezone "${long}" is not a known IANA time zone name`);
  });

  it.each(["Asia/Kolkata", "America/New_York", "UTC", "Etc/GMT+5", "Australia/Lord_Howe", "America/Sao_Paulo"])(
    "accepts %s",
    (name) => {
      expect(() => validateTimeZone(name)).not.toThrow();
      expect(Zone.of(name).name).toBe(name);
    },
  );

  it("Etc/GMT+5 is five hours behind UTC (POSIX sign)", () => {
    expect(next({ cron: "0 0 * * *", timezone: "Etc/GMT+5" }, "2026-01-01T00:00:00Z", 1)).toEqual([
      "2026-01-01T05:00:00Z",
    ]);
  });

  it("compileTiming refuses a bad zone with INVALID_SCHEDULE", () => {
    expectOrbitError(
      () => compileTiming({ cron: "0 2 * * *", timezone: "CET" }),
      `timezone "CET" is not an IANA time zone name (abbreviations are ambiguous and refused); use a name such as "Europe/Berlin" or "UTC"`,
    );
  });
});

describe("a change less than a gap's length before the zone table's cut at a UTC new year", () => {
  // Africa/Lagos went from LMT (+00:13:35) to +00:30 at 1913-12-31T23:46:25Z, 13m35s before the zone
  // table's 1914 chunk starts. Under `once` the non-existent 00:15 local fires at 00:15 − 00:13:35 =
  // 1914-01-01T00:01:25Z. nextAfter from before the change finds it, but the period the table reports
  // after the chunk edge must still know of the change (Period.transition), or nextAfter and
  // countBetween from inside the shifted stretch would miss it (they once did).
  const timing = () => compileTiming({ cron: "15 0 1 1 *", timezone: "Africa/Lagos" }).timing;

  it("from before the change the shifted occurrence is found", () => {
    expect(timing().nextAfter(at("1913-12-31T12:00:00Z"))).toBe(at("1914-01-01T00:01:25Z"));
    expect(timing().countBetween(at("1913-12-31T12:00:00Z"), at("1914-01-01T00:05:00Z"))).toBe(1);
  });

  it("from inside the stretch nextAfter finds it", () => {
    expect(timing().nextAfter(at("1914-01-01T00:00:30Z"))).toBe(at("1914-01-01T00:01:25Z"));
  });

  it("from inside the stretch countBetween counts it", () => {
    expect(timing().countBetween(at("1914-01-01T00:00:30Z"), at("1914-01-01T00:05:00Z"))).toBe(1);
  });
});
