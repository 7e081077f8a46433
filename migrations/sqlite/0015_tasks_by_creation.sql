-- orbit: breaking
-- Worker tasks are found by their execution through an index that starts with the execution's
-- created instant, (execution_created_ms, execution_id), instead of (execution_id). An execution a
-- schedule starts has the id `<schedule_id>:<occurrence>`, so an index on the id alone keeps each
-- schedule's tasks together: once every schedule has a page of history there, each task of a fire
-- batch lands on its own page, which the batch's commit writes to the WAL again (6,014 of the 37,568
-- pages a herd of 10,000 wrote with an hour of history; docs/storage.md § Tasks in creation order).
-- Keyed by creation, a batch's tasks share the newest pages, as the events do since 0014.
-- (state, available_ms) goes too: (state, available_ms, created_ms) from 0012 answers every query
-- it did, and each task's three state changes wrote both.
-- Breaking: an older Orbit would insert tasks without the column, which this index cannot find.
ALTER TABLE orbit_worker_tasks ADD COLUMN execution_created_ms INTEGER;
UPDATE orbit_worker_tasks SET execution_created_ms = COALESCE(
  (SELECT x.created_ms FROM orbit_executions AS x WHERE x.execution_id = orbit_worker_tasks.execution_id),
  created_ms);
DROP INDEX orbit_worker_tasks_execution;
DROP INDEX orbit_worker_tasks_state_available;
CREATE INDEX orbit_worker_tasks_execution ON orbit_worker_tasks (execution_created_ms, execution_id);
