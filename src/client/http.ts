/**
 * One HTTP exchange with the server: JSON in, JSON out, `{code, message}` errors turned into
 * {@link OrbitError}, and a refused connection turned into {@link ServerUnreachableError} with a
 * message that says what to do.
 */

import { type Agent, request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { ERROR_CODES, type ErrorCode, OrbitError } from "../domain/errors.js";
import { ORBIT_VERSION_HEADER } from "../domain/http-headers.js";
import { parseJsonText, stringifyJsonText } from "../domain/json-text.js";
import { linkedSignal } from "../domain/linked-signal.js";
import { NO_ANSWER, NOT_ORBIT, REDIRECTED, ServerUnreachableError, withUnansweredWrite } from "./unreachable.js";

export { ServerUnreachableError, type UnansweredWrite, unansweredWriteOf } from "./unreachable.js";

/** Headers of a write: the revision fences and the idempotency key (docs/api.md). */
export interface WriteOptions {
  /** Sent as `If-Match: "<revision>"`: the server answers 412 PRECONDITION_FAILED on a mismatch. */
  ifMatch?: number | string;
  /** Sent as `?expected_revision=N`: the server answers 409 CONFLICT on a mismatch. */
  expectedRevision?: number;
  /** Sent as `Idempotency-Key`: a repeat with the same key and body returns the first answer. */
  idempotencyKey?: string;
}

/**
 * Headers of a write that has no revision to fence (a create, an execution's start, cancel or
 * retry, a workflow's registration): only the idempotency key; an If-Match there is 412.
 */
export type KeyedWriteOptions = Pick<WriteOptions, "idempotencyKey">;

export interface RequestOptions extends WriteOptions {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
}

export interface HttpResponse<T> {
  status: number;
  body: T;
}

/**
 * A keep-alive agent of `node:http` or `node:https`, by the one method Orbit's public types need:
 * naming `node:http`'s `Agent` here would make every user of the package's declarations install
 * @types/node (test/package/declarations.test.ts).
 */
export interface KeepAliveAgent {
  destroy(): void;
}

export interface HttpOptions {
  baseUrl: string;
  token?: string | null;
  /** Milliseconds before a request is given up. Default 30 000. */
  timeoutMs?: number;
  /** The fetch to use; default the global one (tests may pass another). */
  fetch?: typeof fetch;
  /**
   * Send with `node:http` (`node:https` for an https server) through this keep-alive Agent instead
   * of fetch, unless `fetch` is given. Default none (fetch). The worker's protocol uses it: fetch cost a
   * worker about half its CPU per execution (0.12 → 0.06 ms at S = 10,000) and undici, once
   * loaded, 10–20 MB of RSS (docs/benchmarks.md § Memory at S = 10,000 (issue 15)).
   */
  agent?: KeepAliveAgent;
  /** Aborts the request as a timeout would (ServerUnreachableError "no answer in time"). Default none. */
  signal?: AbortSignal;
  /**
   * Refuse a 2xx answer without the `Orbit-Version` header every Orbit server sends, unless the
   * address's OpenAPI document says it is an Orbit of an earlier release: another program on the
   * address, answering JSON of another shape, was read field by field as Orbit's (`paused x` for a
   * pause nobody made). Default false; OrbitClient sets it.
   */
  requireOrbit?: boolean;
  /**
   * Say of a write (not GET) that got no answer, or a 503, that it may or may not have been carried
   * out, and how to repeat it safely (ServerUnreachableError.write; an OrbitError's
   * `details.write`, {@link unansweredWriteOf}). Default false: the worker's protocol repeats its
   * own reports, which leases make safe; OrbitClient sets it.
   */
  unansweredWrites?: boolean;
}

export const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * The bearer token as given to a Worker or an OrbitClient (`owner`): text an HTTP header can carry
 * (no line break or other control character), refused here rather than reported at each request
 * as a server that cannot be reached.
 */
export function bearerToken(token: unknown, owner: "Worker" | "OrbitClient"): string | null {
  if (token === undefined || token === null || token === "") return null;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
  if (typeof token !== "string" || /[\u0000-\u001f\u007f]/.test(token) || /[^\u0000-\u00ff]/.test(token)) {
    throw new TypeError(
      `the ${owner}'s \`token\` option must be text an HTTP header can carry: no line break, control character or character beyond Latin-1`,
    );
  }
  return token;
}

/**
 * The server's URL as given to a Worker or an OrbitClient (`owner`), trailing slashes dropped: a
 * missing or non-http(s) one is refused here, naming the option, rather than at the first request.
 */
export function serverUrl(server: unknown, owner: "Worker" | "OrbitClient"): string {
  const example = "e.g. http://127.0.0.1:7233";
  if (typeof server !== "string" || server.trim() === "") {
    throw new TypeError(
      `a${owner === "Worker" ? "" : "n"} ${owner} needs the Orbit server's URL as its \`server\` option, ${example}`,
    );
  }
  let url: URL | null = null;
  try {
    url = new URL(server);
  } catch {
    url = null;
  }
  if (url === null || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new TypeError(
      `the ${owner}'s \`server\` option must be an http:// or https:// URL, ${example} (got ${JSON.stringify(server)})`,
    );
  }
  // `http://host:7233?x=1` put the query before the path (`…?x=1/v1/schedules`): every request
  // went to the root and read its answer.
  if (url.search !== "" || url.hash !== "") {
    throw new TypeError(
      `the ${owner}'s \`server\` option is the server's address alone, without a query (?…) or fragment (#…), ${example} (got ${JSON.stringify(server)})`,
    );
  }
  // Credentials in the URL: fetch refuses such a URL, which read as "cannot reach the Orbit
  // server" with the password in the message. Orbit takes a bearer token, never a URL's password.
  if (url.username !== "" || url.password !== "") {
    throw new TypeError(
      `the ${owner}'s \`server\` option must not carry a user or password (${url.protocol}//…@${url.host}): pass a token instead (the \`token\` option, orbit --token)`,
    );
  }
  // The API's base (`http://host:7233/v1`, as docs/api.md writes its routes) is the server too, as
  // the CLI takes it (src/cli/connection.ts): kept, every request went to /v1/v1/… ("no route"),
  // and refused, a URL the CLI took failed the Worker (a tester).
  return server.replace(/\/+$/, "").replace(/\/v1$/, "");
}

export async function request<T>(http: HttpOptions, req: RequestOptions): Promise<HttpResponse<T>> {
  const url = new URL(`${http.baseUrl}${req.path}`);
  for (const [key, value] of Object.entries(req.query ?? {})) {
    if (value !== undefined) url.searchParams.set(key, String(value));
  }
  if (req.expectedRevision !== undefined) url.searchParams.set("expected_revision", String(req.expectedRevision));
  const headers: Record<string, string> = { accept: "application/json" };
  // Always on a write, even without a body: the server refuses state-changing requests without it
  // (a browser cannot send it cross-site; docs/security.md).
  if (req.body !== undefined || req.method !== "GET") headers["content-type"] = "application/json";
  if (http.token) headers.authorization = `Bearer ${http.token}`;
  if (req.ifMatch !== undefined) headers["if-match"] = `"${String(req.ifMatch).replace(/^"|"$/g, "")}"`;
  if (req.idempotencyKey !== undefined) headers["idempotency-key"] = req.idempotencyKey;

  const body = req.body === undefined ? undefined : bodyText(req);
  let answer: Answer;
  try {
    answer =
      http.agent !== undefined && http.fetch === undefined
        ? // The only agents given are node:http's or node:https's (src/worker/protocol-client.ts).
          await exchange(http, http.agent as Agent, url, req.method, headers, body)
        : await fetchExchange(http, url, req.method, headers, body);
  } catch (err) {
    // Nothing here sends a request twice (no retry, also not on a kept-alive connection that
    // closed): a write without its answer is said to be one, for its sender to repeat safely.
    if (err instanceof ServerUnreachableError && req.method !== "GET" && http.unansweredWrites === true) {
      throw new ServerUnreachableError(err.baseUrl, err.reason, {
        method: req.method,
        path: req.path,
        idempotencyKey: req.idempotencyKey,
      });
    }
    throw err;
  }
  const { text } = answer;
  // An Orbit server never redirects an API request: something in front of it does (http to https,
  // a moved host), and the right address is where it points.
  if (answer.status >= 300 && answer.status <= 399) {
    const to = answer.location === null ? "" : ` to ${JSON.stringify(answer.location.slice(0, 200))}`;
    throw new ServerUnreachableError(http.baseUrl, `${REDIRECTED}${answer.status}${to}`);
  }
  if (answer.status < 200 || answer.status > 299) {
    const err = errorOf(answer, text, http.baseUrl);
    // A 503 may come after the database committed the write and only its answer was lost: said
    // as refused, it was retried and done twice (a second execution of a trigger; a tester).
    if (answer.status === 503 && req.method !== "GET" && http.unansweredWrites === true) {
      throw withUnansweredWrite(err, { method: req.method, path: req.path, idempotencyKey: req.idempotencyKey });
    }
    throw err;
  }
  if (http.requireOrbit === true && !answer.orbit && !(await olderOrbit(http))) {
    throw new ServerUnreachableError(http.baseUrl, NOT_ORBIT);
  }
  if (text === "") return { status: answer.status, body: undefined as T };
  try {
    // Numbers keep their text where JavaScript would change it (an input's `120.0`): json-text.ts.
    return { status: answer.status, body: parseJsonText(text) as T };
  } catch {
    throw new OrbitError("INTERNAL", `the server answered ${req.method} ${req.path} with something that is not JSON`);
  }
}

/** Whether each address without the header is an Orbit server of an earlier release, once asked. */
const olderOrbits = new Map<string, Promise<boolean>>();

/**
 * A 2xx answer without Orbit-Version: an Orbit server of a release before the header answers its
 * OpenAPI document with the title "Orbit", another program does not. A yes is kept per address
 * and process, so a newer client keeps working with an older server at one request more.
 */
function olderOrbit(http: HttpOptions): Promise<boolean> {
  let known = olderOrbits.get(http.baseUrl);
  if (known === undefined) {
    known = request<{ info?: { title?: unknown } }>(
      { ...http, requireOrbit: false },
      { method: "GET", path: "/v1/openapi.json" },
    ).then(
      (res) => res.body?.info?.title === "Orbit",
      () => false,
    );
    olderOrbits.set(http.baseUrl, known);
    // Only a yes is kept: a no (or no answer) is asked again next time.
    void known.then((yes) => {
      if (!yes) olderOrbits.delete(http.baseUrl);
    });
  }
  return known;
}

interface Answer {
  status: number;
  statusText: string;
  text: string;
  /** It carries the Orbit-Version header. */
  orbit: boolean;
  /** A redirect's Location, else null. */
  location: string | null;
}

async function fetchExchange(
  http: HttpOptions,
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<Answer> {
  const timeout = AbortSignal.timeout(http.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  // Not AbortSignal.any: on Node 20 it left an entry in a long-lived signal (a worker's) per request.
  const linked = http.signal ? linkedSignal([timeout, http.signal]) : null;
  try {
    let res: Response;
    try {
      const init: RequestInit & { orbitTimeoutMs: number } = {
        method,
        headers,
        body,
        // Not followed: fetch turns a redirected POST into a GET, and the GET of the address it led
        // to was read as the write's answer (`deleted x`, exit 0, for nothing deleted; a tester).
        redirect: "manual",
        signal: linked?.signal ?? timeout,
        // For a fetch that says how long it waits (the CLI's "still waiting … gives up at"; fetch ignores it).
        orbitTimeoutMs: http.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      };
      res = await (http.fetch ?? fetch)(url, init);
    } catch (err) {
      throw new ServerUnreachableError(http.baseUrl, causeOf(err));
    }
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      // The headers came and the body stalled or broke off: as unanswered as no headers at all
      // (the timeout's TimeoutError came out as "unexpected error" with a stack; a tester).
      throw new ServerUnreachableError(http.baseUrl, causeOf(err));
    }
    return {
      status: res.status,
      statusText: res.statusText,
      text,
      orbit: res.headers.has(ORBIT_VERSION_HEADER),
      location: res.headers.get("location"),
    };
  } finally {
    linked?.release();
  }
}

/** One exchange over node:http through a keep-alive agent; every failure to get the whole answer is unreachable. */
function exchange(
  http: HttpOptions,
  agent: Agent,
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    if (body !== undefined) headers["content-length"] = String(Buffer.byteLength(body));
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const req = send(url, { method, headers, agent });
    let settled = false;
    let late = false;
    const giveUp = (): void => {
      late = true;
      req.destroy();
    };
    const timer = setTimeout(giveUp, http.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const { signal } = http;
    signal?.addEventListener("abort", giveUp);
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", giveUp);
      return true;
    };
    const fail = (err: unknown): void => {
      if (settle()) reject(new ServerUnreachableError(http.baseUrl, late ? NO_ANSWER : causeOf(err)));
    };
    req.on("error", fail);
    req.on("response", (res: IncomingMessage) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => {
        if (settle()) {
          const orbit = res.headers[ORBIT_VERSION_HEADER] !== undefined;
          const location = res.headers.location ?? null;
          resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? "", text, orbit, location });
        }
      });
      res.on("error", fail);
      res.on("close", () => fail(new Error("the connection closed before the whole answer came")));
    });
    if (signal?.aborted) giveUp();
    req.end(body);
  });
}

