/**
 * What a request that got no answer says: {@link ServerUnreachableError}, with the message that
 * says what to do, and of a write whether it may have been carried out (split from http.ts); and
 * of a write answered 503, which may have been carried out too ({@link withUnansweredWrite}).
 */
import { OrbitError } from "../domain/errors.js";

/** The reason of a request that got no answer before its timeout. */
export const NO_ANSWER = "no answer in time";
/** The reason of a 2xx answer from something that is not an Orbit server. */
export const NOT_ORBIT = "not an Orbit server";
/** The start of the reason of a redirect, which is not followed. */
export const REDIRECTED = "redirected ";

/**
 * The reasons that say the request never reached an Orbit server: no connection was made (refused,
 * no such host, no route), or something else answered it. Any other failure (no answer in time, a
 * connection that broke) may have come after the server took the request, and carried it out.
 */
const NEVER_ARRIVED = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
  NOT_ORBIT,
]);

/** A write whose answer never came: what was sent, and the Idempotency-Key it carried, if any. */
export interface UnansweredWrite {
  method: string;
  /** The path, without the query. */
  path: string;
  idempotencyKey: string | undefined;
}

/**
 * The server could not be reached at all (connection refused, DNS failure) or did not answer in
 * time: no answer, so not an {@link OrbitError}. `baseUrl` is the server asked, `reason` the cause,
 * `write` the write sent when the server may have taken it: then the message says the change may
 * or may not have been made, and how to repeat it safely.
 */
export class ServerUnreachableError extends Error {
  override readonly name = "ServerUnreachableError";
  /** The message without what it adds of a write that may have been carried out. */
  readonly summary: string;
  /** A write (not GET) the server may have carried out without its answer coming; else null. */
  readonly write: UnansweredWrite | null;
  /** It answered with a redirect, which is not followed: the address is wrong, not the server away. */
  get redirected(): boolean {
    return this.reason.startsWith(REDIRECTED);
  }
  /** It took the request (or may have) and sent no whole answer in time. */
  get unanswered(): boolean {
    return this.reason === NO_ANSWER;
  }
  constructor(
    readonly baseUrl: string,
    readonly reason: string,
    write?: UnansweredWrite,
  ) {
    // A refused connection is the common case (no server started): the plain message says it all.
    // One that took the request and did not answer in time is up, most likely busy or waiting on
    // its database: asking whether it runs misled (a server held up by a table lock).
    const detail = reason === "ECONNREFUSED" ? "" : `: ${reason}`;
    const summary =
      reason === NO_ANSWER
        ? `the Orbit server at ${baseUrl} did not answer in time (busy, or waiting for its database: its log and /readyz say which)`
        : reason === NOT_ORBIT
          ? `${baseUrl} answered, but not as an Orbit server (no Orbit-Version header): is it the address of \`orbit server\`?`
          : reason.startsWith(REDIRECTED)
            ? `${baseUrl} answered with a redirect (${reason.slice(REDIRECTED.length)}), which is not followed: give the Orbit server's own address`
            : `cannot reach the Orbit server at ${baseUrl} (is \`orbit server\` running?)${detail}`;
    // A write the server took may have been carried out though its answer never came: said as
    // failed, it was retried and done twice (a second manual execution of a trigger; a tester).
    const maybeDone =
      write !== undefined && !NEVER_ARRIVED.has(reason) && !reason.startsWith(REDIRECTED) ? write : null;
    super(maybeDone === null ? summary : `${summary}; ${maybeDoneText(maybeDone)}`);
    this.summary = summary;
    this.write = maybeDone;
  }
}

/** What a client is told of a write whose answer did not come. */
function maybeDoneText(write: UnansweredWrite): string {
  const what = `${write.method} ${write.path} may or may not have been carried out`;
  return write.idempotencyKey === undefined
    ? `${what}: read the current state before sending it again (a write sent with an Idempotency-Key can be repeated safely)`
    : `${what}: send it again with the same Idempotency-Key (${JSON.stringify(write.idempotencyKey)}) within 24 hours to get its answer without doing it twice`;
}

/**
 * `err` (a 503 answer to a write) holding the write in `details.write`: the database may have
 * committed it and lost only its answer (a connection that broke at COMMIT), so it may or may not
 * have been carried out. The message is the server's, unchanged.
 */
export function withUnansweredWrite(err: OrbitError, write: UnansweredWrite): OrbitError {
  return new OrbitError(err.code, err.message, { ...err.details, write });
}

/** The write an OrbitError says may or may not have been carried out ({@link withUnansweredWrite}), or null. */
export function unansweredWriteOf(err: unknown): UnansweredWrite | null {
  if (!(err instanceof OrbitError)) return null;
  const write = err.details?.write as UnansweredWrite | undefined;
  return typeof write === "object" && write !== null && typeof write.method === "string" ? write : null;
}
