/**
 * Cross-site requests and DNS rebinding (docs/security.md § Browsers). A web page the user visits
 * can make the browser send requests to 127.0.0.1, and a rebound DNS name can even read the
 * answers; an open server (no identities) has nothing else to stop them. So:
 *
 * - a state-changing request (POST, PATCH, PUT, DELETE) must say `content-type: application/json`
 *   (or carry an `X-Orbit-Client` header): a page cannot send either cross-site without a CORS
 *   preflight, which Orbit never answers, so a form post or a body-less `fetch` is refused. A
 *   request with no body and no content type passes when nothing says a browser sent it: no
 *   `Origin` (a browser sends one with every POST, PATCH, PUT and DELETE) and no `Sec-Fetch-Site`
 *   but `none` or `same-origin`. So `curl -X POST …/pause` works, a page's body-less fetch does not;
 * - on an open server listening on loopback, `Host` must name a loopback address (a rebound name
 *   such as `attacker.example` is refused), and an `Origin`, when sent, must be the same host.
 */
import type { FastifyRequest } from "fastify";
import { OrbitError } from "../domain/errors.js";

const STATE_CHANGING = new Set(["POST", "PATCH", "PUT", "DELETE"]);
const JSON_TYPE = /^application\/json\s*(;|$)/i;

/** The message of a refused media type, the same as fastify's own refusal (src/api/errors.ts). */
export const NOT_JSON = "the request body must be JSON (content-type: application/json)";

export function checkStateChanging(request: FastifyRequest): void {
  if (!STATE_CHANGING.has(request.method)) return;
  const type = request.headers["content-type"];
  if (type !== undefined && JSON_TYPE.test(type)) return;
  if (request.headers["x-orbit-client"] !== undefined) return;
  const body = hasBody(request);
  if (type === undefined && !body && !fromBrowser(request)) return;
  throw new OrbitError(
    "INVALID_ARGUMENT",
    type === undefined && !body
      ? `${request.method} requests from a browser must send content-type: application/json (or an X-Orbit-Client header), even with no body; this refuses cross-site requests`
      : NOT_JSON,
  );
}

/** A body is coming: a length above 0, or a chunked one (a length of 0 is no body). */
function hasBody(request: FastifyRequest): boolean {
  const length = request.headers["content-length"];
  return request.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}

/**
 * A browser says so on a state-changing request: the Fetch standard sends `Origin` with every
 * request whose method is not GET or HEAD, and `Sec-Fetch-Site` with every request.
 */
function fromBrowser(request: FastifyRequest): boolean {
  if (request.headers.origin !== undefined) return true;
  const site = request.headers["sec-fetch-site"];
  return site !== undefined && site !== "none" && site !== "same-origin";
}

function hostnameOf(host: string): string {
  const m = /^\[([^\]]+)\](?::\d+)?$/.exec(host) ?? /^([^:]+)(?::\d+)?$/.exec(host);
  return (m?.[1] ?? host).toLowerCase();
}

const isLoopbackName = (name: string): boolean =>
  name === "localhost" || name === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);

/** An IP address written as such (v4, or v6 in brackets' contents): no DNS name, so nothing to rebind. */
const isAddress = (name: string): boolean => /^\d{1,3}(\.\d{1,3}){3}$/.test(name) || name.includes(":");

/**
 * Open server: Host must name it in a way no web page can rebind, Origin (if any) the same host.
 * On loopback (`local`), a loopback name; on another interface, also any IP address and the
 * machine's own names (`names`): a server on 0.0.0.0 also answers on 127.0.0.1, where a page whose
 * name rebinds to 127.0.0.1 could read and write everything (a tester; the usual Docker set-up,
 * `--host 0.0.0.0` published on the host's loopback only). Other names need `--config`.
 */
