/**
 * A scrape's reads of the database are bounded (src/api/metrics.ts): behind a lock on
 * orbit_schedules a scrape answered after 30 s, when at all (Prometheus gives up at 10 s), then with
 * `orbit_schedules_overdue NaN` and nothing saying why. What it could not read in time is marked
 * `orbit_scrape_read_success 0`, the rest is read, and the firing loop's wait is there, known
 * without the database. Fake stores, so a read that never answers is exact; the bound is shortened.
 */
import { describe, expect, it } from "vitest";
import { ServerMetrics } from "../../src/api/metrics.js";
import type { Store, StoreOps } from "../../src/store/store.js";
import { answering, seriesValue } from "./metrics-fakes.js";

const never = (): Promise<never> => new Promise(() => undefined);
const metricsOf = (store: object) =>
  new ServerMetrics({ store: store as Store, graceMs: 60_000, now: async () => 0, readMs: 50 });

describe("/metrics with reads of the database that do not answer", () => {
  it("answers within its bound, marking what it could not read and reading the rest", async () => {
    // orbit_schedules is locked: the reads of the schedule rows wait; the others answer.
    const store = { ...answering, countOverdueSchedules: never, listScheduleOutcomeFigures: never };
    const text = await metricsOf(store).text();
    expect(seriesValue(text, "orbit_schedules_overdue")).toBe("NaN");
    expect(seriesValue(text, "orbit_database_up")).toBe("1");
    expect(seriesValue(text, 'orbit_executions{status="RUNNING"}')).toBe("1");
    expect(seriesValue(text, 'orbit_scrape_read_success{metric="orbit_schedules_overdue"}')).toBe("0");
    expect(seriesValue(text, 'orbit_scrape_read_success{metric="orbit_executions"}')).toBe("1");
    for (const metric of [
      "orbit_schedule_last_success_timestamp_seconds",
      "orbit_schedule_consecutive_failures",
      "orbit_schedule_failures_total",
    ]) {
      expect(seriesValue(text, `orbit_scrape_read_success{metric="${metric}"}`)).toBe("0");
    }
    // Nothing answers at all: still a scrape, the database not up.
    const silent = await metricsOf({ ...Object.fromEntries(Object.keys(answering).map((k) => [k, never])) }).text();
    expect(seriesValue(silent, "orbit_database_up")).toBe("0");
    expect(seriesValue(silent, 'orbit_scrape_read_success{metric="orbit_executions"}')).toBe("0");
  });

  it("reads apart from the pool when the store offers it, and each scrape afresh", async () => {
    let overdue = 3;
    // The pool's every connection waits (the plain reads never answer); the connections apart answer.
    const pooled = Object.fromEntries(Object.keys(answering).map((k) => [k, never]));
    const apart = { ...answering, countOverdueSchedules: async () => overdue };
    const store = { ...pooled, readApart: <T>(fn: (ops: StoreOps) => Promise<T>) => fn(apart as unknown as StoreOps) };
    const metrics = metricsOf(store);
    expect(seriesValue(await metrics.text(), "orbit_schedules_overdue")).toBe("3");
    overdue = 0;
    const text = await metrics.text();
    expect(seriesValue(text, "orbit_schedules_overdue")).toBe("0");
    expect(seriesValue(text, 'orbit_scrape_read_success{metric="orbit_schedules_overdue"}')).toBe("1");
  });

  it("shows how long the fire batch in progress has waited for the database", async () => {
    const metrics = metricsOf(answering);
    expect(seriesValue(await metrics.text(), "orbit_schedule_fire_waiting_seconds")).toBe("0");
    expect(seriesValue(await metrics.text(12_500), "orbit_schedule_fire_waiting_seconds")).toBe("12.5");
  });
});
