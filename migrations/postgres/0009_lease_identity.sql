-- The identity (docs/security.md § Identities) a worker authenticated as when it leased the task,
-- null on a server without identities. A report on a lease is refused to any other identity: a
-- worker_id is chosen by the worker, so it cannot tell two identities apart. Existing leases have
-- none and are checked by worker_id alone, as before.
ALTER TABLE orbit_worker_tasks ADD COLUMN lease_identity TEXT;
