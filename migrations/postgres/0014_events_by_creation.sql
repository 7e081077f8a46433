-- orbit: additive
-- The column SQLite's 0014 keys events by (docs/storage.md § Events in creation order), so both
-- dialects have the same columns; PostgreSQL writes it and keeps its key (execution_id, seq). Rows
-- older servers write leave it NULL, which nothing on PostgreSQL reads.
ALTER TABLE orbit_execution_events ADD COLUMN execution_created_ms BIGINT;
