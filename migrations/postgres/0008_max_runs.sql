-- max_runs (docs/outcomes.md § Run-count limit): how many occurrences the schedule's timing started,
-- the count max_runs is checked against. Manual triggers and backfills do not count. Written by
-- fires (with fired and skipped); existing schedules start at 0.
ALTER TABLE orbit_schedules ADD COLUMN runs INTEGER NOT NULL DEFAULT 0;
