/**
 * The HTTP API as a fastify instance: JSON parsing, validation, the error replies, the request
 * metrics and every route of docs/api.md. Built by the composition root; knows nothing of stores.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest, LogController } from "fastify";
import { checkText, scanJsonText } from "../domain/body-guard.js";
import { OrbitError } from "../domain/errors.js";
import { ORBIT_VERSION_HEADER } from "../domain/http-headers.js";
import { serializeJson } from "../domain/json-text.js";
import { LENIENT_ROUTES } from "../domain/worker-protocol.js";
import { VERSION } from "../version.js";
import { fixedBody } from "./conditional.js";
import { capConnections } from "./connection-cap.js";
import { checkHostAndOrigin, checkRequestTarget, checkStateChanging } from "./cross-site.js";
import type { ApiDeps } from "./deps.js";
import {
  BODY_LIMIT_BYTES,
  clientErrorHandler,
  frameworkErrors,
  HEADERS_TIMEOUT_MS,
  installErrorHandlers,
  MAX_PATH_PARAM_CHARS,
  REQUEST_TIMEOUT_MS,
  TIMEOUT_SWEEP_MS,
} from "./errors.js";
import { executionRoutes } from "./executions-routes.js";
import type { IdempotencyKeys } from "./idempotency.js";
import { clientOnlyRefusal, workerProtocolRefusal } from "./identity-kind.js";
import { openApiDocument } from "./openapi.js";
import { outcomeRoutes } from "./outcome-routes.js";
import { boundPipelining, closeAfterAnswer } from "./pipelining.js";
import { idsOfRequest } from "./request-ids.js";
import { type Caller, type RouteDef, registerRoutes } from "./route.js";
import { scheduleRoutes } from "./schedules-routes.js";
import { systemRoutes } from "./system-routes.js";
import { uiRoutes } from "./ui-routes.js";
import { registerUi } from "./ui-static.js";
import { validatorCompiler } from "./validation.js";
import { workflowRoutes } from "./workflows-routes.js";

/** Decodes request bodies, refusing bytes that are not UTF-8 (a lone surrogate's encoding included). */
const UTF8 = new TextDecoder("utf-8", { fatal: true });

export interface AppOptions {
  deps: ApiDeps;
  idempotency: IdempotencyKeys;
  logger: FastifyBaseLogger;
  /**
   * Refuse requests whose Host could be a rebound name or whose Origin is another site (an open
   * server: src/api/cross-site.ts). `true`: on loopback, Host must be a loopback name; `names`: on
   * another interface, also an IP address or one of these host names. Default: no check.
   */
  hostCheck?: boolean | ReadonlySet<string>;
  /** The caller of a request; throws UNAUTHENTICATED. Default: every request is anonymous (open server). */
  authenticate?: (request: FastifyRequest) => Caller | null;
  /** How long a client may take to send a whole request, ms (docs/security.md). Default 30000. */
  requestTimeoutMs?: number;
}

export interface App {
  app: FastifyInstance;
  /** Every route registered, as `METHOD /path` (fastify syntax), HEAD excluded. */
  routes: string[];
  /** The route table the OpenAPI document is generated from. */
  table: RouteDef[];
}

