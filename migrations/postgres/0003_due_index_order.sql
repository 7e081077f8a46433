-- The firing loop reads due schedules ORDER BY due_ms, schedule_id LIMIT <batch>. With the index on
-- due_ms alone, a herd (many rows with one due_ms) was read and sorted whole for every batch:
-- O(herd) per batch. With schedule_id in the index the read stops after one batch.
DROP INDEX orbit_schedules_due;
CREATE INDEX orbit_schedules_due ON orbit_schedules (due_ms, schedule_id) WHERE state = 'active' AND due_ms IS NOT NULL;
