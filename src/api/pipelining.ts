/**
 * HTTP/1.1 pipelining, bounded (docs/api.md § Limits). A client may send requests on one connection
 * before reading the answers; Node parses and answers them all, and buffers the answers a client
 * that never reads leaves unread: 20 connections of 200 `GET /v1/openapi.json` each (10 KB sent)
 * held 1.1 GB of the server's memory. So a connection with more than {@link MAX_UNANSWERED}
 * requests whose answers are not yet written out is closed. And once an answer said
 * `connection: close`, the requests that came after it on that connection are not carried out
 * (RFC 9112 § 9.6): they were, and their answers never sent, so a client that sent again what was
 * not answered started an execution twice.
 */
import type { Socket } from "node:net";
import type { FastifyInstance } from "fastify";

/** Requests one connection may have in flight (sent, not yet answered to the end). */
export const MAX_UNANSWERED = 32;

const unanswered = new WeakMap<Socket, number>();
const closing = new WeakSet<Socket>();

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
      socket.destroy();
      reply.hijack();
      return;
    }
    unanswered.set(socket, n);
    reply.raw.once("close", () => unanswered.set(socket, (unanswered.get(socket) ?? 1) - 1));
  });
}
