import { describe, expect, it } from "vitest";
import { formatInstant } from "../../src/time/format.js";
import { IntervalTiming, parseDuration, parseInterval } from "../../src/time/interval.js";
import { jitterDelay } from "../../src/time/jitter.js";
import { compileTiming } from "../../src/time/schedule-timing.js";
import { nextOccurrences } from "../../src/time/timing.js";
import { at, expectOrbitError, next } from "./support.js";

const notADuration = (text: string, what = "interval") =>
  `${what} "${text}" is not a duration: use whole numbers with the units ms, s, m, h or d, for example "15m" or "1h30m"`;

describe("durations", () => {
  it.each([
    ["1h30m", 5_400_000],
    ["1500ms", 1_500],
    ["1d", 86_400_000],
    ["1s", 1_000],
    ["10s", 10_000],
    ["15m", 900_000],
    ["1d2h3m4s5ms", 93_784_005],
    ["90m", 5_400_000],
    [" 10s ", 10_000],
  ])("%s is %i ms", (text, ms) => {
    expect(parseInterval(text)).toBe(ms);
  });

  it("the minimum interval is 1s", () => {
    expectOrbitError(() => parseInterval("0s"), `interval "0s" is shorter than the minimum of 1s`);
    expectOrbitError(() => parseInterval("999ms"), `interval "999ms" is shorter than the minimum of 1s`);
    expect(parseInterval("1000ms")).toBe(1000);
  });

  it.each(["10x", "", "1.5h", "-1s", "1h 30m", "10S", "h", "10", "1w", "PT10S"])("refuses %j", (text) => {
    expectOrbitError(() => parseInterval(text), notADuration(text));
  });

  it("names the setting in the message and refuses absurd lengths", () => {
    expectOrbitError(() => parseDuration("soon", "jitter"), notADuration("soon", "jitter"));
    expectOrbitError(
      () => parseDuration("999999999999999d", "catchup_window"),
      `catchup_window "999999999999999d" is too long`,
    );
    expect(parseDuration("0s", "jitter")).toBe(0);
  });

  it("an interval takes no timezone and no dst", () => {
    expectOrbitError(
      () => compileTiming({ interval: "10s", timezone: "Europe/Berlin" }),
      "timezone applies to cron schedules only: intervals are absolute",
    );
    expectOrbitError(() => compileTiming({ interval: "10s", dst: "once" }), "dst applies to cron schedules only");
    expectOrbitError(
      () => compileTiming({ interval: "10s", cron: "* * * * *" }),
      "give either cron or interval, not both",
    );
    expectOrbitError(() => compileTiming({}), "a schedule needs a cron or an interval");
  });
});

describe("alignment", () => {
  it("every 15m fires at :00, :15, :30 and :45 whenever the schedule was created", () => {
    expect(next({ interval: "15m" }, "2026-11-15T18:51:00.347Z", 5)).toEqual([
      "2026-11-15T19:00:00Z",
      "2026-11-15T19:15:00Z",
      "2026-11-15T19:30:00Z",
      "2026-11-15T19:45:00Z",
      "2026-11-15T20:00:00Z",
    ]);
  });

  it("every 45m is aligned to the epoch (days are whole multiples of 45 minutes)", () => {
    expect(next({ interval: "45m" }, "2026-11-15T18:51:00Z", 3)).toEqual([
      "2026-11-15T19:30:00Z",
      "2026-11-15T20:15:00Z",
      "2026-11-15T21:00:00Z",
    ]);
  });

  it("strictly after: an instant on the grid is not its own successor", () => {
    expect(next({ interval: "10s" }, "2026-11-15T18:51:10Z", 1)).toEqual(["2026-11-15T18:51:20Z"]);
    expect(next({ interval: "10s" }, "2026-11-15T18:51:09.999Z", 1)).toEqual(["2026-11-15T18:51:10Z"]);
  });

  it("with start_at the first occurrence is start_at itself, and the grid follows it", () => {
    const startAt = at("2026-11-15T18:51:00.347Z");
    const timing = compileTiming({ interval: "10s", startAt }).timing;
    expect(nextOccurrences(timing, at("2026-11-01T00:00:00Z"), 3).map(formatInstant)).toEqual([
      "2026-11-15T18:51:00.347Z",
      "2026-11-15T18:51:10.347Z",
      "2026-11-15T18:51:20.347Z",
    ]);
    expect(timing.nextAfter(startAt - 1)).toBe(startAt);
    expect(timing.nextAfter(startAt)).toBe(startAt + 10_000);
  });

  it("start_at bounds a cron schedule too (no occurrence before it)", () => {
    const timing = compileTiming({ cron: "*/15 * * * *", startAt: at("2026-11-15T18:51:00Z") }).timing;
    expect(nextOccurrences(timing, at("2026-11-15T00:00:00Z"), 2).map(formatInstant)).toEqual([
      "2026-11-15T19:00:00Z",
      "2026-11-15T19:15:00Z",
    ]);
  });

  it("end_at ends the sequence: nextAfter returns null after the last occurrence", () => {
    const startAt = at("2026-11-15T18:51:00Z");
    const endAt = at("2026-11-15T18:51:30Z");
    const timing = compileTiming({ interval: "10s", startAt, endAt }).timing;
    expect(nextOccurrences(timing, 0, 10).map(formatInstant)).toEqual([
      "2026-11-15T18:51:00Z",
      "2026-11-15T18:51:10Z",
      "2026-11-15T18:51:20Z",
      "2026-11-15T18:51:30Z",
    ]);
    expect(timing.nextAfter(endAt)).toBeNull();
    expect(timing.nextAfter(endAt - 1)).toBe(endAt);
    expect(timing.countBetween(0, at("2027-01-01T00:00:00Z"))).toBe(4);
    const cron = compileTiming({ cron: "* * * * *", endAt: at("2026-11-15T18:51:30Z") }).timing;
    expect(cron.nextAfter(at("2026-11-15T18:50:30Z"))).toBe(at("2026-11-15T18:51:00Z"));
    expect(cron.nextAfter(at("2026-11-15T18:51:00Z"))).toBeNull();
  });

  it("refuses end_at before start_at", () => {
    expectOrbitError(() => compileTiming({ interval: "10s", startAt: 2000, endAt: 1000 }), "end_at is before start_at");
    // Inside one millisecond (…05.0001Z to …05.0009Z): start_at rounded up, end_at down, they cross.
    expectOrbitError(
      () => compileTiming({ cron: "0 * * * *", startAt: 1001, endAt: 1000 }),
      "end_at is before start_at once both are taken to the millisecond (start_at rounds up, end_at down): no occurrence can lie between them",
    );
  });
});

