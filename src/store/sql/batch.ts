/**
 * Helpers for the batched operations (a fire batch's writes). PostgreSQL gets one statement per
 * batch whatever its size: one array parameter per column, `unnest`ed into rows, so the statement
 * text (and its prepared plan) is the same for every batch. SQLite, where a statement is a function
 * call and not a round trip, runs one prepared single-row statement per row.
 */
import type { SqlParam } from "./executor.js";

/**
 * One column of a batch as a PostgreSQL array parameter. node-postgres serialises a JS array as an
 * array literal (quoting and escaping each element, `null` as NULL); the shared executor's
 * parameter type names scalars only, hence the cast. Never pass it to SQLite.
 */
export function pgColumn<T>(rows: readonly T[], value: (row: T) => string | number | null): SqlParam {
  return rows.map(value) as unknown as SqlParam;
}
