/**
 * A schedule's JSON view (src/scheduler/view.ts): its upcoming times, which schedules sharing a
 * timing compute once, are still each schedule's own.
 */
import { describe, expect, it } from "vitest";
import { scheduleView } from "../../src/scheduler/view.js";
import { formatInstant } from "../../src/time/format.js";
import { schedule, T0 } from "../store/fixtures/records.js";

const spec = (id: string) => ({
  schedule_id: id,
  workflow: "W",
  input: {},
  cron: "*/5 * * * *",
  overlap: "skip",
  catchup: "catch_up",
  paused: false,
});
const MIN = 60_000;
const at = (ms: number) => formatInstant(ms);
const view = (row: ReturnType<typeof schedule>, now: number) =>
  scheduleView(row, now, { lastTick: null, deadLetters: [] }) as { next_fire_times: string[]; paused: boolean };

describe("scheduleView's upcoming times", () => {
  it("lists each schedule's own next times when schedules share a timing, in any order", () => {
    const hour = Math.ceil(T0 / (60 * MIN)) * 60 * MIN;
    const a = schedule("a", { spec: spec("a"), nextFireMs: hour, dueMs: hour });
    const b = schedule("b", { spec: spec("b"), nextFireMs: hour + 20 * MIN, dueMs: hour + 20 * MIN });
    const p = schedule("p", { spec: { ...spec("p"), paused: true }, paused: true, state: "paused" });
    const fromA = [0, 5, 10, 15, 20].map((m) => at(hour + m * MIN));
    const fromB = [20, 25, 30, 35, 40].map((m) => at(hour + m * MIN));
    for (let round = 0; round < 2; round++) {
      expect(view(a, T0).next_fire_times).toEqual(fromA);
      expect(view(b, T0).next_fire_times).toEqual(fromB);
      expect(view(a, T0).next_fire_times).toEqual(fromA);
    }
    // A paused schedule lists the times after now, whatever now is at each read.
    expect(view(p, hour + MIN).next_fire_times).toEqual([5, 10, 15, 20, 25].map((m) => at(hour + m * MIN)));
    expect(view(p, hour + 11 * MIN).next_fire_times).toEqual([15, 20, 25, 30, 35].map((m) => at(hour + m * MIN)));
    // One view's list is its own: changing it changes no other view.
    const first = view(a, T0).next_fire_times;
    first.length = 0;
    expect(view(a, T0).next_fire_times).toEqual(fromA);
  });
});
