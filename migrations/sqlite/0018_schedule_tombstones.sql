-- orbit: additive
-- The last revision of each deleted schedule id: a schedule created again under the id continues
-- from it, so an If-Match or expected_revision read from the deleted one cannot pass for the new
-- one (docs/design.md § Changes).
CREATE TABLE orbit_schedule_tombstones (
  schedule_id TEXT PRIMARY KEY,
  revision INTEGER NOT NULL
);
