/**
 * The HTTP API (docs/api.md) from the browser. Same origin: the server serves this UI at `/` and
 * the API under `/v1`. Errors come back as ApiError with the server's `{code, message}`.
 */

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }

  /** `INVALID_SCHEDULE: cron … out of range …`, as shown inline. */
  toString() {
    return `${this.code}: ${this.message}`;
  }
}

/** One request; resolves to the parsed JSON body (null for 204), rejects with ApiError. */
export async function api(method, path, body) {
  const init = { method, headers: { accept: "application/json" } };
  // Every write says JSON, even without a body: the server refuses writes that do not (docs/security.md).
  if (method !== "GET") init.headers["content-type"] = "application/json";
  if (body !== undefined) {
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (err) {
    throw new ApiError(0, "UNAVAILABLE", `the server does not answer (${err.message})`);
  }
  const text = await res.text();
  let parsed = null;
  try {
    parsed = text === "" ? null : JSON.parse(text);
  } catch {
    parsed = null;
  }
  if (!res.ok) {
    if (parsed && typeof parsed.code === "string") throw new ApiError(res.status, parsed.code, parsed.message ?? "");
    throw new ApiError(res.status, `HTTP_${res.status}`, text.slice(0, 200) || res.statusText);
  }
  return parsed;
}

const enc = encodeURIComponent;

/** Every schedule, following cursors (at most `maxPages` pages of 1,000). */
export async function listSchedules(maxPages = 5) {
  const all = [];
  let cursor = null;
  for (let page = 0; page < maxPages; page++) {
    const q = cursor === null ? "" : `&cursor=${enc(cursor)}`;
    const body = await api("GET", `/v1/schedules?limit=1000${q}`);
    all.push(...body.schedules);
    cursor = body.next_cursor;
    if (cursor === null) return { schedules: all, truncated: false };
  }
  return { schedules: all, truncated: true };
}

export const getSchedule = (id) => api("GET", `/v1/schedules/${enc(id)}`);
export const createSchedule = (body) => api("POST", "/v1/schedules", body);
export const deleteSchedule = (id) => api("DELETE", `/v1/schedules/${enc(id)}`);
export const pauseSchedule = (id, note) => api("POST", `/v1/schedules/${enc(id)}/pause`, note ? { note } : {});
export const resumeSchedule = (id) => api("POST", `/v1/schedules/${enc(id)}/resume`, {});
export const triggerSchedule = (id) => api("POST", `/v1/schedules/${enc(id)}/trigger`, {});
export const listOccurrences = (id, limit = 500) =>
  api("GET", `/v1/schedules/${enc(id)}/occurrences?limit=${limit}`).then((b) => b.occurrences);
export const listExecutions = (id, limit = 20) =>
  api("GET", `/v1/executions?schedule_id=${enc(id)}&limit=${limit}`).then((b) => b.executions);
export const listWorkflows = () => api("GET", "/v1/workflows").then((b) => b.workflows);
