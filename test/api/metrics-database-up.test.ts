/**
 * `orbit_database_up` says whether this scrape's reads reached the database (src/api/metrics.ts):
 * behind a proxy refusing new connections, one old connection still answered `SELECT now()` and a
 * tester's scrape said `orbit_database_up 1` beside every `orbit_scrape_read_success` 0 and
 * `orbit_schedules_overdue NaN`. A read the database stopped itself (a lock wait past its bound)
 * reached it: up stays 1 (docs/server.md § Metrics). Fake stores, so each read's answer is exact.
 */
import { expect, it } from "vitest";
import { ServerMetrics } from "../../src/api/metrics.js";
import { OrbitError } from "../../src/domain/errors.js";
import type { Store } from "../../src/store/store.js";
import { answering, seriesValue } from "./metrics-fakes.js";

const scrape = (store: object) =>
  new ServerMetrics({ store: store as Store, graceMs: 60_000, now: async () => 0, readMs: 1000 }).text();
const failing = (err: Error) => async () => {
  throw err;
};

it("is 0 when the time was read but the other reads could not reach the database", async () => {
  const refused = new OrbitError(
    "UNAVAILABLE",
    "the database is unavailable (connect ECONNREFUSED 127.0.0.1:6543); retry shortly",
  );
  const text = await scrape({
    ...answering,
    countOverdueSchedules: failing(refused),
    countExecutionsByStatus: failing(refused),
    listScheduleOutcomeFigures: failing(refused),
  });
  expect(seriesValue(text, "orbit_database_up")).toBe("0");
  expect(seriesValue(text, "orbit_schedules_overdue")).toBe("NaN");
  expect(seriesValue(text, 'orbit_scrape_read_success{metric="orbit_executions"}')).toBe("0");
});

it("stays 1 when the database stopped a read itself (a lock wait, its statement bound)", async () => {
  const lock = new OrbitError(
    "UNAVAILABLE",
    "the database aborted the transaction (canceling statement due to lock timeout); nothing of it was kept, retry",
    { lockTimeout: true },
  );
  const statement = new OrbitError(
    "UNAVAILABLE",
    "the database aborted the transaction (canceling statement due to statement timeout); nothing of it was kept, retry",
  );
  const text = await scrape({
    ...answering,
    countOverdueSchedules: failing(lock),
    listScheduleOutcomeFigures: failing(statement),
  });
  expect(seriesValue(text, "orbit_database_up")).toBe("1");
  expect(seriesValue(text, 'orbit_scrape_read_success{metric="orbit_schedules_overdue"}')).toBe("0");
  expect(seriesValue(text, 'orbit_scrape_read_success{metric="orbit_executions"}')).toBe("1");
});
