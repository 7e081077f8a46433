-- orbit: additive
-- The FAILED executions of the deleted schedules under each id, so the sum that
-- orbit_schedule_failures_total shows past --metrics-schedule-labels never goes down when a
-- schedule is deleted (a counter that drops reads as a reset, and rate() as a burst of failures;
-- docs/outcomes.md § Metrics). Additive although older servers do not advance it: only that metric
-- reads it, and an older server's delete during a roll leaves the failures out, as before.
ALTER TABLE orbit_schedule_tombstones ADD COLUMN failures BIGINT NOT NULL DEFAULT 0;
