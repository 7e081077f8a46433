-- Orbit schema, PostgreSQL dialect. Append-only: never edit a shipped migration, add the next number.
-- Instants are BIGINT epoch milliseconds; JSON is JSONB; booleans are BOOLEAN.
-- migrations/sqlite/0001_init.sql must end with the same tables and columns (a test checks).

CREATE TABLE orbit_workflows (
  name TEXT NOT NULL,
  version TEXT NOT NULL,
  version_major INTEGER NOT NULL,
  version_minor INTEGER NOT NULL,
  version_patch INTEGER NOT NULL,
  version_prerelease TEXT,
  input_schema JSONB,
  description TEXT,
  created_ms BIGINT NOT NULL,
  PRIMARY KEY (name, version)
);

CREATE TABLE orbit_executions (
  execution_id TEXT PRIMARY KEY,
  workflow TEXT NOT NULL,
  version TEXT NOT NULL,
  input JSONB NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('RUNNING', 'COMPENSATING', 'COMPLETED', 'FAILED', 'CANCELLED')),
  schedule_id TEXT,
  "trigger" JSONB,
  result JSONB,
  error JSONB,
  cancel_reason TEXT,
  concurrency_key TEXT,
  run INTEGER NOT NULL DEFAULT 1,
  attempt INTEGER NOT NULL DEFAULT 1,
  created_ms BIGINT NOT NULL,
  started_ms BIGINT,
  ended_ms BIGINT
);
CREATE INDEX orbit_executions_status ON orbit_executions (status);
-- Overlap checks across schedules that share a concurrency key (docs/design.md § Overlap): running holders only.
CREATE INDEX orbit_executions_running_key ON orbit_executions (concurrency_key) WHERE status IN ('RUNNING', 'COMPENSATING') AND concurrency_key IS NOT NULL;
CREATE INDEX orbit_executions_created ON orbit_executions (created_ms DESC, execution_id DESC);
CREATE INDEX orbit_executions_workflow_created ON orbit_executions (workflow, created_ms DESC, execution_id DESC);
CREATE INDEX orbit_executions_schedule_created ON orbit_executions (schedule_id, created_ms DESC, execution_id DESC);

CREATE TABLE orbit_execution_events (
  execution_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  type TEXT NOT NULL,
  data JSONB NOT NULL,
  at_ms BIGINT NOT NULL,
  PRIMARY KEY (execution_id, seq)
);

CREATE TABLE orbit_schedules (
  schedule_id TEXT PRIMARY KEY,
  workflow TEXT NOT NULL,
  version TEXT,
  input JSONB NOT NULL,
  spec JSONB NOT NULL,
  paused BOOLEAN NOT NULL DEFAULT FALSE,
  pause_note TEXT,
  state TEXT NOT NULL CHECK (state IN ('active', 'paused', 'ended')),
  next_fire_ms BIGINT,
  due_ms BIGINT,
  retry_ms BIGINT,
  revision INTEGER NOT NULL,
  fired INTEGER NOT NULL DEFAULT 0,
  skipped INTEGER NOT NULL DEFAULT 0,
  last_fire_ms BIGINT,
  last_execution_id TEXT,
  last_error TEXT,
  buffered JSONB NOT NULL DEFAULT '[]',
  concurrency_key TEXT,
  created_ms BIGINT NOT NULL,
  updated_ms BIGINT NOT NULL
);
-- The firing loop's index: only active schedules with a due occurrence, by due time.
CREATE INDEX orbit_schedules_key ON orbit_schedules (concurrency_key) WHERE concurrency_key IS NOT NULL;
CREATE INDEX orbit_schedules_due ON orbit_schedules (due_ms) WHERE state = 'active' AND due_ms IS NOT NULL;

CREATE TABLE orbit_occurrences (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  schedule_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('started', 'skipped', 'buffered', 'dead_letter')),
  occurrence_ms BIGINT,
  range_from_ms BIGINT,
  range_to_ms BIGINT,
  count INTEGER NOT NULL DEFAULT 1,
  reason TEXT,
  execution_id TEXT,
  error TEXT,
  recorded_ms BIGINT NOT NULL
);
CREATE INDEX orbit_occurrences_schedule ON orbit_occurrences (schedule_id, id DESC);

CREATE TABLE orbit_idempotency_keys (
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  response JSONB,
  status INTEGER NOT NULL,
  created_ms BIGINT NOT NULL,
  PRIMARY KEY (scope, key)
);
CREATE INDEX orbit_idempotency_keys_created ON orbit_idempotency_keys (created_ms);

CREATE TABLE orbit_worker_tasks (
  task_id TEXT PRIMARY KEY,
  execution_id TEXT NOT NULL,
  run INTEGER NOT NULL,
  workflow TEXT NOT NULL,
  version TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'leased', 'done', 'cancelled')),
  attempt INTEGER NOT NULL,
  lease_owner TEXT,
  lease_until_ms BIGINT,
  available_ms BIGINT NOT NULL,
  created_ms BIGINT NOT NULL
);
CREATE INDEX orbit_worker_tasks_state_available ON orbit_worker_tasks (state, available_ms);
CREATE INDEX orbit_worker_tasks_execution ON orbit_worker_tasks (execution_id);

CREATE TABLE orbit_step_results (
  execution_id TEXT NOT NULL,
  run INTEGER NOT NULL,
  step TEXT NOT NULL,
  result JSONB,
  error JSONB,
  has_compensation BOOLEAN NOT NULL DEFAULT FALSE,
  compensated_ms BIGINT,
  completed_ms BIGINT NOT NULL,
  PRIMARY KEY (execution_id, run, step)
);
