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
  return (
    code.startsWith("08") || /^57P0[1-5]$/.test(code) || code === "53300" || code === "25P03" || isRefusedSqlState(code)
  );
}

/**
 * SQLSTATEs of a database that refuses new connections until someone acts: 3D000 (it does not
 * exist: dropped, renamed) and class 28 (the role or its password refused, as after a rotation).
 * A running server answers 503 meanwhile, as in an outage, and its workers resend their reports
 * (they were 500 INTERNAL, and a worker gave a finished run's report up: the run ran again; a
 * tester); a start fails at once (`refused` in the details: waiting would not help).
 */
function isRefusedSqlState(code: string): boolean {
  return code === "3D000" || code.startsWith("28");
}

/**
 * pg's own messages for a client whose socket has gone (they carry no code), and PostgreSQL's for a
 * database closed to connections (`ALTER DATABASE … ALLOW_CONNECTIONS false`: 55000, a SQLSTATE
 * other statements share, so matched by its message).
 */
const MESSAGES = [
  "is not currently accepting connections",
  "Connection terminated",
  "connection terminated",
  "Client has encountered a connection error and is not queryable",
  "Client was closed and is not queryable",
  "timeout exceeded when trying to connect",
  "timeout expired", // the client's own connect timeout
  "Connection timeout",
  "Query read timeout",
];

/**
 * A statement that got no answer within its bound (pg's `query_timeout`, "Query read timeout"): a
 * network stall, a frozen database host. pg leaves it in flight, so its connection is unusable.
 */
export function isNoAnswer(err: unknown): boolean {
  if (err instanceof OrbitError) return err.details?.noAnswer === true;
  return err instanceof Error && err.message.includes("Query read timeout");
}

/**
 * A new connection that was not made within its bound: pg's client's own connect timeout
 * ("timeout expired") or pg-pool's ("Connection terminated due to connection timeout").
 */
export function isConnectTimeout(err: unknown): boolean {
  if (!(err instanceof Error) || err instanceof OrbitError) return false;
  return err.message === "timeout expired" || err.message.startsWith("Connection terminated due to connection timeout");
}

/**
 * pg-pool's error when no pooled connection came free in time (every one busy, or stuck on a
 * statement the database does not answer): it reached the client as "the database is unavailable
 * (timeout exceeded when trying to connect)", though nothing had failed to connect (a tester).
 */
function isPoolWaitTimeout(err: unknown): boolean {
  return (
    err instanceof Error && !(err instanceof OrbitError) && err.message === "timeout exceeded when trying to connect"
  );
}

function noConnectionFree(ms: number): OrbitError {
  return new OrbitError(
    "UNAVAILABLE",
    `no database connection came free within ${ms} ms (each is busy or waits for an answer: a network stall, a frozen or overloaded database host, or long writes); retry shortly`,
  );
}

/**
 * The UNAVAILABLE of a connection attempt that timed out, saying why: pg's bare "timeout expired"
 * reached the CLI, 503 bodies and the log as all there was to say (docs/operations.md § When
 * PostgreSQL restarts). A database at max_connections refuses at once (53300), so not this.
 */
export function connectTimedOut(ms: number): OrbitError {
  return new OrbitError(
    "UNAVAILABLE",
    `could not connect to the database within ${ms} ms (a network stall, a firewall dropping packets, or a frozen or overloaded database host); retry shortly`,
  );
}

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
  const code = sqlStateOf(err);
  const refused = code !== undefined && isRefusedSqlState(code) ? { refused: true } : undefined;
  return new OrbitError("UNAVAILABLE", `the database is unavailable (${reason}); retry shortly`, refused);
}

/**
 * SQLSTATEs of a transaction PostgreSQL aborted to let others go on: 40P01 (deadlock detected) and
 * 40001 (serialization failure). Nothing of it was kept and the same request may simply be made
 * again, so it is answered 503 like a dropped connection (a worker's report is retried), not 500.
 */
const TRANSIENT_SQL_STATES = new Set(["40P01", "40001"]);

/**
 * SQLSTATEs of a statement PostgreSQL stopped: 57014 (canceled: `statement_timeout`, or
 * `pg_cancel_backend`) and 55P03 (`lock_timeout`). Like an aborted transaction: nothing was kept, retry.
 */
