-- Orbit schema, SQLite dialect. Append-only: never edit a shipped migration, add the next number.
-- Instants are INTEGER epoch milliseconds; JSON is TEXT; booleans are INTEGER 0/1.
-- migrations/postgres/0001_init.sql must end with the same tables and columns (a test checks).

CREATE TABLE orbit_workflows (
  name TEXT NOT NULL,
  version TEXT NOT NULL,
  version_major INTEGER NOT NULL,
  version_minor INTEGER NOT NULL,
  version_patch INTEGER NOT NULL,
  version_prerelease TEXT,
  input_schema TEXT,
  description TEXT,
  created_ms INTEGER NOT NULL,
  PRIMARY KEY (name, version)
);

CREATE TABLE orbit_executions (
  execution_id TEXT PRIMARY KEY,
  workflow TEXT NOT NULL,
  version TEXT NOT NULL,
  input TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('RUNNING', 'COMPENSATING', 'COMPLETED', 'FAILED', 'CANCELLED')),
  schedule_id TEXT,
  "trigger" TEXT,
  result TEXT,
  error TEXT,
  cancel_reason TEXT,
  concurrency_key TEXT,
  run INTEGER NOT NULL DEFAULT 1,
  attempt INTEGER NOT NULL DEFAULT 1,
  created_ms INTEGER NOT NULL,
  started_ms INTEGER,
  ended_ms INTEGER
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
  data TEXT NOT NULL,
  at_ms INTEGER NOT NULL,
  PRIMARY KEY (execution_id, seq)
);

CREATE TABLE orbit_schedules (
  schedule_id TEXT PRIMARY KEY,
  workflow TEXT NOT NULL,
  version TEXT,
  input TEXT NOT NULL,
  spec TEXT NOT NULL,
  paused INTEGER NOT NULL DEFAULT 0,
  pause_note TEXT,
  state TEXT NOT NULL CHECK (state IN ('active', 'paused', 'ended')),
  next_fire_ms INTEGER,
  due_ms INTEGER,
  retry_ms INTEGER,
  revision INTEGER NOT NULL,
  fired INTEGER NOT NULL DEFAULT 0,
  skipped INTEGER NOT NULL DEFAULT 0,
  last_fire_ms INTEGER,
  last_execution_id TEXT,
  last_error TEXT,
  buffered TEXT NOT NULL DEFAULT '[]',
  concurrency_key TEXT,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL
);
-- The firing loop's index: only active schedules with a due occurrence, by due time.
CREATE INDEX orbit_schedules_key ON orbit_schedules (concurrency_key) WHERE concurrency_key IS NOT NULL;
CREATE INDEX orbit_schedules_due ON orbit_schedules (due_ms) WHERE state = 'active' AND due_ms IS NOT NULL;

CREATE TABLE orbit_occurrences (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  schedule_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('started', 'skipped', 'buffered', 'dead_letter')),
  occurrence_ms INTEGER,
  range_from_ms INTEGER,
  range_to_ms INTEGER,
  count INTEGER NOT NULL DEFAULT 1,
  reason TEXT,
  execution_id TEXT,
  error TEXT,
  recorded_ms INTEGER NOT NULL
);
CREATE INDEX orbit_occurrences_schedule ON orbit_occurrences (schedule_id, id DESC);

CREATE TABLE orbit_idempotency_keys (
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  response TEXT,
  status INTEGER NOT NULL,
  created_ms INTEGER NOT NULL,
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
  lease_until_ms INTEGER,
  available_ms INTEGER NOT NULL,
  created_ms INTEGER NOT NULL
);
CREATE INDEX orbit_worker_tasks_state_available ON orbit_worker_tasks (state, available_ms);
CREATE INDEX orbit_worker_tasks_execution ON orbit_worker_tasks (execution_id);

CREATE TABLE orbit_step_results (
  execution_id TEXT NOT NULL,
  run INTEGER NOT NULL,
  step TEXT NOT NULL,
  result TEXT,
  error TEXT,
  has_compensation INTEGER NOT NULL DEFAULT 0,
  compensated_ms INTEGER,
  completed_ms INTEGER NOT NULL,
  PRIMARY KEY (execution_id, run, step)
);
