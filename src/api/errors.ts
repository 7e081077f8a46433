/**
 * Errors as the API answers them: `{"code", "message"}` with the status of the code in
 * ERROR_CODES (src/domain/errors.ts), the one place statuses are mapped. Fastify's own refusals
 * (validation, malformed JSON, a body too large, an unknown route) become Orbit codes here too.
 */

import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type ErrorCode, httpStatusOf, OrbitError } from "../domain/errors.js";
import { ORBIT_VERSION_HEADER } from "../domain/http-headers.js";
import { VERSION } from "../version.js";
import { closeRefused, drainRefused, lingerOnClose } from "./linger.js";
import { abandonIncomplete, afterAnswers, closeAfterAnswer } from "./pipelining.js";
import { idsOfRequest } from "./request-ids.js";
import { describeValidationError } from "./validation.js";

/** The request body limit: above the engine's 1 MB input limit, so its message is what users see. */
export const BODY_LIMIT_BYTES = 2 * 1024 * 1024;
/**
 * The body limit of the routes that take a whole schedules file or batch (apply, validate, batch):
 * 10,000 entries of 1.6 KB on average. At 2 MB a file of 9,000 entries with a short description
 * each was refused, though apply takes 10,000 in its one transaction.
 */
export const FILE_BODY_LIMIT_BYTES = 16 * 1024 * 1024;

/** The refusal of a body over `limit` bytes (the route's own limit). */
export function bodyTooLarge(limit: number): OrbitError {
  const what =
    limit > BODY_LIMIT_BYTES
      ? "send the schedules in several requests (a file as several files)"
      : "an input may be at most 1 MB";
  return new OrbitError(
    "INVALID_ARGUMENT",
    `the request body is larger than ${limit} bytes (${limit / 1024 / 1024} MB); ${what}`,
  );
}
/** The longest path segment routed: ids are up to 255 characters, more once percent-encoded. */
export const MAX_PATH_PARAM_CHARS = 2048;
/** Longest a client may take to send a whole request (headers and body). */
export const REQUEST_TIMEOUT_MS = 30_000;
/** Longest a client may take to send its headers. */
export const HEADERS_TIMEOUT_MS = 10_000;
/** How often the HTTP server checks the two bounds above: a stalled client is cut within this of its bound. */
export const TIMEOUT_SWEEP_MS = 1000;

/**
 * A reused Idempotency-Key with another body: code INVALID_ARGUMENT, but status 422 (docs/api.md),
 * the one documented exception to the code → status map.
 */
export class IdempotencyKeyReused extends OrbitError {
  constructor(message: string) {
    super("INVALID_ARGUMENT", message);
  }
  override get status(): number {
    return 422;
  }
}

export interface ErrorReply {
  status: number;
  body: { code: ErrorCode; message: string };
}

const segmentTooLong = (): OrbitError =>
  new OrbitError(
    "INVALID_ARGUMENT",
    `a path segment of the URL is longer than ${MAX_PATH_PARAM_CHARS} characters; ids are at most 255`,
  );

/** Fastify error codes that are the client's fault, with Orbit's wording. */
function fromFastify(err: FastifyError): OrbitError | null {
  switch (err.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return bodyTooLarge(BODY_LIMIT_BYTES);
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new OrbitError("INVALID_ARGUMENT", "the request body must be JSON (content-type: application/json)");
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new OrbitError("INVALID_ARGUMENT", "the request body is not valid JSON");
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return new OrbitError("INVALID_ARGUMENT", "the request's content-length does not match its body");
    // Fastify's own messages quote the whole path, kilobytes of it for a long id.
    case "FST_ERR_MAX_PARAM_LENGTH":
      return segmentTooLong();
    case "FST_ERR_BAD_URL":
      return new OrbitError(
        "INVALID_ARGUMENT",
        "the URL path is not valid percent-encoded UTF-8 (a % not followed by two hex digits, or bytes that are not UTF-8)",
      );
    default:
      break;
  }
  if (err instanceof SyntaxError || err.name === "SyntaxError") {
    return new OrbitError("INVALID_ARGUMENT", `the request body is not valid JSON: ${err.message}`);
  }
  if (typeof err.statusCode === "number" && err.statusCode >= 400 && err.statusCode < 500) {
    return new OrbitError("INVALID_ARGUMENT", err.message);
  }
  return null;
}

/** The reply for any error a route or fastify raised; `internal` tells the caller to log it. */
export function errorReply(err: unknown): ErrorReply & { internal: boolean } {
  let orbit: OrbitError | null = null;
  if (err instanceof OrbitError) orbit = err;
  else if (isFastifyError(err)) {
    orbit = err.validation
      ? new OrbitError("INVALID_ARGUMENT", describeValidationError(err.validation as never, err.validationContext))
      : fromFastify(err);
  }
  if (orbit === null) {
    return {
      status: httpStatusOf("INTERNAL"),
      body: { code: "INTERNAL", message: "internal error; the server log has the details" },
      internal: true,
    };
  }
  const body = orbit.toJSON();
  body.message = cutMessage(body.message);
  return { status: orbit.status, body, internal: false };
}

