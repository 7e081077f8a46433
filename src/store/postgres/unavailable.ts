/**
 * Connection failures of PostgreSQL as Orbit sees them: a dropped, refused or timed-out connection,
 * or a database that is shutting down or starting up, is `UNAVAILABLE` (503), never a crash or a
 * 500. The request that met it is answered 503 and may be retried; nothing it did was committed
 * unless the failure hit the COMMIT itself, which is why writes should carry an Idempotency-Key.
 */
import { OrbitError } from "../../domain/errors.js";

/** Node socket errors that mean "the database is not reachable". */
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * SQLSTATEs of a connection that is gone or not usable yet: class 08 (connection exception),
 * 57P01-57P05 (admin/crash shutdown, cannot connect now, idle session timeout), 53300 (too many
 * connections), 25P03 (idle-in-transaction timeout).
 */
function isUnavailableSqlState(code: string): boolean {
  return code.startsWith("08") || /^57P0[1-5]$/.test(code) || code === "53300" || code === "25P03";
}

/** pg's own messages for a client whose socket has gone (they carry no code). */
const MESSAGES = [
  "Connection terminated",
  "connection terminated",
  "Client has encountered a connection error and is not queryable",
  "Client was closed and is not queryable",
  "timeout exceeded when trying to connect",
  "timeout expired", // the client's own connect timeout
  "Connection timeout",
  "Query read timeout",
];

export function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err instanceof OrbitError) return err.code === "UNAVAILABLE";
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string" && (SOCKET_CODES.has(code) || isUnavailableSqlState(code))) return true;
  return MESSAGES.some((m) => err.message.includes(m));
}

export function unavailable(err: unknown): OrbitError {
  if (err instanceof OrbitError && err.code === "UNAVAILABLE") return err;
  const reason = err instanceof Error ? err.message.split("\n")[0] : String(err);
  return new OrbitError("UNAVAILABLE", `the database is unavailable (${reason}); retry shortly`);
}

/** Rethrows a connection failure as UNAVAILABLE and anything else as it is. */
export function asUnavailable(err: unknown): unknown {
  return isConnectionError(err) ? unavailable(err) : err;
}
