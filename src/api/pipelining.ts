/**
 * HTTP/1.1 pipelining, bounded (docs/api.md § Limits). A client may send requests on one connection
 * before reading the answers; Node parses and answers them all, and buffers the answers a client
 * that never reads leaves unread: 20 connections of 200 `GET /v1/openapi.json` each (10 KB sent)
 * held 1.1 GB of the server's memory. So a connection with more than {@link MAX_UNANSWERED}
 * requests whose answers are not yet written out is closed. And once an answer said
 * `connection: close`, the requests that came after it on that connection are not carried out
 * (RFC 9112 § 9.6): they were, and their answers never sent, so a client that sent again what was
 * not answered started an execution twice. And a request Node cannot parse (or one sent after a
 * request that said `connection: close`) is refused only once the requests before it on the
 * connection are answered ({@link afterAnswers}): its 400 was written at once and ended the
 * connection, so a write before it was carried out but answered "not valid HTTP".
 */
import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { FastifyInstance } from "fastify";

/** Requests one connection may have in flight (sent, not yet answered to the end). */
export const MAX_UNANSWERED = 32;

const unanswered = new WeakMap<Socket, number>();
const closing = new WeakSet<Socket>();
/** What to do on a connection once its last request in flight is answered. */
const whenAnswered = new WeakMap<Socket, () => void>();
/** The answer to the newest request parsed on a connection (its request is `answer.req`). */
const newest = new WeakMap<Socket, ServerResponse>();
/** Answers that will never be written: their request's body could not be parsed. */
const abandoned = new WeakSet<ServerResponse>();

/** The longest a connection's ending waits for the answers before it ({@link afterAnswers}). */
const ANSWERS_WAIT_MS = 10_000;

/**
 * Runs `then` once every request parsed on `socket` so far has been answered (at once when none is
 * in flight). Answers not all out within {@link ANSWERS_WAIT_MS} (a client that does not read them,
 * a request that never ends) destroy the connection instead: it must not be held for good. The
 * first call on a connection wins.
 */
export function afterAnswers(socket: Socket, then: () => void): void {
  if ((unanswered.get(socket) ?? 0) === 0) {
    then();
    return;
  }
  if (whenAnswered.has(socket)) return;
  // A reset, not a close: a client that reads nothing sees a close only once it reads.
  const timer = setTimeout(() => socket.resetAndDestroy(), ANSWERS_WAIT_MS).unref();
  whenAnswered.set(socket, () => {
    clearTimeout(timer);
    then();
  });
}

/**
 * Bytes Node could not parse came inside the body of the newest request on `socket` (a malformed
 * chunk): that request is never answered, so the connection's refusal waits only for the answers
 * before it. It waited for that one too, and the client got no answer and a reset 10 s later.
 */
export function abandonIncomplete(socket: Socket): void {
  const last = newest.get(socket);
  if (last === undefined || last.req.complete || abandoned.has(last)) return;
  abandoned.add(last);
  unanswered.set(socket, Math.max(0, (unanswered.get(socket) ?? 1) - 1));
}

/** The answer on `socket` says `connection: close`: what comes after it on the connection is dropped. */
export function closeAfterAnswer(socket: Socket): void {
  closing.add(socket);
}

/** Registers the bound; call before any other onRequest hook. */
export function boundPipelining(app: FastifyInstance): void {
  app.addHook("onRequest", async (request, reply) => {
    const socket = request.raw.socket;
    if (closing.has(socket)) {
      reply.hijack();
      return;
    }
    const n = (unanswered.get(socket) ?? 0) + 1;
    if (n > MAX_UNANSWERED) {
      // Past the bound: this request and the ones after it are not carried out, the ones before
      // it are answered, then the connection closes. Destroyed at once, it had carried out 32
      // writes and answered none, so a client sending again what went unanswered did them twice.
      closing.add(socket);
      reply.hijack();
      // A client whose answers already back up is not reading them: reset at once.
      if (socket.writableNeedDrain) socket.resetAndDestroy();
      else afterAnswers(socket, () => socket.destroySoon());
      return;
    }
    unanswered.set(socket, n);
    newest.set(socket, reply.raw);
    reply.raw.once("close", () => {
      if (abandoned.has(reply.raw)) return;
      const left = (unanswered.get(socket) ?? 1) - 1;
      unanswered.set(socket, left);
      const then = left === 0 ? whenAnswered.get(socket) : undefined;
      if (then !== undefined) {
        whenAnswered.delete(socket);
        then();
      }
    });
  });
}
