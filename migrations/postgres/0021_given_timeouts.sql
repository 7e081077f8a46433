-- orbit: additive
-- The timeouts a start request gave an execution of no schedule (ms; NULL: it gave none), so that a
-- retry runs with them as its first run did (docs/outcomes.md § Retry): a retry took the workflow's
-- defaults instead, and a tester's start with "run_timeout": "3s" timed out while its retry ran an
-- 8 s step to COMPLETED. Additive: an older server leaves them NULL, and its retries do as before.
ALTER TABLE orbit_executions ADD COLUMN start_timeout_ms BIGINT;
ALTER TABLE orbit_executions ADD COLUMN run_timeout_ms BIGINT;