export function checkHostAndOrigin(
  request: FastifyRequest,
  scope: { local: true } | { local: false; names: ReadonlySet<string> } = { local: true },
): void {
  const host = request.headers.host;
  const name = host === undefined ? "" : hostnameOf(host);
  const named =
    host !== undefined && (isLoopbackName(name) || (!scope.local && (isAddress(name) || scope.names.has(name))));
  if (!named) {
    throw new OrbitError(
      "PERMISSION_DENIED",
      scope.local
        ? `Host ${JSON.stringify(host ?? "")} is not a loopback address: this server has no identities and answers only requests to localhost or 127.0.0.1 (docs/security.md)`
        : `Host ${JSON.stringify(host ?? "")} is not an address of this server: without identities (--config) it answers only requests to an IP address, localhost or its host name, so that no web page can reach it through a name it controls (docs/security.md)`,
    );
  }
  const origin = request.headers.origin;
  if (origin === undefined || origin === "null") {
    if (origin === "null") throw crossOrigin(origin);
    return;
  }
  let originHost: string;
  try {
    originHost = new URL(origin).host;
  } catch {
    throw crossOrigin(origin);
  }
  if (originHost.toLowerCase() !== host.toLowerCase()) throw crossOrigin(origin);
}

/**
 * The request names one host (RFC 9112 § 3.2), on every server: exactly one `Host` header on an
 * HTTP/1.1 request (Node's own refusal of a missing one had no body), and a request target in
 * absolute form (`GET http://other.example/v1/me`) only for that same host. Two Host headers were
 * answered 200 with the first one's checks, and an absolute target passed the loopback check with a
 * Host of 127.0.0.1 while naming another host (docs/security.md § Browsers). Its query string
 * decodes to UTF-8.
 */
export function checkRequestTarget(request: FastifyRequest): void {
  const raw = request.raw;
  let hosts = 0;
  for (let i = 0; i < raw.rawHeaders.length; i += 2) if (raw.rawHeaders[i]?.toLowerCase() === "host") hosts++;
  if (hosts > 1) throw new OrbitError("INVALID_ARGUMENT", `the request has ${hosts} Host headers; send one`);
  const host = request.headers.host;
  if (host === undefined) {
    if (raw.httpVersion === "1.0") return;
    throw new OrbitError("INVALID_ARGUMENT", "the request has no Host header, which HTTP/1.1 requires");
  }
  const target = raw.url ?? "";
  // A request target holds no fragment (RFC 9112 § 3.2; a client strips it): `#limit=1` was read as
  // the query string, and `/v1/schedules/s1#x` as an unknown query field x.
  if (target.includes("#")) {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      "the request target holds a #: a fragment is not sent to a server; write a # inside a value as %23",
    );
  }
  // A query value's bytes must be UTF-8 once percent-decoded (as a path's are): `%FF` was read as
  // U+FFFD and searched for, filtered on and echoed as if sent.
  const query = target.indexOf("?");
  if (query >= 0) {
    for (const part of target.slice(query + 1).split("&")) {
      try {
        decodeURIComponent(part.replace(/\+/g, " "));
      } catch {
        throw new OrbitError(
          "INVALID_ARGUMENT",
          `the query string's ${JSON.stringify(part.slice(0, 60))} is not percent-encoded UTF-8`,
        );
      }
    }
  }
  if (target.startsWith("/")) return;
  // The asterisk form is OPTIONS's alone (RFC 9112 § 3.2.4): `GET *` was answered the UI's page.
  if (target === "*") {
    if (request.method === "OPTIONS") return;
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `the request target * is for OPTIONS only; ${request.method} needs a path`,
    );
  }
  let named: string;
  try {
    named = new URL(target).host;
  } catch {
    throw new OrbitError("INVALID_ARGUMENT", "the request target is not a path or an absolute URL");
  }
  if (named.toLowerCase() !== host.toLowerCase()) {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `the request target names host ${JSON.stringify(named)} but its Host header says ${JSON.stringify(host)}`,
    );
  }
}

function crossOrigin(origin: string): OrbitError {
  return new OrbitError(
    "PERMISSION_DENIED",
    `cross-origin request from ${origin} refused: this server has no identities, so only its own pages (and non-browser clients) may call it`,
  );
}
