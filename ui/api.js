// @ts-check
/**
 * The HTTP API (docs/api.md) from the browser. Same origin: the server serves this UI at `/` and
 * the API under `/v1`, and every request goes to `v1/…` relative to the page ({@link apiUrl}), so
 * the UI also works behind a reverse proxy that serves it under a path prefix (`/orbit/`). Errors
 * come back as ApiError with the server's `{code, message}`.
 *
 * - The bearer token of the sign-in lives in sessionStorage (this tab only, gone when it closes).
 * - Every state-changing request sends `content-type: application/json` and a JSON body.
 * - GETs are conditional: the last ETag of each URL is sent as If-None-Match, and a 304 answer
 *   reuses the body kept here, so an unchanged refresh costs a few hundred bytes.
 */

import { jsonText, parseJson } from "./json-text.js";

const TOKEN_KEY = "orbit.token";

/** @returns {string | null} */
export function getToken() {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** @param {string | null} token */
export function setToken(token) {
  if (token === null || token === "") sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
  cache.clear();
}

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} code
   * @param {string} message
   */
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
    /**
     * A write's TIMEOUT only: its request, not aborted, which settles when the server answers after
     * all (ui/actions.js `keyed` learns the outcome from it).
     * @type {Promise<any> | undefined}
     */
    this.late = undefined;
  }

  /** `INVALID_SCHEDULE: cron … out of range …`, as shown inline. */
  toString() {
    return `${this.code}: ${this.message}`;
  }
}

/** @type {Map<string, {etag: string, body: any}>} */
const cache = new Map();
/** At most this many URLs keep their last body (each list page and filter is one URL). */
const CACHE_MAX = 200;

/**
 * How long a request waits for the server's answer. A server that stopped answering (SIGSTOP, a
 * hung proxy), as against one refusing, was never reported: the status line said nothing for as
 * long as the browser waited (40 s and more).
 */
export const ANSWER_MS = 10_000;
/**
 * How long a backfill's answer is awaited: it starts up to 10,000 occurrences in one request and
 * the server bounds it; 10,000 took 92 s on a busy PostgreSQL, so after ANSWER_MS the dialog said
 * TIMEOUT and never showed the result (a tester). The CLI's client waits as long.
 */
export const BACKFILL_ANSWER_MS = 600_000;

