/**
 * The words Orbit's code uses, in one place. The domain types in this folder (`workflow.ts`,
 * `schedule.ts`, `execution.ts`, `worker-protocol.ts`) use them in these senses; the model and
 * its invariants are explained in docs/design.md.
 *
 * Things that are stored:
 * - **workflow**: a named, semver-versioned piece of user code with an optional input schema.
 *   "Latest" is the highest semver. Versions are immutable.
 * - **schedule**: a stored rule (cron or interval, plus policies) that starts executions of a workflow.
 *   Its settings are kept as the user wrote them (`spec`); its firing state is in columns.
 * - **execution**: one run of a workflow with an input, a status and an event history. RUNNING and
 *   COMPENSATING count as **running** (for overlap and `--max-active-executions`).
 * - **task**: the unit a worker leases to run an execution's current run (one per run; a lease
 *   expires without heartbeats and the task is retried with `attempt + 1`).
 * - **step**: a durable `ctx.step` whose result is journalled in the server, never run twice.
 * - **ledger**: the per-schedule table of ticks: started, skipped (with a reason and a count for a
 *   missed range), buffered, dead_letter.
 * - **tick**: the ledger row a fire (or a skipped range) leaves; the latest is `last_tick`.
 * - **dead letter**: an occurrence whose start kept failing past the misfire grace, recorded with the error.
 *
 * Time:
 * - **occurrence**: one nominal instant a schedule's timing produces (`next_fire_times` lists them).
 *   `(schedule_id, occurrence)` is the identity of a fire: the execution id is
 *   `<schedule_id>:<occurrence in RFC 3339 UTC>`.
 * - **due time**: the occurrence plus its deterministic jitter; when the loop fires it.
 * - **timing**: a schedule's cron-or-interval rule with its zone, DST mode and bounds, as a pure
 *   function from an instant to the next occurrence (`src/time/timing.ts`).
 * - **instant**: integer milliseconds since the Unix epoch (UTC). **wall time**: the same number for
 *   a zone's local calendar reading, as if that reading were UTC.
 * - **database clock**: `store.databaseNow()`; with several firing servers, due times are compared
 *   with it rather than the server's clock.
 *
 * Firing:
 * - **fire**: the one database transaction that decides an occurrence (catch-up, overlap), starts,
 *   buffers or skips it, writes the ledger and advances the schedule.
 * - **claim**: the compare-and-set on the schedule row (`next_fire_ms`, `revision`) that lets only one
 *   server fire an occurrence.
 * - **revision**: a schedule's version number; every change and every fire moves it.
 * - **overlap**: what a due occurrence does while the schedule's previous execution still runs.
 * - **concurrency key**: a name several schedules share so that their executions serialise.
 * - **blocker**: what stops a start right now: the schedule's own running execution or another
 *   running holder of its concurrency key.
 * - **buffer**: occurrences kept pending (`buffer_one`, `buffer_all`) until the blocker ends.
 * - **catch-up**: what happens to occurrences that came due while no server could fire them.
 * - **misfire grace**: how late an occurrence may be and still count as late rather than missed.
 * - **trigger**: a manual start (`<schedule_id>:manual:<now>`); also the `trigger` object an
 *   execution carries saying what started it (cron, interval, manual, backfill).
 * - **backfill**: an explicit request to start the occurrences of a past range under their ids.
 */
export type Glossary = never;