/** The longest error message answered; longer ones are cut (what they quote is the caller's own). */
const MAX_MESSAGE = 2000;
/** What a cut message keeps of its end: the reason, which follows the value it quotes. */
const MESSAGE_TAIL = 600;

/**
 * A message quotes what the caller sent (a name, an id): a 70,000-character one came back whole.
 * Cut in the middle, so the reason after the quoted value survives: cut at its end, a 3,000-character
 * schedule_id left 2,000 characters of the id and not why it was refused (a tester's fuzz).
 */
export function cutMessage(message: string): string {
  if (message.length <= MAX_MESSAGE) return message;
  const left = message.length - MAX_MESSAGE;
  return `${message.slice(0, MAX_MESSAGE - MESSAGE_TAIL)}… (${left} characters left out) …${message.slice(-MESSAGE_TAIL)}`;
}

function isFastifyError(err: unknown): err is FastifyError & { validationContext?: string } {
  return err instanceof Error && ("code" in err || "validation" in err || "statusCode" in err);
}

/** Installs the error and not-found handlers. */
export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler(async (err, request, reply) => {
    // Said with the route's own limit (a schedules file may be larger: FILE_BODY_LIMIT_BYTES).
    const limit = request.routeOptions.bodyLimit ?? BODY_LIMIT_BYTES;
    const tooLarge = (err as FastifyError).code === "FST_ERR_CTP_BODY_TOO_LARGE";
    const { status, body, internal } = errorReply(tooLarge ? bodyTooLarge(limit) : err);
    if (internal) request.log.error({ err, ...idsOfRequest(request) }, "request failed");
    // Refused before its body was read (a Host or Origin refusal, a 401): the connection closes
    // with the answer, else the unread body's request timed out later and a second answer (408)
    // followed on the same connection.
    // The body still coming is read and dropped before the socket closes (linger.ts), or the
    // client, still sending, met a reset instead of this answer.
    if (!request.raw.complete) {
      reply.header("connection", "close");
      closeAfterAnswer(request.raw.socket);
      await drainRefused(request.raw);
      lingerOnClose(request.raw.socket);
    }
    // RFC 9110 § 11.6.1: a 401 names the scheme the server takes (docs/security.md).
    if (status === 401) reply.header("www-authenticate", 'Bearer realm="orbit"');
    return reply.code(status).send(body);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0] ?? "";
    // As on a known route, a segment past the limit is 400, and the answer never quotes kilobytes
    // of the URL back (an unknown route quoted all of it, to any caller).
    const err = path.split("/").some((segment) => decodedLength(segment) > MAX_PATH_PARAM_CHARS)
      ? segmentTooLong()
      : new OrbitError("NOT_FOUND", `no route ${request.method} ${shortPath(path)}; see /v1/openapi.json`);
    return reply.code(err.status).send(err.toJSON());
  });
}

/** A segment's length once percent-decoded, as fastify measures a known route's (as sent if it does not decode). */
function decodedLength(segment: string): number {
  try {
    return decodeURIComponent(segment).length;
  } catch {
    return segment.length;
  }
}

/** A path for a message: as sent up to 200 characters, else its first 120, an ellipsis and its length. */
function shortPath(path: string): string {
  return path.length <= 200 ? path : `${path.slice(0, 120)}… (${path.length} characters)`;
}

/**
 * Fastify's refusals before routing (a malformed URL, a path parameter too long): the same
 * `{code, message}` body as every other error.
 */
export function frameworkErrors(err: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const { status, body } = errorReply(err);
  // Before the request hook that says it on every other answer.
  void reply.header(ORBIT_VERSION_HEADER, VERSION).code(status).send(body);
}

/**
 * Node's refusals before fastify sees a request (headers too large 431, a request not received in
 * time 408, an unparsable request 400), answered with a `{code, message}` body and the connection
 * closed: the one place statuses outside the code map are used (docs/errors.md).
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  // Bytes after a request that said `connection: close` are not carried out (RFC 9112 § 9.6): Node
  // closes the connection once that request is answered.
  if (err.code === "HPE_CLOSED_CONNECTION") return;
  const [status, message] =
    err.code === "HPE_HEADER_OVERFLOW"
      ? [431, "the request headers are larger than the server accepts (16 KB)"]
      : err.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? [408, "the request was not received in time; send its headers and body without pausing"]
        : [400, "the request is not valid HTTP"];
  const body = JSON.stringify({ code: "INVALID_ARGUMENT", message });
  const refuse = (): void => {
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n${ORBIT_VERSION_HEADER}: ${VERSION}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    closeRefused(socket);
  };
  // A request not received in time is itself one in flight: refused at once (waiting for its own
  // answer held the connection for good, its client gone or not). Bytes Node cannot parse are
  // refused after the answers to the requests before them on the connection (pipelined).
  if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") refuse();
  else {
    abandonIncomplete(socket);
    afterAnswers(socket, refuse);
  }
}
