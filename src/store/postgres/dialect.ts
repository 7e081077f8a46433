/** Everything PostgreSQL-specific the shared SQL needs (see ../sql/dialect.ts). */
import { arrayParam } from "../sql/columns.js";
import type { SqlDialect } from "../sql/dialect.js";
import { CANCEL_NOTIFY_PREFIX, TASK_CHANNEL } from "./channels.js";

/**
 * Advisory locks Orbit takes, as a pair of int4 keys: a fixed class ("orb1", "orb2" in ASCII) and
 * the schema's hash, so that every server of one deployment agrees on them and deployments in other
 * schemas of the same database do not wait for each other (a fixed bigint key made every store open
 * wait for any other schema's migration, and every start under --max-active-executions for any
 * other deployment's). The pair form never meets the one-key form leadership uses.
 */
const schemaLock = (kind: number): string => `${kind}, hashtext(coalesce(current_schema(), ''))`;
export const ADVISORY_LOCKS = {
  /** Held while migrating, so servers starting together do not race. */
  migrations: schemaLock(0x6f726231),
  /** Held (per transaction) while checking and admitting against --max-active-executions. */
  admission: schemaLock(0x6f726232),
  /**
   * Held (per transaction) by a start that checks who holds a concurrency key, until it commits
   * the execution that takes it: the key's hash within the schema, and a fixed class ("orb3").
   * Without it two triggers of schedules sharing a key each saw nobody holding it and both started.
   */
  concurrencyKey: `hashtext(coalesce(current_schema(), '') || ':' || ?), ${0x6f726233}`,
  /**
   * Held (per transaction) by an apply that prunes, on its scope ("orb4"): two applies of one
   * scope then run one after the other. Row locks alone let each miss the rows the other was
   * creating, and the scope ended as the union of both files, which neither named.
   */
  applyScope: `hashtext(coalesce(current_schema(), '') || ':' || ?), ${0x6f726234}`,
} as const;

export const postgresDialect: SqlDialect = {
  name: "postgres",
  forUpdate: " FOR UPDATE",
  forUpdateSkipLocked: " FOR UPDATE SKIP LOCKED",
  forUpdateOfSkipLocked: (tables) => ` FOR UPDATE OF ${tables} SKIP LOCKED`,
  nowMs: "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint",
  admissionLock: `SELECT pg_advisory_xact_lock(${ADVISORY_LOCKS.admission})`,
  // On the worker tasks' channel (its trigger's payload is a workflow name, never this prefix).
  cancelNotify: `SELECT pg_notify('${TASK_CHANNEL}', '${CANCEL_NOTIFY_PREFIX}' || current_schema())`,
  concurrencyKeyLock: `SELECT pg_advisory_xact_lock(${ADVISORY_LOCKS.concurrencyKey})`,
  applyScopeLock: `SELECT pg_advisory_xact_lock(${ADVISORY_LOCKS.applyScope})`,
  // node-postgres already parses json/jsonb columns.
  readJson: (value) => value,
  batch: "unnest",
  lower: (expr) => `LOWER(${expr})`,
  jsonText: (column, key) => `${column}->>'${key}'`,
  textBytes: (column) => `octet_length(${column}::text)`,
  jsonFirstInteger: (column) => `(${column}->>0)::bigint`,
  inList: (column, values) => ({ sql: `${column} = ANY(?::text[])`, param: arrayParam(values) }),
};

/**
 * Rewrites the shared SQL's `?` placeholders as `$1, $2, …`. The shared SQL never contains a `?`
 * inside a string literal and uses no jsonb `?` operators, so a plain scan is exact.
 */
export function toPostgresPlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
