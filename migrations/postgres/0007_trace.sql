-- The W3C traceparent of an execution's creation span (docs/operations.md § Tracing): every later span of
-- the execution, on any server or worker, is its child. NULL when no OpenTelemetry SDK recorded it.
ALTER TABLE orbit_executions ADD COLUMN trace_parent TEXT;
