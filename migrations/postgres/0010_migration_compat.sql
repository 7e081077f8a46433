-- orbit: additive
-- Rolling upgrades (docs/operations.md § Upgrade): whether each migration is additive, that is,
-- whether a server of an older release may keep running on the schema after it. Recorded by the
-- migrator from the file's "-- orbit: additive | breaking" line; NULL for migrations applied before
-- this one. A server that meets applied migrations it does not know starts only if all are additive.
ALTER TABLE orbit_migrations ADD COLUMN additive INTEGER;
