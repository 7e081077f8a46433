/** The narrow interface the shared SQL operations run statements through. */

/** Booleans are bound as 1/0: SQLite has no boolean type and PostgreSQL reads '1'/'0' as booleans. */
export type SqlParam = string | number | null;

export type SqlRow = Record<string, unknown>;

export interface SqlExecutor {
  /** Runs a statement that returns rows (SELECT, or anything with RETURNING). */
  all(sql: string, params: readonly SqlParam[]): Promise<SqlRow[]>;
  /** Runs a statement for its effect; resolves to the number of rows changed. */
  run(sql: string, params: readonly SqlParam[]): Promise<number>;
  /**
   * Runs one statement once per parameter row, in order, for its effect; resolves to the number of
   * rows each run changed. SQLite runs them all in one synchronous call (batched writes).
   */
  runMany(sql: string, rows: readonly (readonly SqlParam[])[]): Promise<number[]>;
}
