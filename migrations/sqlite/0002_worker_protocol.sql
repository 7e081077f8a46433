-- The worker protocol (docs/workflows.md): the retry policy a task was leased under, the order in
-- which a run's steps completed (compensations run in reverse), and the reaper's index.
-- migrations/postgres/0002_worker_protocol.sql must end with the same tables and columns.

ALTER TABLE orbit_worker_tasks ADD COLUMN max_attempts INTEGER NOT NULL DEFAULT 1;
ALTER TABLE orbit_worker_tasks ADD COLUMN backoff_ms INTEGER NOT NULL DEFAULT 0;
-- Leases to reap: only leased tasks, by expiry.
CREATE INDEX orbit_worker_tasks_lease ON orbit_worker_tasks (lease_until_ms) WHERE state = 'leased';

ALTER TABLE orbit_step_results ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
