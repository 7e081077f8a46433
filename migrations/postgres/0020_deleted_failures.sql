-- orbit: additive
-- The FAILED executions of the deleted schedules under each id, so the sum that
-- orbit_schedule_failures_total shows past --metrics-schedule-labels never goes down when a
-- schedule is deleted (a counter that drops reads as a reset, and rate() as a burst of failures;
-- docs/outcomes.md § Metrics).
ALTER TABLE orbit_schedule_tombstones ADD COLUMN failures BIGINT NOT NULL DEFAULT 0;
