-- PostgreSQL's 0004 adds a NOTIFY trigger that wakes the firing loops of other servers when a
-- schedule becomes due earlier. SQLite serves one server (no cluster modes): nothing to do here.
-- The file keeps both dialects on the same migration numbers.
SELECT 1;