/** The `{code, message}` body as an OrbitError; a body without one still gets a useful message. */
function errorOf(res: { status: number; statusText: string }, text: string, baseUrl: string): OrbitError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed === "object" && parsed !== null) {
    const { code, message } = parsed as { code?: unknown; message?: unknown };
    // 408: the server did not receive the whole request in time (it was too busy to read it: a
    // SQLite file locked by another process blocks it for seconds), so nothing of it was done.
    // Said as UNAVAILABLE, the request is sent again like any other the server could not take: a
    // worker's step report refused this way failed a healthy attempt.
    if (res.status === 408 && typeof message === "string")
      return new OrbitError("UNAVAILABLE", message, { httpStatus: 408 });
    // The status kept: an answer in Orbit's form is the server speaking (`orbit doctor` tells a
    // server stopping, /healthz 503, from one that does not answer).
    if (typeof message === "string")
      return new OrbitError(codeOf(code, res.status), message, { httpStatus: res.status });
  }
  // Not Orbit's `{code, message}`: a proxy's one-line reason is worth showing; a web page (another
  // program on that port) is not, and says the address is probably wrong.
  const trimmed = text.trim();
  // A 404 not in Orbit's form is another program (Orbit answers an unknown route in its form): a
  // worker pointed at one died with `404 Not Found: <h1>Not Found</h1>` and no word of why (a tester).
  const notOrbit = ` with a web page, not an Orbit answer: is ${baseUrl} the Orbit server's address?`;
  const detail = /^<(!doctype|html|\?xml|head|body|h1|title|p)\b/i.test(trimmed)
    ? notOrbit
    : res.status === 404
      ? `${trimmed === "" ? "" : `: ${firstLine(trimmed)}`}, not an Orbit answer: is ${baseUrl} the Orbit server's address?`
      : trimmed === ""
        ? ""
        : `: ${firstLine(trimmed)}`;
  return new OrbitError(codeOf(undefined, res.status), `the server answered ${res.status} ${res.statusText}${detail}`);
}

