-- orbit: additive
-- A worker that says it is leaving (Worker.close()) is gone at once, not a minute after its last
-- poll (docs/outcomes.md § Workers and stalls).
ALTER TABLE orbit_workers ADD COLUMN left_ms INTEGER;