describe("counts", () => {
  it("counts occurrences in (from, to]", () => {
    const t = new IntervalTiming(10_000, 0);
    expect(t.countBetween(at("2026-11-15T18:51:00Z"), at("2026-11-15T18:52:00Z"))).toBe(6);
    expect(t.countBetween(at("2026-11-15T18:51:00.001Z"), at("2026-11-15T18:51:59.999Z"))).toBe(5);
    expect(t.countBetween(at("2026-11-15T18:50:59.999Z"), at("2026-11-15T18:51:00Z"))).toBe(1);
    expect(t.countBetween(at("2026-11-15T18:51:00Z"), at("2026-11-15T18:51:00Z"))).toBe(0);
    expect(t.countBetween(at("2026-11-15T18:52:00Z"), at("2026-11-15T18:51:00Z"))).toBe(0);
  });

  it("counts with an anchor, and before the epoch", () => {
    const t = new IntervalTiming(7_000, 3_000);
    expect(t.countBetween(0, 30_000)).toBe(4); // 3, 10, 17, 24 s
    expect(t.countBetween(-30_000, 0)).toBe(4); // -25, -18, -11, -4 s
    expect(t.nextAfter(-5_000)).toBe(-4_000);
  });

  it("a day of a 1500ms interval", () => {
    const t = compileTiming({ interval: "1500ms" }).timing;
    expect(t.countBetween(at("2026-11-15T00:00:00Z"), at("2026-11-16T00:00:00Z"))).toBe(57_600);
  });
});

describe("jitter", () => {
  it("is deterministic: SHA-256 of `<id>\\n<occurrence>`, first 48 bits, mod the jitter", () => {
    // Reference values computed with `printf 'nightly-orders\n2026-11-16T01:00:00Z' | openssl dgst -sha256`.
    expect(jitterDelay("nightly-orders", at("2026-11-16T01:00:00Z"), 60_000)).toBe(16_264);
    expect(jitterDelay("nightly-orders", at("2026-11-16T01:00:00Z"), 3_600_000)).toBe(3_556_264);
    expect(jitterDelay("orders-every-10s", at("2026-11-15T18:51:10Z"), 1_000)).toBe(447);
    expect(jitterDelay("nightly-orders", at("2026-11-16T01:00:00Z"), 60_000)).toBe(16_264);
  });

  it("stays in [0, jitter) and spreads over it", () => {
    const jitter = 10_000;
    const delays: number[] = [];
    for (let i = 0; i < 2000; i++) delays.push(jitterDelay("spread", at("2026-01-01T00:00:00Z") + i * 1000, jitter));
    for (const d of delays) {
      expect(Number.isInteger(d)).toBe(true);
      expect(d).toBeGreaterThanOrEqual(0);
      expect(d).toBeLessThan(jitter);
    }
    const mean = delays.reduce((a, b) => a + b, 0) / delays.length;
    expect(mean).toBeGreaterThan(4_000);
    expect(mean).toBeLessThan(6_000);
    expect(new Set(delays.map((d) => Math.floor(d / 1000))).size).toBe(10);
  });

  it("depends on both the schedule id and the occurrence", () => {
    const t = at("2026-11-16T01:00:00Z");
    expect(jitterDelay("a", t, 3_600_000)).not.toBe(jitterDelay("b", t, 3_600_000));
    expect(jitterDelay("a", t, 3_600_000)).not.toBe(jitterDelay("a", t + 1000, 3_600_000));
  });

  it("no jitter is no delay", () => {
    expect(jitterDelay("nightly-orders", at("2026-11-16T01:00:00Z"), 0)).toBe(0);
  });
});