/** The first line of a text, at most 200 characters. */
function firstLine(text: string): string {
  const line = text.split("\n", 1)[0]?.trim() ?? "";
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

function codeOf(code: unknown, status: number): ErrorCode {
  if (typeof code === "string" && code in ERROR_CODES) return code as ErrorCode;
  const byStatus = (Object.entries(ERROR_CODES) as Array<[ErrorCode, number]>).find(([, s]) => s === status);
  if (status === 422) return "INVALID_ARGUMENT";
  return byStatus?.[0] ?? "INTERNAL";
}

/** The most specific reason fetch gives (`ECONNREFUSED`, `ENOTFOUND`, a timeout …). */
function causeOf(err: unknown): string {
  if (err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError")) return NO_ANSWER;
  // node:http's own errors carry the code themselves; fetch's wrap them as the cause.
  const own = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  if (typeof own === "string") return own;
  const cause = err instanceof Error ? (err.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  if (cause && typeof cause.code === "string") return cause.code;
  if (cause && typeof cause.message === "string") return cause.message;
  return err instanceof Error ? err.message : String(err);
}

/** The request's body as JSON; what cannot be written is a TypeError that says so, not a stack overflow. */
function bodyText(req: RequestOptions): string {
  try {
    return stringifyJsonText(req.body);
  } catch (err) {
    const why =
      err instanceof RangeError
        ? "it holds a cycle or nests too deep"
        : err instanceof Error
          ? err.message.split("\n")[0]
          : String(err);
    throw new TypeError(`${req.method} ${req.path}: the request body cannot be written as JSON: ${why}`);
  }
}
