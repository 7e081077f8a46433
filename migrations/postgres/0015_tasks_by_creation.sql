-- orbit: additive
-- The column SQLite's 0015 finds a task's execution by (docs/storage.md § Tasks in creation order),
-- so both dialects have the same columns; PostgreSQL writes it and keeps its index (execution_id).
-- Rows older servers write leave it NULL, which nothing on PostgreSQL reads.
ALTER TABLE orbit_worker_tasks ADD COLUMN execution_created_ms BIGINT;
