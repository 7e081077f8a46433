/** Everything SQLite-specific the shared SQL needs (see ../sql/dialect.ts). */
import type { SqlDialect } from "../sql/dialect.js";

export const sqliteDialect: SqlDialect = {
  name: "sqlite",
  // SQLite has no row locks: BEGIN IMMEDIATE takes the database write lock, which serialises
  // every writing transaction, so a locking read needs no suffix.
  forUpdate: "",
  forUpdateSkipLocked: "",
  forUpdateOfSkipLocked: () => "",
  nowMs: "CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER)",
  admissionLock: null,
  cancelNotify: null,
  concurrencyKeyLock: null,
  applyScopeLock: null,
  readJson: (value) => (typeof value === "string" ? JSON.parse(value) : value),
  batch: "rows",
  lower: (expr) => `orbit_lower(${expr})`,
  jsonText: (column, key) => `json_extract(${column}, '$.${key}')`,
  textBytes: (column) => `length(CAST(${column} AS BLOB))`,
  jsonFirstInteger: (column) => `CAST(json_extract(${column}, '$[0]') AS INTEGER)`,
  inList: (column, values) => ({ sql: `${column} IN (SELECT value FROM json_each(?))`, param: JSON.stringify(values) }),
};
