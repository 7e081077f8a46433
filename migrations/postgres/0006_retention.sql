-- Retention (docs/operations.md § Retention): the pruner takes the oldest ended executions first,
-- and never one that is still a schedule's last execution (its overlap and outcome read it).
CREATE INDEX orbit_executions_ended ON orbit_executions (ended_ms) WHERE ended_ms IS NOT NULL;
CREATE INDEX orbit_schedules_last_execution ON orbit_schedules (last_execution_id) WHERE last_execution_id IS NOT NULL;