export function buildApp(o: AppOptions): App {
  const app = Fastify({
    loggerInstance: o.logger,
    bodyLimit: BODY_LIMIT_BYTES,
    // One debug line per request (below) instead of fastify's two info lines.
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: "idle",
    // A request that comes while the server closes is answered 503 with Orbit's `{code, message}`
    // (below): fastify's own answer was `{"error":"Service Unavailable",…}`, and a worker polling
    // through a deploy logged only "Service Unavailable" (a tester).
    return503OnClosing: false,
    // Ids are up to 255 characters (more once percent-encoded); fastify's default is 100.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PATH_PARAM_CHARS },
    // A client that stalls its headers or body does not hold a connection forever; long polls
    // are not affected (these bound receiving the request, not answering it).
    requestTimeout: o.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
    // Node checks both bounds on a sweep of the open connections, every 30 s unless told: a stalled
    // client was cut 24-39 s after it began, not 10 s. The interval is only taken at creation.
    http: {
      headersTimeout: Math.min(HEADERS_TIMEOUT_MS, o.requestTimeoutMs ?? REQUEST_TIMEOUT_MS),
      requestTimeout: o.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: TIMEOUT_SWEEP_MS,
      // Refused by checkRequestTarget with a `{code, message}` body (Node's own answer had none).
      requireHostHeader: false,
    },
    frameworkErrors,
    clientErrorHandler,
  });
  capConnections(app.server, app.log);
  // An `Expect` other than 100-continue: Node answers 417 itself, which had no body.
  app.server.on("checkExpectation", (req: IncomingMessage, res: ServerResponse) => {
    const expect = JSON.stringify(String(req.headers.expect ?? "").slice(0, 100));
    const body = JSON.stringify({
      code: "INVALID_ARGUMENT",
      message: `Expect: ${expect} is not supported; leave it out, or send Expect: 100-continue`,
    });
    closeAfterAnswer(req.socket);
    res.writeHead(417, {
      "content-type": "application/json; charset=utf-8",
      "content-length": Buffer.byteLength(body),
      connection: "close",
      [ORBIT_VERSION_HEADER]: VERSION,
    });
    res.end(body);
  });
  const routes: string[] = [];
  app.addHook("onRoute", (r) => {
    for (const m of [r.method].flat()) if (m !== "HEAD") routes.push(`${m} ${r.url}`);
  });
  app.setValidatorCompiler(validatorCompiler);
  // JSON only: fastify's text/plain parser would hand a string to the JSON routes.
  app.removeContentTypeParser("text/plain");
  // An empty body is no body (POST …/pause with nothing to say); anything else must be JSON.
  const json = app.getDefaultJsonParser("error", "error");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body, done) => {
    const refused = encodingRefusal(request.headers);
    if (refused !== null) return done(refused, undefined);
    let text: string;
    try {
      // Strict: bytes that are not UTF-8 were read as U+FFFD and stored as such, silently.
      text = typeof body === "string" ? body : UTF8.decode(body);
    } catch {
      return done(new OrbitError("INVALID_ARGUMENT", "the request body is not valid UTF-8"), undefined);
    }
    // Kept for the schedule routes, which store an input's text as given (`120.0`, json-text.ts).
    (request as FastifyRequest & { rawBody?: string }).rawBody = text;
    if (text.trim() === "") return done(null, undefined);
    try {
      // Depth, NUL and lone surrogates, before JSON.parse builds anything. A worker's report that
      // ends an attempt is parsed with them: a result Orbit cannot store fails its execution, an
      // error is kept in a storable form (worker-routes.ts), instead of leaving it RUNNING.
      const lenient = LENIENT_ROUTES.has(request.routeOptions.url ?? "");
      const unstorable = scanJsonText(text, undefined, { chars: !lenient });
      if (unstorable !== null) (request as FastifyRequest & { unstorable?: string }).unstorable = unstorable;
    } catch (err) {
      return done(err as Error, undefined);
    }
    void json(request, text, (err, value) => done(err === null ? null : namedRefusal(err, text), value));
  });
  // Before the body is read: who is calling (an unknown caller's body is never parsed), and path
  // and query values that no store could keep (docs/security.md).
  const publicRoutes = new Set<string>();
  const authenticate = o.authenticate;
  boundPipelining(app);
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  app.addHook("onRequest", async (request, reply) => {
    // Every answer says it is Orbit's, with its version: a client tells another program on the
    // address from this server by it (src/client/http.ts requireOrbit).
    void reply.header(ORBIT_VERSION_HEADER, VERSION);
    if (closing) {
      void reply.header("connection", "close");
      // Readiness keeps its documented shape, with the role (it was the bare {code, message}; a tester).
      if (request.url.split("?")[0] === "/readyz") {
        const role = (await o.deps.readiness().catch(() => null))?.role;
        return reply.code(503).send({
          status: "not_ready",
          ...(role !== undefined ? { role } : {}),
          message: "the server is shutting down",
        });
      }
      throw new OrbitError(
        "UNAVAILABLE",
        "the server is shutting down; retry shortly (on another server, or on this one once it is back)",
      );
    }
    checkRequestTarget(request);
    // Every request, the UI's pages included: a rebound name must not even read them.
    if (o.hostCheck === true) checkHostAndOrigin(request);
    else if (o.hostCheck instanceof Set) checkHostAndOrigin(request, { local: false, names: o.hostCheck });
    const url = request.routeOptions.url;
    if (url === undefined || !url.startsWith("/v1/")) {
      // No such API route (`/v1` itself, or below it): an unknown caller is refused as on every API
      // route (it was told 404, and the route's absence, without a token).
      if (authenticate !== undefined && /^\/v1(?:[/?]|$)/.test(request.url)) authenticate(request);
      if (url === undefined) return;
    }
    const method = request.method === "HEAD" ? "GET" : request.method;
    // Who is calling first, then what it sent: a wrong content type answered an unknown caller
    // 400 before its 401, and a caller of the wrong kind before its 403 (a tester).
    if (authenticate !== undefined && url.startsWith("/v1/") && !publicRoutes.has(`${method} ${url}`)) {
      refuseWrongKind(authenticate(request), url);
    }
    if (url.startsWith("/v1/")) checkStateChanging(request);
    for (const [k, v] of Object.entries((request.params ?? {}) as Record<string, unknown>)) {
      checkText(v, `path parameter ${k}`);
    }
    // The route's whole-number query parameters take decimal digits only: coercion reads "0x1F",
    // "1e1" and " 1" as numbers (expected_revision=0x1F matched revision 31).
    const declared = (
      request.routeOptions.schema?.querystring as {
        properties?: Record<string, { type?: unknown; minimum?: number; maximum?: number }>;
      }
    )?.properties;
    for (const [k, v] of Object.entries((request.query ?? {}) as Record<string, unknown>)) {
      // `?limit=5&limit=6` arrives as a list: said as such, not as "must be an integer".
      // Only a parameter the route reads: others are ignored, given once or twice (a page's `?v=1&v=2`).
      const type = declared?.[k]?.type;
      if (Array.isArray(v) && type !== undefined && type !== "array") {
        throw new OrbitError("INVALID_ARGUMENT", `query parameter ${k} is given more than once; give it once`);
      }
      checkText(v, `query parameter ${k}`);
      if (declared?.[k]?.type === "integer" && typeof v === "string") {
        if (!/^-?\d+$/.test(v)) {
          throw new OrbitError("INVALID_ARGUMENT", `query parameter ${k} must be a whole number in decimal digits`);
        }
        // 9007199254740991 (16 digits, the OpenAPI's maximum) or 0000000000000001 are whole numbers
        // too: they were refused as not being one, by a limit of 15 digits.
        if (!Number.isSafeInteger(Number(v))) {
          // The route's own bound where it has one (`limit=99999999999999999999` is past 1,000, as
          // `limit=5000` is said to be), else JSON's whole numbers.
          const { minimum, maximum } = declared[k] ?? {};
          const bound = v.startsWith("-")
            ? minimum === undefined
              ? null
              : `at least ${minimum}`
            : maximum === undefined
              ? null
              : `at most ${maximum}`;
          throw new OrbitError(
            "INVALID_ARGUMENT",
            `query parameter ${k} must be ${bound ?? `between -${Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}`}`,
          );
        }
      }
    }
  });
  app.addHook("preValidation", async (request) => {
    if (request.body === undefined && (request.method === "POST" || request.method === "PATCH")) request.body = {};
  });
  app.addHook("onResponse", async (request, reply) => {
    o.deps.metrics.observeHttp(
      request.method,
      request.routeOptions.url ?? "unmatched",
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
  });
  app.addHook("onResponse", async (request, reply) => {
    request.log.debug(
      {
        method: request.method,
        url: request.url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
        ...idsOfRequest(request),
      },
      "request",
    );
  });
  installErrorHandlers(app);
  app.setReplySerializer((payload) => serializeJson(payload));

  const table: RouteDef[] = [];
  let document: object | null = null;
  table.push(
    ...scheduleRoutes(o.deps),
    ...workflowRoutes(o.deps),
    ...executionRoutes(o.deps),
    ...outcomeRoutes(o.deps),
    ...uiRoutes(o.deps),
    ...systemRoutes(o.deps, () => {
      document ??= fixedBody(openApiDocument(table, VERSION));
      return document;
    }),
  );
  for (const r of table) if (r.public) publicRoutes.add(`${r.method} ${r.url}`);
  registerRoutes(app, table, { idempotency: o.idempotency, authenticate: o.authenticate ?? (() => null) });
  registerUi(app);
  return { app, routes, table };
}

