import { describe, expect, it } from "vitest";
import { OrbitError } from "../../src/domain/errors.js";
import { suggestKey } from "../../src/domain/suggest.js";
import { mergeSettings, validateSettings } from "../../src/scheduler/settings.js";
import { parseInstant } from "../../src/time/format.js";

const NOW = parseInstant("2026-11-15T18:51:00Z");
const base = { schedule_id: "s", workflow: "W", interval: "10s" };

function refusal(body: Record<string, unknown>): OrbitError {
  try {
    validateSettings(body, NOW);
  } catch (e) {
    if (e instanceof OrbitError) return e;
    throw e;
  }
  throw new Error("expected a refusal");
}

describe("schedule settings", () => {
  it("applies the defaults of docs/design.md § Settings", () => {
    const { settings } = validateSettings(base, NOW);
    expect(settings).toEqual({
      schedule_id: "s",
      workflow: "W",
      input: {},
      interval: "10s",
      overlap: "skip",
      catchup: "skip_missed",
      paused: false,
    });
  });

  it("refuses unknown keys, suggesting the setting meant", () => {
    expect(refusal({ ...base, misfire_polcy: "latest" }).message).toBe(
      'unknown setting "misfire_polcy"; did you mean "catchup"?',
    );
    expect(refusal({ ...base, timezon: "UTC" }).message).toBe('unknown setting "timezon"; did you mean "timezone"?');
    expect(refusal({ ...base, zzzzzzzz: 1 }).message).toBe('unknown setting "zzzzzzzz"');
    // Kubernetes CronJob's names, by what they do there.
    const meant = (key: string) => refusal({ ...base, [key]: 1 }).message.replace(/^.*did you mean /, "");
    expect(meant("startingDeadlineSeconds")).toBe('"catchup_window"?');
    expect(meant("activeDeadlineSeconds")).toBe('"run_timeout"?');
    for (const key of ["suspend", "suspended", "enabled", "disabled"]) expect(meant(key)).toBe('"paused"?');
    expect(refusal({ ...base, misfire_polcy: "x" }).code).toBe("INVALID_ARGUMENT");
  });

  it("needs exactly one of cron and interval", () => {
    expect(refusal({ schedule_id: "s", workflow: "W" }).message).toBe("a schedule needs a cron or an interval");
    expect(refusal({ ...base, cron: "* * * * *" }).message).toBe("give either cron or interval, not both");
  });

  it("checks ids, keys and enumerations", () => {
    expect(refusal({ ...base, schedule_id: "a b" }).message).toContain('schedule_id "a b" is invalid');
    expect(refusal({ ...base, schedule_id: "x".repeat(101) }).message).toContain("is invalid");
    expect(validateSettings({ ...base, schedule_id: "A-z_0.9" }, NOW).settings.schedule_id).toBe("A-z_0.9");
    expect(refusal({ ...base, concurrency_key: "-k" }).message).toContain('concurrency_key "-k" is invalid');
    expect(refusal({ ...base, overlap: "queue" }).message).toBe(
      'overlap "queue" is not one of skip, allow, cancel_previous, buffer_one, buffer_all',
    );
    expect(refusal({ ...base, catchup: "latest" }).message).toBe(
      'catchup "latest" is not one of skip_missed, run_once, catch_up; did you mean "run_once"?',
    );
    // A version pin is semver, as every registered version is (a pin of "1.0" was answered 404).
    expect(refusal({ ...base, version: "1.0" }).message).toBe(
      'version "1.0" is not a semver version (MAJOR.MINOR.PATCH, e.g. 1.0.0): pin a registered version, or leave version out for the latest',
    );
    expect(refusal({ ...base, version: "latest" }).code).toBe("INVALID_ARGUMENT");
    // Build metadata is semver, but not a workflow's version: said so, as on register.
    expect(refusal({ ...base, version: "1.0.0+build.5" }).message).toBe(
      `version "1.0.0+build.5" has build metadata (+build.5), which Orbit does not accept: semver's order ignores it, so 1.0.0+build.5 would tie with 1.0.0 for the latest: pin a registered version, or leave version out for the latest`,
    );
    expect(validateSettings({ ...base, version: "1.2.3-rc.1" }, NOW).settings.version).toBe("1.2.3-rc.1");
  });

  it("ties max_catch_up to catch_up and bounds it", () => {
    expect(refusal({ ...base, catchup: "catch_up" }).message).toContain("needs max_catch_up");
    expect(refusal({ ...base, max_catch_up: 5 }).message).toBe('max_catch_up is only allowed with catchup "catch_up"');
    expect(refusal({ ...base, catchup: "catch_up", max_catch_up: 1001 }).message).toBe(
      "max_catch_up must be a whole number from 1 to 1000",
    );
    expect(validateSettings({ ...base, catchup: "catch_up", max_catch_up: 1000 }, NOW).settings.max_catch_up).toBe(
      1000,
    );
  });

  it("bounds catchup_window and jitter", () => {
    expect(refusal({ ...base, catchup_window: "9s" }).message).toBe('catchup_window "9s" must be between 10s and 365d');
    expect(refusal({ ...base, catchup_window: "366d" }).message).toBe(
      'catchup_window "366d" must be between 10s and 365d',
    );
    expect(validateSettings({ ...base, catchup_window: "1h" }, NOW).catchupWindowMs).toBe(3_600_000);
    expect(refusal({ ...base, jitter: "2d" }).message).toBe('jitter "2d" must be between 1ms and 1d');
  });

  it("suggests the DST mode a misspelt dst was meant to be", () => {
    const berlin = { schedule_id: "d", workflow: "OrderProcessing", cron: "30 2 * * *", timezone: "Europe/Berlin" };
    expect(refusal({ ...berlin, dst: "wall_clok" }).message).toMatch(
      /^dst "wall_clok" is not a DST mode: .*; did you mean "wall_clock"\?$/,
    );
    expect(refusal({ ...berlin, dst: "shift:lst" }).message).toMatch(/did you mean "shift:last"\?$/);
    expect(refusal({ ...berlin, dst: "sometimes" }).message).not.toContain("did you mean");
  });

  it("refuses a jitter longer than the shortest time between two occurrences (due times would overtake)", () => {
    const every10s = { schedule_id: "j", workflow: "OrderProcessing", interval: "10s" };
    expect(refusal({ ...every10s, jitter: "1h" }).message).toBe(
      'jitter "1h" is longer than the shortest time between two occurrences (10 seconds): an occurrence would come due after the next one; use a jitter of at most that',
    );
    expect(validateSettings({ ...every10s, jitter: "10s" }, NOW).jitterMs).toBe(10_000);
    // A cron's shortest gap: 09:00 and 10:00 every day are an hour apart.
    const twice = { schedule_id: "j", workflow: "OrderProcessing", cron: "0 9,10 * * *", timezone: "Europe/Berlin" };
    expect(refusal({ ...twice, jitter: "90m" }).message).toContain("(1 hour)");
    expect(validateSettings({ ...twice, jitter: "1h" }, NOW).jitterMs).toBe(3_600_000);
    // A daily cron across a DST change: the spring-forward day is 23 hours long.
    const daily = { schedule_id: "j", workflow: "OrderProcessing", cron: "30 3 * * *", timezone: "Europe/Berlin" };
    expect(refusal({ ...daily, jitter: "1d" }).message).toContain("(23 hours)");
    // An hourly cron in Lord Howe: the October change (half an hour, ten months from now, past the
    // next 400 occurrences) brings two occurrences 30 minutes apart. It was accepted, and the
    // occurrence after the shifted one came due first and was recorded missed.
    const lordHowe = {
      ...{ schedule_id: "lh5", workflow: "OrderProcessing", cron: "15 * * * *" },
      timezone: "Australia/Lord_Howe",
    };
    expect(refusal({ ...lordHowe, jitter: "59m" }).message).toContain("(30 minutes)");
    expect(validateSettings({ ...lordHowe, jitter: "30m" }, NOW).jitterMs).toBe(1_800_000);
    // A leap-day cron: the scan stops two years ahead instead of walking 400 leap days (1,600 years).
    const leap = { schedule_id: "lp", workflow: "OrderProcessing", cron: "0 0 29 2 *", timezone: "Europe/Madrid" };
    expect(validateSettings({ ...leap, jitter: "1h" }, NOW).jitterMs).toBe(3_600_000);
    // A start_at years ahead: the scan starts there. From now it found no occurrence and let a jitter
    // of 10 s on a per-second cron through, which then came due out of order and was recorded missed.
    const later = { schedule_id: "jx", workflow: "OrderProcessing", start_at: "2029-06-01T00:00:00Z" };
    expect(refusal({ ...later, cron: "* * * * * *", jitter: "10s" }).message).toContain("(1 second)");
    expect(refusal({ ...later, cron: "15 * * * *", timezone: "Australia/Lord_Howe", jitter: "45m" }).message).toContain(
      "(30 minutes)",
    );
    // Twice a day in Berlin from mid-April: the spring night eleven months ahead brings 22:00 and
    // the next 10:00 eleven hours apart (21:00Z, 08:00Z). The 400 occurrences looked at ended
    // before it, and its change's scan began 3 hours before the change, after the pair's first.
    const twiceBerlin = {
      ...{ schedule_id: "tb", workflow: "OrderProcessing", cron: "0 10,22 * * *", timezone: "Europe/Berlin" },
      start_at: "2027-04-15T00:00:00Z",
    };
    expect(refusal({ ...twiceBerlin, jitter: "11h30m" }).message).toContain("(11 hours)");
    expect(validateSettings({ ...twiceBerlin, jitter: "11h" }, NOW).jitterMs).toBe(11 * 3_600_000);
    // In UTC, odd days of some months: 23:00 on 29 February 2028, then midnight on 1 March, an
    // hour apart, past the first 400 occurrences (it said 7 hours and took a 3-hour jitter).
    const oddDays = { schedule_id: "od", workflow: "OrderProcessing", cron: "0 0,8,16,23 */2 2,3,5,7,9,10,12 *" };
    expect(refusal({ ...oddDays, jitter: "3h" }).message).toContain("(1 hour)");
    // One date a year, both copies of New York's repeated hour: 3 November is its first Sunday of
    // November in 2030, four years ahead, when 01:30 comes an hour after 01:30. A 1-day jitter was
    // let through, and on a controlled clock one of the two came due after the other and was missed.
    const nov3 = {
      schedule_id: "nov3",
      workflow: "OrderProcessing",
      cron: "30 1 3 11 *",
      timezone: "America/New_York",
    };
    expect(refusal({ ...nov3, dst: "wall_clock", jitter: "1d" }).message).toContain("(1 hour)");
    // A leap day four years after start_at: two years ahead did not reach it.
    const leapLater = { schedule_id: "lb", workflow: "OrderProcessing", cron: "0 0,23 28,29 2 *" };
    expect(refusal({ ...leapLater, start_at: "2028-03-01T00:00:00Z", jitter: "2h" }).message).toContain("(1 hour)");
    // 28 and 29 February on Saturdays (`*/6` is Sunday and Saturday): 23:00 on Saturday 28 and
    // midnight on Sunday 29 February first come in 2032, past the five years scanned; a 12-hour
    // jitter was let through (a tester). Matching days are looked at over the 400-year cycle.
    const leapWeekend = { schedule_id: "lw", workflow: "OrderProcessing", cron: "0 0,23 28,29 2 */6" };
    expect(refusal({ ...leapWeekend, jitter: "12h" }).message).toContain("(1 hour)");
    // Days one week apart at most: the jitter may be up to the week less the day's spread.
    const mondays = { schedule_id: "mo", workflow: "OrderProcessing", cron: "0 6,18 * * MON" };
    expect(refusal({ ...mondays, jitter: "13h" }).message).toContain("(12 hours)");
    expect(validateSettings({ ...mondays, jitter: "12h" }, NOW).jitterMs).toBe(12 * 3_600_000);
    // Days of the month only (no weekday): eight years of days hold every distance. From March 2097
    // the next 29 February is in 2104 (2100 is not a leap year), past the five years of occurrences.
    const leapCentury = { ...leapLater, start_at: "2097-03-01T00:00:00Z" };
    expect(refusal({ ...leapCentury, jitter: "2h" }).message).toContain("(1 hour)");
    // Once a year under `once` (the default): the jitter may be a day.
    expect(validateSettings({ ...nov3, jitter: "1d" }, NOW).jitterMs).toBe(86_400_000);
  });

  it("refuses a cron or an interval with blanks around it (they were stored and listed)", () => {
    const s = { schedule_id: "b", workflow: "OrderProcessing" };
    expect(refusal({ ...s, cron: " 0 0 * * * " })).toMatchObject({
      code: "INVALID_SCHEDULE",
      message: 'cron " 0 0 * * * " has blanks at its start or end; give "0 0 * * *"',
    });
    // All blanks: nothing to suggest (it said `give ""`).
    expect(refusal({ ...s, cron: "   " }).message).toBe('cron "   " is empty: give an expression');
    expect(refusal({ ...s, interval: "5s " }).message).toBe('interval "5s " has blanks at its start or end; give "5s"');
  });

  it("refuses secret references anywhere in the input", () => {
    const e = refusal({ ...base, input: { db: { password: "vault://kv/db" } } });
    expect(e.message).toContain('input.db.password holds a secret reference ("vault://…")');
    const templates = [
      // biome-ignore lint/suspicious/noTemplateCurlyInString: templates Orbit does not fill in, refused as references
      ...["${env://HOME}", "Bearer ${VAULT://kv/token}", "${ env://HOME}", "{{env://X}}", "$(var://z)", "$env://X"],
      "\u200benv://HOME",
      "\uff45\uff4e\uff56://HOME",
      "env\uff1a\uff0f\uff0fHOME",
    ];
    for (const p of ["env://X", "secret://y", "var://z", ...templates])
      expect(() => validateSettings({ ...base, input: { a: [p] } }, NOW)).toThrow(/secret reference/);
    // The path names the first reference, in an array and as a key.
    expect(refusal({ ...base, input: { a: [1, { b: "x" }, { b: "env://X" }] } }).message).toContain(
      'input.a[2].b holds a secret reference ("env://…")',
    );
    expect(refusal({ ...base, input: { a: [{ "Secret://k": 1 }] } }).message).toContain(
      'input.a[0] key "Secret://k" holds a secret reference ("secret://…")',
    );
    // A scheme mentioned in a text is not a reference.
    expect(validateSettings({ ...base, input: { note: "see env://X in the runbook" } }, NOW).settings.input).toEqual({
      note: "see env://X in the runbook",
    });
  });

  it("refuses timezones on intervals, abbreviations, never-firing crons and bad times", () => {
    expect(refusal({ ...base, timezone: "Europe/Berlin" }).message).toBe(
      "timezone applies to cron schedules only: intervals are absolute",
    );
    expect(refusal({ schedule_id: "s", workflow: "W", cron: "0 2 * * *", timezone: "IST" }).code).toBe(
      "INVALID_SCHEDULE",
    );
    expect(refusal({ schedule_id: "s", workflow: "W", cron: "0 0 30 2 *" }).message).toBe(
      "cron `0 0 30 2 *`: never fires in the next five years",
    );
    // Every time in a spring-forward gap, skipped by its dst: said, or the date reads as missing.
    const gap = { schedule_id: "s", workflow: "W", cron: "30 2 * 3 SUN#2", timezone: "America/New_York" };
    expect(refusal({ ...gap, dst: "wall_clock" }).message).toBe(
      'cron `30 2 * 3 SUN#2`: never fires in the next five years: each of its times falls in a spring-forward gap of America/New_York, which dst "wall_clock" skips (dst "once", the default, fires it after the gap)',
    );
    // The same rule for an interval (it was created already ended).
    expect(refusal({ schedule_id: "s", workflow: "W", interval: "10000000d" })).toMatchObject({
      code: "INVALID_SCHEDULE",
      message: 'interval "10000000d": never fires in the next five years',
    });
    expect(refusal({ schedule_id: "s", workflow: "W", cron: "0 25 * * *" }).message).toBe(
      "cron `0 25 * * *`: `25` is out of range for the hour field (0-23)",
    );
    expect(refusal({ ...base, start_at: "tomorrow" }).code).toBe("INVALID_ARGUMENT");
    expect(refusal({ ...base, start_at: "2026-12-01T00:00:00Z", end_at: "2026-11-01T00:00:00Z" }).message).toBe(
      "end_at is before start_at",
    );
    expect(refusal({ ...base, description: "x".repeat(1001) }).message).toContain("the most is 1000");
    // Characters, not UTF-16 units: 1,000 emoji are allowed, 1,001 are 1,001 characters.
    expect(() => validateSettings({ ...base, description: "😀".repeat(1000) }, NOW)).not.toThrow();
    expect(refusal({ ...base, pause_note: "😀".repeat(1001) }).message).toBe(
      "pause_note is 1001 characters long; the most is 1000",
    );
  });

  it("accepts labels (keys sorted), refuses bad names, values and too many", () => {
    expect(
      validateSettings({ ...base, labels: { team: "ops", "orbit/owner": "billing" } }, NOW).settings.labels,
    ).toEqual({
      "orbit/owner": "billing",
      team: "ops",
    });
    expect(validateSettings(base, NOW).settings.labels).toBeUndefined();
    expect(refusal({ ...base, labels: ["a"] }).message).toBe("labels must be an object of names to string values");
    expect(refusal({ ...base, labels: { "-x": "v" } }).message).toMatch(/^labels name "-x" is invalid/);
    expect(refusal({ ...base, labels: { team: 1 } }).message).toMatch(/^labels\.team must be a string/);
    expect(refusal({ ...base, labels: { team: "a,b" } }).message).toMatch(/^labels\.team must be a string/);
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, "v"]));
    expect(refusal({ ...base, labels: many }).message).toBe("labels holds 21 labels; the most is 20");
    expect(refusal({ ...base, tags: {} }).message).toBe('unknown setting "tags"; did you mean "labels"?');
  });

  it("takes max_runs from 1 to 1e9, refuses anything else, and suggests it for Temporal's and BullMQ's names", () => {
    expect(validateSettings({ ...base, max_runs: 3 }, NOW).settings.max_runs).toBe(3);
    expect(validateSettings({ ...base, max_runs: 1_000_000_000 }, NOW).settings.max_runs).toBe(1_000_000_000);
    expect(validateSettings({ ...base, max_runs: null }, NOW).settings.max_runs).toBeUndefined();
    for (const bad of [0, -1, 1.5, 1_000_000_001, "3"]) {
      expect(refusal({ ...base, max_runs: bad }).message).toBe("max_runs must be a whole number from 1 to 1000000000");
    }
    expect(refusal({ ...base, remaining_actions: 3 }).message).toContain('did you mean "max_runs"?');
    expect(refusal({ ...base, limit: 3 }).message).toContain('did you mean "max_runs"?');
  });

  it("merges a patch: null unsets, cron replaces interval", () => {
    const { settings } = validateSettings({ ...base, jitter: "5s" }, NOW);
    const merged = mergeSettings(settings, { cron: "*/5 * * * *", timezone: "Europe/Berlin", jitter: null });
    expect(merged).not.toHaveProperty("interval");
    expect(merged).not.toHaveProperty("jitter");
    expect(validateSettings(merged, NOW).settings.cron).toBe("*/5 * * * *");
    expect(() => mergeSettings(settings, { schedule_id: "other" })).toThrow("schedule_id cannot be changed");
  });

  it("suggests by edit distance and by other products' names", () => {
    expect(suggestKey("overlapp", ["overlap", "catchup"])).toBe("overlap");
    expect(suggestKey("misfire_policy", ["catchup"], { misfire_policy: "catchup" })).toBe("catchup");
    expect(suggestKey("completely_else", ["overlap"])).toBeNull();
    // A one-letter key is not one edit from everything short: "a" was "did you mean timezone?" (by "tz").
    expect(suggestKey("a", ["timezone"], { tz: "timezone" })).toBeNull();
    expect(suggestKey("tx", ["timezone"], { tz: "timezone" })).toBe("timezone");
  });
});
