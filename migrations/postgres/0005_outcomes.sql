-- Outcomes you can see and act on (docs/outcomes.md): each schedule's last outcome and failure
-- counters, execution deadlines (run_timeout, start_timeout), per-workflow defaults and deprecated
-- versions, the workers seen polling, and the notify webhook outbox.
-- migrations/sqlite/0005_outcomes.sql must end with the same tables and columns.

-- Written only by the execution-ended hook, never by a fire or a settings update (no revision move).
ALTER TABLE orbit_schedules ADD COLUMN last_outcome JSONB;
ALTER TABLE orbit_schedules ADD COLUMN last_success_ms BIGINT;
ALTER TABLE orbit_schedules ADD COLUMN last_failure_ms BIGINT;
ALTER TABLE orbit_schedules ADD COLUMN consecutive_failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE orbit_schedules ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;

-- start_deadline_ms is cleared when a worker first takes the task; run_deadline_ms covers every retry.
ALTER TABLE orbit_executions ADD COLUMN start_deadline_ms BIGINT;
ALTER TABLE orbit_executions ADD COLUMN run_deadline_ms BIGINT;
-- The timeout sweeper's indexes: only executions still running with a deadline.
CREATE INDEX orbit_executions_start_deadline ON orbit_executions (start_deadline_ms)
  WHERE status IN ('RUNNING', 'COMPENSATING') AND start_deadline_ms IS NOT NULL;
CREATE INDEX orbit_executions_run_deadline ON orbit_executions (run_deadline_ms)
  WHERE status IN ('RUNNING', 'COMPENSATING') AND run_deadline_ms IS NOT NULL;

-- A deprecated version is skipped by "latest".
ALTER TABLE orbit_workflows ADD COLUMN deprecated_ms BIGINT;

-- Settings of a workflow name, across its versions: default timeouts and notify webhooks.
CREATE TABLE orbit_workflow_settings (
  name TEXT PRIMARY KEY,
  settings JSONB NOT NULL,
  updated_ms BIGINT NOT NULL
);

-- Workers as last seen polling (written at most every few seconds per worker).
CREATE TABLE orbit_workers (
  worker_id TEXT PRIMARY KEY,
  workflows JSONB NOT NULL,
  first_seen_ms BIGINT NOT NULL,
  last_poll_ms BIGINT NOT NULL
);

-- Webhook deliveries: written in the transaction that ends an execution (or pauses a schedule),
-- sent after it commits, retried with back-off until delivered or given up.
CREATE TABLE orbit_notifications (
  id BIGSERIAL PRIMARY KEY,
  schedule_id TEXT,
  workflow TEXT NOT NULL,
  event TEXT NOT NULL,
  url TEXT NOT NULL,
  payload JSONB NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_ms BIGINT,
  last_error TEXT,
  created_ms BIGINT NOT NULL,
  delivered_ms BIGINT
);
CREATE INDEX orbit_notifications_due ON orbit_notifications (next_attempt_ms) WHERE state = 'pending';
CREATE INDEX orbit_notifications_schedule ON orbit_notifications (schedule_id, id DESC);
