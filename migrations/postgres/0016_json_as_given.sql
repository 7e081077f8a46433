-- orbit: breaking
-- A schedule's input, an execution's input, trigger, result and error, its events' data, its
-- steps' results and errors, and a webhook's payload: JSON (the text as written, keys in the
-- order given) instead of JSONB, which reorders an object's keys (shorter first), so that they
-- read back on PostgreSQL as on SQLite and as the caller gave them (docs/storage.md § JSON columns).
-- A schedule's input takes back the text it was given (kept in its settings as input_text); the
-- other rows written before keep JSONB's order. Each ALTER rewrites its table: stop every server
-- first.
ALTER TABLE orbit_schedules
  ALTER COLUMN input TYPE JSON USING COALESCE((spec->>'input_text')::json, input::json);
ALTER TABLE orbit_executions
  ALTER COLUMN input TYPE JSON USING input::json,
  ALTER COLUMN "trigger" TYPE JSON USING "trigger"::json,
  ALTER COLUMN result TYPE JSON USING result::json,
  ALTER COLUMN error TYPE JSON USING error::json;
ALTER TABLE orbit_execution_events ALTER COLUMN data TYPE JSON USING data::json;
ALTER TABLE orbit_step_results
  ALTER COLUMN result TYPE JSON USING result::json,
  ALTER COLUMN error TYPE JSON USING error::json;
ALTER TABLE orbit_notifications ALTER COLUMN payload TYPE JSON USING payload::json;
