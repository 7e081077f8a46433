/**
 * A lingering close (nginx's `lingering_close`) for a request answered before its body was read:
 * a body larger than the limit, a caller refused before its body is parsed. Node answers, then
 * destroys the socket as soon as its answer is written; the client is still sending, the unread
 * bytes make the kernel reset the connection, and the client sees ECONNRESET or EPIPE instead of
 * the `{code, message}` answer (one 3 MB upload in five on a quiet machine). Here the answer and
 * the server's end of the stream go out, the rest of the body is read and dropped, and the
 * connection closes when the client has sent it, pauses, or takes too long (the bounds below)
 * (docs/api.md § Limits).
 */
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";

/** A refused request's unread body is read and dropped while it keeps coming: until a pause this long… */
export const LINGER_IDLE_MS = 1000;
/** …or this long in all, whichever comes first. */
export const LINGER_MAX_MS = 10_000;

const lingering = new WeakSet<Socket>();

/**
 * Makes this socket's close linger. Node's HTTP server closes a `connection: close` answer's
 * socket with `destroySoon()` (end, then destroy once the end is written); this socket's own
 * `destroySoon` ends it and destroys it when the client's side ends, when the client pauses for
 * LINGER_IDLE_MS, or after LINGER_MAX_MS.
 */
export function lingerOnClose(socket: Socket): void {
  if (lingering.has(socket)) return;
  lingering.add(socket);
  socket.destroySoon = function lingeringDestroySoon(this: Socket): void {
    if (this.writable) this.end();
    const stop = whileComing(this, () => this.destroy());
    this.once("close", stop);
  };
}

/**
 * Closes a connection refused before fastify saw it (a request not received in time, headers too
 * large, bytes that are not HTTP) once its answer and the server's end are out: when the client
 * ends its side, pauses for {@link LINGER_IDLE_MS}, or after {@link LINGER_MAX_MS}. Only ended, the
 * socket kept its file descriptor for as long as the client held its side open: a tester's 300
 * clients that sent one byte and never closed held 300, and 21,000 exhausted the process's open
 * files (src/api/connection-cap.ts).
 */
export function closeRefused(socket: Socket): void {
  const stop = whileComing(socket, () => socket.destroy());
  socket.once("close", stop);
  // The client is done: closed as soon as the answer is written.
  socket.once("end", () => socket.destroySoon());
  socket.resume();
}

/**
 * Reads and drops a refused request's body before the answer goes out, while it keeps coming:
 * until it ends, pauses for {@link LINGER_IDLE_MS}, or {@link LINGER_MAX_MS} in all. Answered
 * first, a client that sends its whole body before it reads (Python's http.client, many SDKs) met
 * EPIPE instead of the answer, whatever the close did after: once its answer is written the HTTP
 * server stops reading the request's body, and the client's send blocked until the socket closed.
 * A client that reads as it sends (curl, fetch) gets the answer as soon as its body is in.
 */
export function drainRefused(request: IncomingMessage): Promise<void> {
  if (request.complete || request.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      stop();
      for (const event of ["end", "close", "error"]) request.off(event, done);
      resolve();
    };
    const stop = whileComing(request, done);
    for (const event of ["end", "close", "error"]) request.once(event, done);
    request.resume();
  });
}

/**
 * Calls `quiet` once `source` has sent no `data` for {@link LINGER_IDLE_MS}, or after
 * {@link LINGER_MAX_MS} in all; the function returned stops the watch.
 */
function whileComing(source: Socket | IncomingMessage, quiet: () => void): () => void {
  const total = setTimeout(quiet, LINGER_MAX_MS);
  let idle = setTimeout(quiet, LINGER_IDLE_MS);
  const onData = () => {
    clearTimeout(idle);
    idle = setTimeout(quiet, LINGER_IDLE_MS);
  };
  source.on("data", onData);
  return () => {
    clearTimeout(total);
    clearTimeout(idle);
    source.off("data", onData);
  };
}
