-- The worker protocol (docs/workflows.md): the retry policy a task was leased under, the order in
-- which a run's steps completed (compensations run in reverse), and the reaper's index.
-- migrations/sqlite/0002_worker_protocol.sql must end with the same tables and columns.

ALTER TABLE orbit_worker_tasks ADD COLUMN max_attempts INTEGER NOT NULL DEFAULT 1;
ALTER TABLE orbit_worker_tasks ADD COLUMN backoff_ms BIGINT NOT NULL DEFAULT 0;
-- Leases to reap: only leased tasks, by expiry.
CREATE INDEX orbit_worker_tasks_lease ON orbit_worker_tasks (lease_until_ms) WHERE state = 'leased';

ALTER TABLE orbit_step_results ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;

-- A task that becomes pending wakes long-polling workers on every server. NOTIFY is delivered when
-- the transaction commits (never for one that rolls back), and identical notifications of one
-- transaction are folded into one, so a fire batch starting 200 executions sends one per workflow.
CREATE FUNCTION orbit_worker_tasks_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('orbit_worker_tasks', NEW.workflow);
  RETURN NULL;
END
$$;
CREATE TRIGGER orbit_worker_tasks_notify AFTER INSERT OR UPDATE OF state, available_ms ON orbit_worker_tasks
  FOR EACH ROW WHEN (NEW.state = 'pending') EXECUTE FUNCTION orbit_worker_tasks_notify();