/**
 * The routes only one kind of identity may call, refused before the body is read (docs/security.md
 * § Identities): a malformed body answered 400 first, telling a caller that may not call the route
 * about its body (a tester). The routes refuse the same again with the caller in hand.
 */
function refuseWrongKind(caller: Caller | null, url: string): void {
  if (caller === null) return;
  if (url.startsWith("/v1/worker/") && caller.kind !== "worker") throw workerProtocolRefusal(caller.name);
  if ((url === "/v1/schedules" || url.startsWith("/v1/schedules/")) && caller.kind === "worker") {
    throw clientOnlyRefusal(caller.name);
  }
}

/**
 * fastify's parser refuses `__proto__` keys (and `constructor` holding `prototype`) against
 * prototype pollution with the same "not valid JSON" as a syntax error; text that JSON.parse takes
 * was refused for such a key, and the message says so (docs/security.md § Limits).
 */
function namedRefusal(err: Error, text: string): Error {
  if ((err as { code?: unknown }).code !== "FST_ERR_CTP_INVALID_JSON_BODY") return err;
  try {
    JSON.parse(text);
  } catch {
    return err;
  }
  return new OrbitError(
    "INVALID_ARGUMENT",
    'the request body has a "__proto__" key (or "constructor" holding "prototype"), which Orbit refuses: rename it',
  );
}

