-- orbit: breaking
-- orbit_schedules keeps its small columns first and the ones that may be large last, `input` the
-- very last. SQLite writes a row's values in column order and moves what does not fit in the B-tree
-- page (about 1,000 bytes of a WITHOUT ROWID row) to a chain of overflow pages; a value after a
-- large one is at the end of that chain. With `input` 4th and `spec` 5th (0013's order), every read
-- of state, due_ms, paused, buffered, the counters or the outcome of a schedule with a 10 KB input
-- walked its input's overflow pages: over 50,000 such schedules a search by state held the event
-- loop 0.5 s, one by outcome 1–2 s, and the overdue count of /metrics (scanning, as it does since
-- this change) 0.2–0.7 s (docs/storage.md § Large columns last; bench/large-inputs.ts). Now a scan
-- that does not return input or spec reads only the part of each row in its B-tree page. The order:
-- the key, the fixed-size columns (instants, counters, flags), the short texts, then buffered (the
-- overdue count reads it), spec (the text search reads its description), pause_note and last_error
-- (usually NULL), last_outcome (may carry an error message of up to 32 KB), input. Types, defaults,
-- checks, WITHOUT ROWID and the three indexes (0013) are unchanged; no migration after 0013 touched
-- the table. Breaking: the table is rebuilt (not additive in the sense of docs/operations.md §
-- Upgrade; going back needs a restore from a backup).
CREATE TABLE orbit_schedules_new (
  schedule_id TEXT PRIMARY KEY,
  state TEXT NOT NULL CHECK (state IN ('active', 'paused', 'ended')),
  paused INTEGER NOT NULL DEFAULT 0,
  due_ms INTEGER,
  retry_ms INTEGER,
  next_fire_ms INTEGER,
  last_fire_ms INTEGER,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  revision INTEGER NOT NULL,
  fired INTEGER NOT NULL DEFAULT 0,
  skipped INTEGER NOT NULL DEFAULT 0,
  runs INTEGER NOT NULL DEFAULT 0,
  last_success_ms INTEGER,
  last_failure_ms INTEGER,
  consecutive_failures INTEGER NOT NULL DEFAULT 0,
  failures INTEGER NOT NULL DEFAULT 0,
  workflow TEXT NOT NULL,
  version TEXT,
  concurrency_key TEXT,
  last_execution_id TEXT,
  buffered TEXT NOT NULL DEFAULT '[]',
  spec TEXT NOT NULL,
  pause_note TEXT,
  last_error TEXT,
  last_outcome TEXT,
  input TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO orbit_schedules_new (schedule_id, state, paused, due_ms, retry_ms, next_fire_ms, last_fire_ms, created_ms, updated_ms, revision, fired, skipped, runs, last_success_ms, last_failure_ms, consecutive_failures, failures, workflow, version, concurrency_key, last_execution_id, buffered, spec, pause_note, last_error, last_outcome, input)
  SELECT schedule_id, state, paused, due_ms, retry_ms, next_fire_ms, last_fire_ms, created_ms, updated_ms, revision, fired, skipped, runs, last_success_ms, last_failure_ms, consecutive_failures, failures, workflow, version, concurrency_key, last_execution_id, buffered, spec, pause_note, last_error, last_outcome, input FROM orbit_schedules;
DROP TABLE orbit_schedules;
ALTER TABLE orbit_schedules_new RENAME TO orbit_schedules;
CREATE INDEX orbit_schedules_key ON orbit_schedules (concurrency_key) WHERE concurrency_key IS NOT NULL;
CREATE INDEX orbit_schedules_due ON orbit_schedules (due_ms, schedule_id) WHERE state = 'active' AND due_ms IS NOT NULL;
CREATE INDEX orbit_schedules_last_execution ON orbit_schedules (last_execution_id) WHERE last_execution_id IS NOT NULL;
