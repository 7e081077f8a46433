-- orbit: breaking
-- orbit_schedules becomes a WITHOUT ROWID table: its rows are kept in schedule id order instead of
-- the order they were created in. The firing loop reads the schedules due at one instant by id, and
-- every index of another table that starts with the schedule id (executions by schedule, the
-- ledger) is written in that order; with rows in creation order, a batch of 200 of a herd lay on
-- about 180 pages of the table, each written to the WAL again at the batch's commit, and the
-- outcomes of the batch's completions the same (docs/storage.md § Schedules in id order). The
-- columns are the table's as migrations 0001–0012 left it, in the same order. Breaking: the table
-- is rebuilt, which an older Orbit's statements would not notice, but the rebuild is not
-- additive in the sense of docs/operations.md § Upgrade (SQLite runs one server: a downgrade
-- after this migration needs a restore from a backup).
CREATE TABLE orbit_schedules_new (
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
  updated_ms INTEGER NOT NULL,
  last_outcome TEXT,
  last_success_ms INTEGER,
  last_failure_ms INTEGER,
  consecutive_failures INTEGER NOT NULL DEFAULT 0,
  failures INTEGER NOT NULL DEFAULT 0,
  runs INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
INSERT INTO orbit_schedules_new (schedule_id, workflow, version, input, spec, paused, pause_note, state, next_fire_ms, due_ms, retry_ms, revision, fired, skipped, last_fire_ms, last_execution_id, last_error, buffered, concurrency_key, created_ms, updated_ms, last_outcome, last_success_ms, last_failure_ms, consecutive_failures, failures, runs)
  SELECT schedule_id, workflow, version, input, spec, paused, pause_note, state, next_fire_ms, due_ms, retry_ms, revision, fired, skipped, last_fire_ms, last_execution_id, last_error, buffered, concurrency_key, created_ms, updated_ms, last_outcome, last_success_ms, last_failure_ms, consecutive_failures, failures, runs FROM orbit_schedules;
DROP TABLE orbit_schedules;
ALTER TABLE orbit_schedules_new RENAME TO orbit_schedules;
CREATE INDEX orbit_schedules_key ON orbit_schedules (concurrency_key) WHERE concurrency_key IS NOT NULL;
CREATE INDEX orbit_schedules_due ON orbit_schedules (due_ms, schedule_id) WHERE state = 'active' AND due_ms IS NOT NULL;
CREATE INDEX orbit_schedules_last_execution ON orbit_schedules (last_execution_id) WHERE last_execution_id IS NOT NULL;
