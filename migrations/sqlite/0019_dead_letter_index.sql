-- orbit: additive
-- A schedule's dead letters by schedule, newest first: a schedule's view shows its latest few, and a
-- page of the schedule list reads them for every schedule on the page in one statement
-- (docs/api.md § Schedules). Dead letters are rare, so the index is small and seldom written.
CREATE INDEX orbit_occurrences_dead_letters ON orbit_occurrences (schedule_id, id DESC) WHERE kind = 'dead_letter';
