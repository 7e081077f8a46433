/**
 * Stored settings are checked once when read back (src/scheduler/stored-settings.ts), against the
 * settings table, instead of being cast.
 */
import { describe, expect, it } from "vitest";
import { settingsOf } from "../../src/scheduler/stored-settings.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { schedule } from "../store/fixtures/records.js";

const valid = {
  schedule_id: "s",
  workflow: "W",
  input: { a: 1 },
  input_text: '{"a":1}',
  interval: "10s",
  overlap: "skip",
  catchup: "catch_up",
  max_catch_up: 5,
  paused: false,
  notify: [{ url: "https://example.test/hook" }],
};

describe("stored settings", () => {
  it("reads valid settings back as they are", () => {
    const row = schedule("s", { spec: valid });
    expect(settingsOf(row)).toBe(row.spec);
    expect(settingsOf(row)).toBe(row.spec); // checked once, the same object again
  });

  it("refuses settings this release cannot read, naming the schedule and the setting", () => {
    expect(() => settingsOf(schedule("s", { spec: { ...valid, overlap: "sometimes" } }))).toThrow(
      /^schedule s: the stored setting overlap must be equal to one of the allowed values/,
    );
    expect(() => settingsOf(schedule("s", { spec: { ...valid, max_catch_up: "5" } }))).toThrow(
      "schedule s: the stored setting max_catch_up must be integer",
    );
    expect(() => settingsOf(schedule("s", { spec: { ...valid, jitter: null } }))).toThrow("setting jitter");
    const { workflow: _w, ...noWorkflow } = valid;
    expect(() => settingsOf(schedule("s", { spec: noWorkflow }))).toThrow(
      "schedule s: the stored settings must have required property 'workflow'",
    );
  });
});

describeEachDialect("stored settings read from the database", (dialect) => {
  const db = useStore(dialect);

  it("are checked at every read: a row read again unchanged is still refused when its settings are not valid", async () => {
    await db.store.insertSchedule(schedule("good", { spec: valid }));
    await db.store.insertSchedule(schedule("bad", { spec: { ...valid, schedule_id: "bad", overlap: "sometimes" } }));
    for (let read = 0; read < 3; read++) {
      const [bad, good] = await db.store.listSchedules({ limit: 10 });
      expect(settingsOf(good as NonNullable<typeof good>)).toEqual(valid);
      expect(() => settingsOf(bad as NonNullable<typeof bad>)).toThrow("schedule bad: the stored setting overlap");
      const again = await db.store.getSchedule("bad");
      expect(() => settingsOf(again as NonNullable<typeof again>)).toThrow("schedule bad: the stored setting overlap");
    }
  });
});
