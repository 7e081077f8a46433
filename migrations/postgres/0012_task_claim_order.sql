-- orbit: additive
-- A poll leases the oldest pending tasks, `ORDER BY available_ms, created_ms` (docs/workflows.md §
-- Leasing). With only (state, available_ms), every task of a herd has the same available_ms, so
-- each poll read and sorted all of them to return 100; this index gives the order itself.
CREATE INDEX orbit_worker_tasks_claim ON orbit_worker_tasks (state, available_ms, created_ms);
