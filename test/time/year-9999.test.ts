/**
 * The end of time: RFC 3339 stops at 9999-12-31T23:59:59.999Z, and so do occurrences. A schedule
 * whose next occurrence would fall later has ended. The zone table ends with year 9999 too, and a
 * cron schedule in a zone west of UTC used to loop forever there, blocking the whole server on one
 * request (`start_at` in 9999 with America/New_York).
 */
import { describe, expect, it } from "vitest";
import { compileTiming } from "../../src/time/schedule-timing.js";
import { LAST_INSTANT_MS } from "../../src/time/timing.js";
import { orbit } from "../e2e/harness.js";
import { at, next } from "./support.js";

describe("occurrences end with year 9999", () => {
  it("an interval has none after 9999-12-31T23:59:59.999Z", () => {
    expect(next({ interval: "10s", startAt: at("9999-12-31T23:59:59Z") }, "9999-12-31T00:00:00Z", 5)).toEqual([
      "9999-12-31T23:59:59Z",
    ]);
    const timing = compileTiming({ interval: "1d" }).timing;
    expect(timing.nextAfter(at("9999-12-31T00:00:00Z"))).toBeNull();
    expect(timing.countBetween(at("9999-12-30T00:00:00Z"), LAST_INSTANT_MS + 86_400_000 * 10)).toBe(1);
  });

  it("a cron whose last local time falls in UTC year 10000 has ended", () => {
    // 23:00 on 31 December 9999 at UTC-12 is 11:00 on 1 January 10000 UTC: not writable.
    const timing = compileTiming({ cron: "0 23 31 12 *", timezone: "Etc/GMT+12" }).timing;
    expect(timing.nextAfter(at("9999-12-30T00:00:00Z"))).toBeNull();
    expect(next({ cron: "0 23 31 12 *", timezone: "Etc/GMT-14" }, "9998-12-30T00:00:00Z", 3)).toEqual([
      "9998-12-31T09:00:00Z",
      "9999-12-31T09:00:00Z",
    ]);
  });

  it("a cron west of UTC stops after its last occurrence instead of looping (process, 30 s bound)", async () => {
    const r = await orbit([
      ...["schedule", "preview", "--cron", "0 1 * * *", "--timezone", "America/New_York"],
      ...["--from", "9999-12-30T00:00:00Z", "--count", "3", "--json"],
    ]);
    expect(r).toEqual({
      code: 0,
      stdout: '{"next_fire_times":["9999-12-30T06:00:00Z","9999-12-31T06:00:00Z"]}\n',
      stderr: "",
    });
  });
});
