-- orbit: additive
-- Retention (docs/operations.md § Retention): a workflow's own retention walks that workflow's
-- ended executions oldest first, from its keyset cursor, instead of sorting all of them for each
-- batch. (The default pass walks 0006's orbit_executions_ended, starting at the cursor's ended_ms.)
CREATE INDEX orbit_executions_workflow_ended ON orbit_executions (workflow, ended_ms, execution_id) WHERE ended_ms IS NOT NULL;
