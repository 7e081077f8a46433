-- orbit: additive
-- The worker process a lease was given to (the poll's `instance`, a random id each SDK Worker makes
-- when constructed; NULL: a poll without one, an older SDK). Two processes that share a worker_id
-- share its leases, and the redelivery after a lost poll answer (`held`) handed each the other's
-- running tasks: a tester's two workers named "billing" ran every step twice after a server restart
-- (docs/workflows.md § Protocol). The redelivery now answers a poll only the tasks leased to its own
-- instance. Additive: an older server leaves it NULL, and its redelivery does as before.
ALTER TABLE orbit_worker_tasks ADD COLUMN lease_instance TEXT;
