/**
 * The words Orbit's code uses, in one place.
 *
 * - **schedule**: a stored rule (cron or interval, plus policies) that starts executions of a workflow.
 * - **occurrence**: one nominal instant a schedule's timing produces (`next_fire_times` lists them).
 *   `(schedule_id, occurrence)` is the identity of a fire: the execution id is
 *   `<schedule_id>:<occurrence in RFC 3339 UTC>`.
 * - **due time**: the occurrence plus its deterministic jitter; when the loop fires it.
 * - **fire**: the one database transaction that decides an occurrence (catch-up, overlap), starts,
 *   buffers or skips it, writes the ledger and advances the schedule.
 * - **tick**: the ledger row a fire (or a skipped range) leaves; the latest is `last_tick`.
 * - **claim**: the compare-and-set on the schedule row (`next_fire_ms`, `revision`) that lets only one
 *   server fire an occurrence.
 * - **ledger**: the per-schedule table of ticks: started, skipped (with a reason and a count for a
 *   missed range), buffered, dead_letter.
 * - **overlap**: what a due occurrence does while the schedule's previous execution still runs.
 * - **catch-up**: what happens to occurrences that came due while no server could fire them.
 * - **misfire grace**: how late an occurrence may be and still count as late rather than missed.
 * - **instant**: integer milliseconds since the Unix epoch (UTC). **wall time**: the same number for
 *   a zone's local calendar reading, as if that reading were UTC.
 */
export type Glossary = never;
