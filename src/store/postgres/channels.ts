/**
 * The NOTIFY channels and payloads of the worker protocol, a module of its own (no imports), since
 * the dialect and the listener both use them.
 */

/** The channel of migrations/postgres/0002_worker_protocol.sql. */
export const TASK_CHANNEL = "orbit_worker_tasks";

/**
 * The payload prefix of a committed cancel's NOTIFY on the same channel (SqlDialect.cancelNotify),
 * the schema after it: the polls parked on every server answer `heartbeat: true`. The trigger's
 * payload is a workflow name, which cannot hold ':'.
 */
export const CANCEL_NOTIFY_PREFIX = "orbit-cancel:";
