/** Everything PostgreSQL-specific the shared SQL needs (see ../sql/dialect.ts). */
import { arrayParam } from "../sql/columns.js";
import type { SqlDialect } from "../sql/dialect.js";

/** Advisory lock keys Orbit uses, fixed so that every server of a cluster agrees on them. */
export const ADVISORY_LOCK_KEYS = {
  /** Held while migrating, so servers starting together do not race. ("orbit" in ASCII, then 1.) */
  migrations: "4785604130441",
  /** Held (per transaction) while checking and admitting against --max-active-executions. */
  admission: "4785604130442",
} as const;

export const postgresDialect: SqlDialect = {
  name: "postgres",
  forUpdate: " FOR UPDATE",
  forUpdateSkipLocked: " FOR UPDATE SKIP LOCKED",
  forUpdateOfSkipLocked: (tables) => ` FOR UPDATE OF ${tables} SKIP LOCKED`,
  nowMs: "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint",
  admissionLock: `SELECT pg_advisory_xact_lock(${ADVISORY_LOCK_KEYS.admission})`,
  // node-postgres already parses json/jsonb columns.
  readJson: (value) => value,
  batch: "unnest",
  jsonText: (column, key) => `${column}->>'${key}'`,
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