/** "10 s", "10 min": how long a request was awaited. @param {number} ms */
const waitText = (ms) => (ms >= 120_000 && ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`);

/**
 * The requests of one view where only the latest counts: a slow search's late answer drew its rows
 * under a newer search's box and URL (a tester). `latest(ask)` runs `ask(current)` and answers
 * `{value}`, or null when a later call began before this one answered; its error too, since only
 * the latest says whether the server answers. `current()` tells `ask` whether it is still the latest.
 * @returns {<T>(ask: (current: () => boolean) => Promise<T>) => Promise<{value: T} | null>}
 */
export function latestOnly() {
  let asked = 0;
  return async (ask) => {
    const mine = ++asked;
    const current = () => mine === asked;
    try {
      const value = await ask(current);
      return current() ? { value } : null;
    } catch (err) {
      if (!current()) return null;
      throw err;
    }
  };
}

/** Hooks the app sets: what to do when the server asks for a token. */
export const hooks = {
  /** @type {(err: ApiError) => void} */
  unauthenticated: () => {},
};

/**
 * One request; resolves to the parsed JSON body (null for 204), rejects with ApiError.
 * @param {"GET" | "POST" | "PATCH" | "DELETE"} method
 * @param {string} path
 * @param {unknown} [body]
 * @param {Record<string, string>} [extraHeaders]
 * @param {number} [answerMs] how long the answer is awaited
 * @returns {Promise<any>}
 */
export async function api(method, path, body, extraHeaders = {}, answerMs = ANSWER_MS) {
  /** @type {Record<string, string>} */
  const headers = { accept: "application/json", ...extraHeaders };
  const token = getToken();
  if (token !== null) headers.authorization = `Bearer ${token}`;
  /** @type {RequestInit} */
  const init = { method, headers, cache: "no-store" };
  const cached = method === "GET" ? cache.get(path) : undefined;
  if (cached) headers["if-none-match"] = cached.etag;
  if (method !== "GET") {
    headers["content-type"] = "application/json";
    // Numbers as given (json-text.js): an input's `120.0` is saved as 120.0, not 120.
    init.body = jsonText(body ?? {});
  }
  const waited = waitText(answerMs);
  if (method === "GET") {
    // A read is only asked again by the next refresh: dropped at once.
    const controller = new AbortController();
    init.signal = controller.signal;
    const timer = setTimeout(() => controller.abort(), answerMs);
    try {
      return await answer(method, path, init, cached);
    } catch (err) {
      if (controller.signal.aborted) throw new ApiError(0, "TIMEOUT", `the server did not answer in ${waited}`);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }
  // A write is not aborted: the server may have it already and apply it whatever the browser
  // does, so the page says it does not know, and the caller's refresh shows what happened.
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  const sent = answer(method, path, init, cached);
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => {
      const err = new ApiError(
        0,
        "TIMEOUT",
        `the server did not answer in ${waited}: the change may or may not have been applied`,
      );
      err.late = sent;
      reject(err);
    }, answerMs);
  });
  try {
    return await Promise.race([sent, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Where a request for the API path `/v1/…` goes: `./v1/…`, beside the page. An absolute `/v1/…`
 * left the prefix of a proxy that serves the UI under `/orbit/` (the page and its files loaded,
 * relative, but every request was a 404: an empty table and "could not refresh: HTTP_404").
 * @param {string} path
 */
export function apiUrl(path) {
  return `.${path}`;
}

/**
 * Sends one request and reads its answer (api's errors and ETag cache).
 * @param {string} method
 * @param {string} path
 * @param {RequestInit} init
 * @param {{etag: string, body: any} | undefined} cached
 */
async function answer(method, path, init, cached) {
  let res;
  try {
    res = await fetch(apiUrl(path), init);
  } catch (err) {
    if (init.signal?.aborted) throw err;
    throw new ApiError(0, "UNAVAILABLE", `the server does not answer (${/** @type {Error} */ (err).message})`);
  }
  if (res.status === 304 && cached) return cached.body;
  const text = await res.text();
  let parsed = null;
  try {
    parsed = text === "" ? null : parseJson(text);
  } catch {
    parsed = null;
  }
  if (!res.ok) {
    const err =
      parsed && typeof parsed.code === "string"
        ? new ApiError(res.status, parsed.code, parsed.message ?? "")
        : new ApiError(res.status, `HTTP_${res.status}`, text.slice(0, 200) || res.statusText);
    if (res.status === 401) hooks.unauthenticated(err);
    throw err;
  }
  const etag = res.headers.get("etag");
  if (method === "GET" && etag !== null && etag.startsWith("W/")) {
    if (cache.size >= CACHE_MAX) cache.delete(/** @type {string} */ (cache.keys().next().value));
    cache.set(path, { etag, body: parsed });
  }
  return parsed;
}

const enc = encodeURIComponent;

/**
 * `?a=1&b=x` from the defined, non-empty values.
 * @param {Record<string, string | number | boolean | null | undefined>} params
 */
export function query(params) {
  const parts = Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== null && v !== "" && v !== false)
    .map(([k, v]) => `${enc(k)}=${enc(String(v))}`);
  return parts.length === 0 ? "" : `?${parts.join("&")}`;
}

/** @param {Record<string, string | number | boolean | null | undefined>} params */
export const searchSchedules = (params) => api("GET", `/v1/schedules${query(params)}`);
/** @param {string} id */
export const getSchedule = (id) => api("GET", `/v1/schedules/${enc(id)}`);
/** @param {object} body */
export const createSchedule = (body) => api("POST", "/v1/schedules", body);
/**
 * @param {string} id
 * @param {object} body
 * @param {number} revision the revision the form was filled from (If-Match: 412 when it moved)
 */
export const patchSchedule = (id, body, revision) =>
  api("PATCH", `/v1/schedules/${enc(id)}`, body, { "if-match": `"${revision}"` });
/**
 * @param {string} id
 * @param {string} key the Idempotency-Key of this one user action: a repeat is answered 204 again, not 404
 */
export const deleteSchedule = (id, key) => api("DELETE", `/v1/schedules/${enc(id)}`, {}, { "idempotency-key": key });
/** @param {string} id @param {string} note */
export const pauseSchedule = (id, note) => api("POST", `/v1/schedules/${enc(id)}/pause`, note ? { note } : {});
/**
 * @param {string} id
 * @param {boolean} [catchUp] start the paused span's occurrences as after an outage (`catch_up`)
 */
export const resumeSchedule = (id, catchUp = false) =>
  api("POST", `/v1/schedules/${enc(id)}/resume`, catchUp ? { catch_up: true } : {});
/**
 * @param {string} id
 * @param {string} key the Idempotency-Key of this one user action: a repeat is answered once
 * @param {unknown} [input] this run's input instead of the schedule's (left out: the schedule's)
 */
export const triggerSchedule = (id, key, input = undefined) =>
  api("POST", `/v1/schedules/${enc(id)}/trigger`, input === undefined ? {} : { input }, { "idempotency-key": key });
/** @param {string} id @param {string} from @param {string} to */
export const backfillSchedule = (id, from, to) =>
  api("POST", `/v1/schedules/${enc(id)}/backfill`, { start_at: from, end_at: to }, {}, BACKFILL_ANSWER_MS);
/** @param {string} id */
export const listOccurrences = (id, limit = 500) => occurrencePage(id, limit).then((b) => b.occurrences);
/**
 * One page of the ledger, newest recorded first: `{occurrences, next_cursor}`.
 * @param {string} id
 * @param {number} limit
 * @param {string | null} [cursor]
 */
export const occurrencePage = (id, limit, cursor = null) =>
  api("GET", `/v1/schedules/${enc(id)}/occurrences${query({ limit, cursor })}`);
/**
 * A page of executions in the summary view: without input and result, which no list shows (50
 * executions with 900 KB results made a page 43 MB, read again on each refresh), the error's type,
 * message (cut to 1,000 characters) and step only; an execution's page reads it whole.
 * @param {Record<string, string | number | boolean | null | undefined>} params
 */
export const listExecutions = (params) => api("GET", `/v1/executions${query({ ...params, view: "summary" })}`);
/** @param {string} id */
export const getExecution = (id) => api("GET", `/v1/executions/${enc(id)}`);
/** @param {string} id */
export const executionEvents = (id) => api("GET", `/v1/executions/${enc(id)}/events`).then((b) => b.events);
/** @param {string} id @param {string} reason */
export const cancelExecution = (id, reason) =>
  api("POST", `/v1/executions/${enc(id)}/cancel`, reason ? { reason } : {});
/**
 * @param {string} id
 * @param {string} key the Idempotency-Key of this one user action
 */
export const retryExecution = (id, key) =>
  api("POST", `/v1/executions/${enc(id)}/retry`, {}, { "idempotency-key": key });

/**
 * A key unique to one user action, for `Idempotency-Key`. crypto.randomUUID exists only in a
 * secure context (https or localhost), and the UI is also served over plain http.
 */
export function actionKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `ui-${[...bytes].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}
export const listWorkflows = () => api("GET", "/v1/workflows").then((b) => b.workflows);
export const listWorkers = () => api("GET", "/v1/workers");
export const whoAmI = () => api("GET", "/v1/me");
/** @param {Record<string, string | number | undefined>} params */
export const previewTiming = (params) => api("GET", `/v1/preview${query(params)}`);
