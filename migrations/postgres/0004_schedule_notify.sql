-- Several servers (docs/cluster.md): a schedule that becomes due earlier than a firing loop may be sleeping
-- for (created, resumed, updated to an earlier time, a buffer released by an ended execution) wakes
-- the firing loops of every server through NOTIFY orbit_schedules. Fires only move due_ms later and
-- notify nothing, so the commit-time NOTIFY lock stays off the hot path. The payload is the schema,
-- so deployments in other schemas of one database ignore each other's notifications.
CREATE FUNCTION orbit_schedules_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('orbit_schedules', current_schema());
  RETURN NULL;
END
$$;
CREATE TRIGGER orbit_schedules_notify_insert AFTER INSERT ON orbit_schedules
  FOR EACH ROW WHEN (NEW.state = 'active' AND NEW.due_ms IS NOT NULL)
  EXECUTE FUNCTION orbit_schedules_notify();
CREATE TRIGGER orbit_schedules_notify_update AFTER UPDATE OF due_ms, state ON orbit_schedules
  FOR EACH ROW WHEN (NEW.state = 'active' AND NEW.due_ms IS NOT NULL
    AND (OLD.state <> 'active' OR OLD.due_ms IS NULL OR NEW.due_ms < OLD.due_ms))
  EXECUTE FUNCTION orbit_schedules_notify();
