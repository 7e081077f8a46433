-- orbit: breaking
-- An execution's events are keyed by when the execution was made, then by its id and seq:
-- PRIMARY KEY (execution_created_ms, execution_id, seq) instead of (execution_id, seq). The id of an
-- execution a schedule starts begins with the schedule id (the exactly-once key), so the old key kept
-- each schedule's events together: once a schedule had a page of history, each execution of a fire
-- batch wrote its own page of that key at each of its three events (created, leased, completed), and
-- that key became most of what a herd wrote to the WAL (25,000 of 50,500 pages a round after 24
-- herds). Keyed by creation, a batch's events share the newest pages (docs/storage.md § Events in
-- creation order). Reads find the created instant from the execution's row. The table is rebuilt:
-- breaking on SQLite (docs/operations.md § Upgrade).
CREATE TABLE orbit_execution_events_new (
  execution_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  type TEXT NOT NULL,
  data TEXT NOT NULL,
  at_ms INTEGER NOT NULL,
  execution_created_ms INTEGER NOT NULL,
  PRIMARY KEY (execution_created_ms, execution_id, seq)
);
INSERT INTO orbit_execution_events_new (execution_id, seq, type, data, at_ms, execution_created_ms)
  SELECT v.execution_id, v.seq, v.type, v.data, v.at_ms, COALESCE(x.created_ms, v.at_ms)
  FROM orbit_execution_events AS v LEFT JOIN orbit_executions AS x ON x.execution_id = v.execution_id
  ORDER BY COALESCE(x.created_ms, v.at_ms), v.execution_id, v.seq;
DROP TABLE orbit_execution_events;
ALTER TABLE orbit_execution_events_new RENAME TO orbit_execution_events;