/**
 * A compressed body: fastify does not inflate it, so it failed as "not valid JSON". A `charset`
 * other than UTF-8: the body is read as UTF-8 (RFC 8259 § 8.1), so a body sent as UTF-16 or
 * Latin-1 was read as other text than the client meant, or refused as not UTF-8 without saying why.
 */
function encodingRefusal(headers: FastifyRequest["headers"]): OrbitError | null {
  const charset = charsetOf(headers["content-type"]);
  if (charset !== null && charset !== "utf-8" && charset !== "utf8") {
    return new OrbitError(
      "INVALID_ARGUMENT",
      `the request body must be UTF-8 (content-type: application/json; charset=utf-8), not charset ${JSON.stringify(charset.slice(0, 40))}`,
    );
  }
  const encoding = headers["content-encoding"]?.trim().toLowerCase();
  if (encoding !== undefined && encoding !== "" && encoding !== "identity") {
    return new OrbitError(
      "INVALID_ARGUMENT",
      `the request body is compressed (content-encoding: ${encoding.slice(0, 40)}); send it uncompressed`,
    );
  }
  // A transfer coding besides chunked (`gzip, chunked`): Node de-chunks the body and leaves the
  // rest, so a plain body sent so was carried out and a gzipped one failed as not UTF-8, where a
  // proxy that decodes the coding reads another body than Orbit (a tester; RFC 9112 § 6.1).
  const transfer = headers["transfer-encoding"]?.toLowerCase();
  const codings =
    transfer
      ?.split(",")
      .map((c) => c.trim())
      .filter((c) => c !== "" && c !== "chunked") ?? [];
  if (codings.length === 0) return null;
  return new OrbitError(
    "INVALID_ARGUMENT",
    `the request body has a transfer coding Orbit does not decode (transfer-encoding: ${transfer?.slice(0, 40)}); send it with chunked alone, or with a content-length`,
  );
}

/** The `charset` parameter of a content type, lower case and unquoted, or null when it has none. */
function charsetOf(type: string | undefined): string | null {
  for (const param of type?.split(";").slice(1) ?? []) {
    const eq = param.indexOf("=");
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== "charset") continue;
    const value = param.slice(eq + 1).trim();
    return (
      value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value
    ).toLowerCase();
  }
  return null;
}