const LOCK_TIMEOUT = "55P03";
const STOPPED_SQL_STATES = new Set(["57014", LOCK_TIMEOUT]);

/**
 * 25006: the session refuses writes (`default_transaction_read_only` set on the database, a
 * failover to a standby). The session keeps refusing them after the database is writable again
 * (the default is read when a session starts), so the transaction that met it drops its
 * connection (postgres-store.ts) and the request is answered 503.
 */
export const READ_ONLY_SQL_STATE = "25006";

/** The SQLSTATE of a PostgreSQL error, or undefined. */
/**
 * A read-only session's refusal (25006), as pg threw it or as asUnavailable converted it: such a
 * session stays read-only, so it is dropped, never given back to the pool. Checked by its code
 * only, a refusal a statement had already converted went unseen and the session went back: writes
 * stayed refused while the pool's read-only sessions kept being reused (a CI run timed out waiting
 * for writes to be taken again after the database was writable).
 */
export function isReadOnly(err: unknown): boolean {
  if (err instanceof OrbitError) return err.details?.readOnly === true;
  return sqlStateOf(err) === READ_ONLY_SQL_STATE;
}

export function sqlStateOf(err: unknown): string | undefined {
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return typeof code === "string" ? code : undefined;
}

/**
 * How late the answer timer of an unanswered statement may fire before the silence is put down to
 * this process rather than the database: a timer a second or more late means the process itself
 * was not running (a suspended machine or VM, SIGSTOP) or its event loop was blocked, and the
 * database's answer may be waiting unread on the socket.
 */
export const LATE_TIMER_MS = 1_000;

/**
 * Rethrows a connection failure or an aborted transaction as UNAVAILABLE and anything else as it
 * is; a statement unanswered within `answerMs`, and a connection not made within `connectMs`, say so.
 * `lateMs`: how long after its bound the answer timer fired. A server frozen for three minutes and
 * woken logged "the database did not answer within 30000 ms (a network stall, a frozen or
 * overloaded database host …)" at error level, sending its operator to a database that had answered
 * at once (a tester's SIGSTOP); a timer that late says it was this process.
 */
export function asUnavailable(err: unknown, answerMs?: number, connectMs?: number, lateMs?: number): unknown {
  if (connectMs !== undefined && isConnectTimeout(err)) return connectTimedOut(connectMs);
  if (connectMs !== undefined && isPoolWaitTimeout(err)) return noConnectionFree(connectMs);
  if (isNoAnswer(err) && !(err instanceof OrbitError)) {
    const within = answerMs === undefined ? "in time" : `within ${answerMs} ms`;
    if (lateMs !== undefined && lateMs >= LATE_TIMER_MS) {
      return new OrbitError(
        "UNAVAILABLE",
        `this Orbit process was not running for about ${Math.round(lateMs / 1000)} s (a suspended machine or VM, SIGSTOP, or a blocked event loop), so the database's answer was not read ${within}; retry shortly`,
        { noAnswer: true, stalledMs: Math.round(lateMs) },
      );
    }
    return new OrbitError(
      "UNAVAILABLE",
      `the database did not answer ${within} (a network stall, a frozen or overloaded database host, or a lock held by a long write such as a large backfill); retry shortly`,
      { noAnswer: true },
    );
  }
  if (isConnectionError(err)) return unavailable(err);
  const code = sqlStateOf(err);
  if (code === undefined) return err;
  const reason = (err as Error).message.split("\n")[0];
  if (TRANSIENT_SQL_STATES.has(code) || STOPPED_SQL_STATES.has(code)) {
    return new OrbitError(
      "UNAVAILABLE",
      `the database aborted the transaction (${reason}); nothing of it was kept, retry`,
      // A deadlock or serialization failure: the same transaction, run again, usually goes through.
      TRANSIENT_SQL_STATES.has(code) ? { aborted: true } : code === LOCK_TIMEOUT ? { lockTimeout: true } : undefined,
    );
  }
  if (code === READ_ONLY_SQL_STATE) {
    // Marked: the statement's error reaches its transaction's end already converted, and there a
    // code-only check missed it, so the read-only session went back to the pool (isReadOnly).
    return new OrbitError("UNAVAILABLE", `the database refuses writes (${reason}); retry once it is writable`, {
      readOnly: true,
    });
  }
  return err;
}
