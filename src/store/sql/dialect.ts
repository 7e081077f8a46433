/**
 * What differs between the two SQL dialects, in one interface. Each dialect implements it once
 * (src/store/sqlite/dialect.ts, src/store/postgres/dialect.ts); the shared operations in this
 * folder write portable SQL with `?` placeholders and ask the dialect for the rest.
 * Upserts need nothing here: SQLite and PostgreSQL both accept `ON CONFLICT … DO NOTHING/UPDATE`
 * and `RETURNING`.
 */
import type { DialectName } from "../store.js";
import type { SqlParam } from "./executor.js";

export interface SqlDialect {
  readonly name: DialectName;
  /** Suffix for a row-locking read (`FOR UPDATE`), empty where the dialect has no row locks. */
  readonly forUpdate: string;
  /** Suffix for claiming rows other transactions do not hold (`FOR UPDATE SKIP LOCKED`). */
  readonly forUpdateSkipLocked: string;
  /** {@link forUpdateSkipLocked} for the rows of several tables of a join (`t, e`): each must be free. */
  forUpdateOfSkipLocked(tables: string): string;
  /** An expression for the database clock in epoch milliseconds. */
  readonly nowMs: string;
  /**
   * A statement taking a transaction-scoped lock that serialises execution admission,
   * or null where the dialect's write lock already does.
   */
  readonly admissionLock: string | null;
  /**
   * A statement telling every server, at commit, that a cancel was requested for a run some worker
   * holds (their parked polls answer `heartbeat: true`), or null where there is one server.
   */
  readonly cancelNotify: string | null;
  /**
   * A statement taking a transaction-scoped lock on one concurrency key (its one `?`), or null
   * where the dialect's write lock already serialises the transactions that check a key.
   */
  readonly concurrencyKeyLock: string | null;
  /** Takes the transaction-scoped lock of an apply's scope (one parameter: the scope), or null (SQLite: one writer). */
  readonly applyScopeLock: string | null;
  /** Decodes a JSON column as the driver returns it (text on SQLite, parsed on PostgreSQL). */
  readJson(value: unknown): unknown;
  /**
   * How a batch is written: `unnest`, one statement per batch with one array parameter per column
   * (a round trip saved per row); `rows`, the single-row statement once per row (SQLite, where a
   * statement is a function call). See columns.ts `batchInsertSql`.
   */
  readonly batch: "unnest" | "rows";
  /**
   * `expr` in lower case, as an SQL expression, for every script: SQLite's own LOWER folds only
   * ASCII, so a search for `Über` never found it (a tester); SQLite calls orbit_lower, the
   * JavaScript toLowerCase the search's text is folded with (sqlite-store.ts).
   */
  lower(expr: string): string;
  /** The text of a JSON object column's top-level key, as an SQL expression. */
  jsonText(column: string, key: string): string;
  /** The size in bytes of a text or JSON column's text, as an SQL expression. */
  textBytes(column: string): string;
  /** The first element of a JSON array column as an integer, as an SQL expression. */
  jsonFirstInteger(column: string): string;
  /**
   * `column` is one of a list bound as one parameter: `{ sql, param }` where `sql` holds one `?`
   * (PostgreSQL `= ANY(?::text[])`, SQLite `IN (SELECT value FROM json_each(?))`).
   */
  inList(column: string, values: readonly string[]): { sql: string; param: SqlParam };
}
