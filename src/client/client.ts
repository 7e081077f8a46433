/**
 * OrbitClient: one method per route of docs/api.md, over the global fetch. Shared by the CLI and
 * the worker SDK. Refusals come back as OrbitError (the server's code and message); a server that
 * cannot be reached as ServerUnreachableError.
 */
import { OrbitError } from "../domain/errors.js";
import type { JsonObject } from "../domain/json.js";
import {
  bearerToken,
  type HttpOptions,
  type KeyedWriteOptions,
  type RequestOptions,
  request,
  serverUrl,
  type WriteOptions,
} from "./http.js";
import type {
  ApplyRequestJson,
  ApplyResultJson,
  BackfillResultJson,
  DoctorReportJson,
  ExecutionEventJson,
  ExecutionJson,
  ExecutionPage,
  ExecutionSummaryPage,
  OccurrencePage,
  RegisterWorkflowBody,
  ScheduleCreateBody,
  ScheduleJson,
  SchedulePage,
  ScheduleSettingsBody,
  ScheduleUpdateBody,
  StartExecutionBody,
  TriggerResultJson,
  WorkerJson,
  WorkflowJson,
  WorkflowVersionsJson,
} from "./types.js";

export type OrbitClientOptions = ClientSettings &
  (
    | {
        /** The server, e.g. `http://127.0.0.1:7233` (a trailing slash is ignored), as a Worker's `server`. */
        server: string;
        baseUrl?: undefined;
      }
    | {
        /** The same as `server` (its first name, kept). */
        baseUrl: string;
        server?: undefined;
      }
  );

export interface ClientSettings {
  /** Bearer token for a server with access control; default none. */
  token?: string | null | undefined;
  /** Milliseconds before a request is given up; default 30 000. */
  timeoutMs?: number | undefined;
  /** The fetch to use; default the global one. */
  fetch?: typeof fetch | undefined;
}

export interface PageQuery {
  cursor?: string;
  limit?: number;
}

export interface ListSchedulesQuery extends PageQuery {
  workflow?: string;
  state?: string;
}

export interface ListExecutionsQuery extends PageQuery {
  workflow?: string;
  status?: string;
  schedule_id?: string;
}

/** A POST that answers 201 for something new and 200 for something that already existed. */
export interface Created<T> {
  created: boolean;
  value: T;
}

/** The longest path segment sent: above every id's bound, far below a request line's. */
const MAX_SEGMENT = 1000;

/**
 * One path segment. An empty one, `.` and `..` are refused before sending: a URL resolves them as path steps
 * even encoded, so `/v1/schedules/..` would be `/v1/` (the server refuses them as ids too).
 */
function seg(id: string): string {
  // Empty, the path would name the list (GET /v1/schedules/ answered a page, read as a schedule).
  if (id === "") throw new OrbitError("INVALID_ARGUMENT", "an empty id names nothing: give the id");
  // A 100 KB id was sent and came back as "the headers are too large" (a tester): no Orbit id is
  // that long (an execution id is at most 255 characters, a schedule id 100). An OrbitError, so the
  // CLI exits 1 as for the server's refusal it stands for (docs/cli.md § Exit codes), not 2.
  if (id.length > MAX_SEGMENT) {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `the id "${id.slice(0, 40)}…" is ${id.length} characters long; an Orbit id is at most 255 (a schedule id 100)`,
    );
  }
  if (id === "." || id === "..") {
    throw new OrbitError("INVALID_ARGUMENT", `"${id}" cannot be an id: a URL reads it as a path step`);
  }
  return encodeURIComponent(id);
}

/** Empty pages in a row, each with a next cursor, that end a listing (CursorTrail). */
const MAX_EMPTY_PAGES = 100;

/**
 * The cursors of one listing, to follow `next_cursor` safely: a server that answers a cursor it
 * gave before (`{"schedules":[],"next_cursor":"c"}` for every page) was followed forever (a tester),
 * and so was one answering empty pages each with a new cursor. An Orbit server's pages hold every
 * row up to their limit, so {@link MAX_EMPTY_PAGES} empty pages in a row end the listing.
 */
export class CursorTrail {
  private readonly seen = new Set<string>();
  private empty = 0;

  /**
   * The cursor of the next page, given the one a page of `rows` rows answered, or undefined at the
   * end; an OrbitError if it came before, or after too many empty pages in a row.
   */
  next(cursor: string | null | undefined, rows: number): string | undefined {
    if (cursor === null || cursor === undefined) return undefined;
    this.empty = rows === 0 ? this.empty + 1 : 0;
    if (this.empty >= MAX_EMPTY_PAGES) {
      throw new OrbitError(
        "INTERNAL",
        `the server answered ${MAX_EMPTY_PAGES} empty pages in a row, each with a next cursor: following them might never end, so the listing stopped`,
      );
    }
    if (this.seen.has(cursor)) {
      const shown = cursor.length > 100 ? `${cursor.slice(0, 100)}…` : cursor;
      throw new OrbitError(
        "INTERNAL",
        `the server answered the same page cursor twice (${JSON.stringify(shown)}): following it would never end, so the listing stopped`,
      );
    }
    this.seen.add(cursor);
    return cursor;
  }
}

/**
 * How long the answer to a large write (a backfill's 10,000 starts, an apply of 10,000 schedules) is
 * awaited when the client has no timeout of its own: such a write may take longer than a request's
 * 30 s on a busy PostgreSQL (a backfill a minute and a half; an apply of 10,000 on the edge of 30 s,
 * failed with "did not answer in time" behind a lock; testers).
 */
const LONG_WRITE_TIMEOUT_MS = 600_000;

export class OrbitClient {
  readonly baseUrl: string;
  private readonly http: HttpOptions;

  constructor(options: OrbitClientOptions) {
    const { server, baseUrl, ...settings } = options;
    this.baseUrl = serverUrl(server ?? baseUrl, "OrbitClient");
    this.http = {
      ...settings,
      baseUrl: this.baseUrl,
      token: bearerToken(settings.token, "OrbitClient"),
      requireOrbit: true,
      unansweredWrites: true,
    };
  }

  /** The answer's body, a JSON object (holding `list` as a list, when given) or a TypeError ({@link shaped}). */
  private async call<T>(req: RequestOptions, list?: string): Promise<T> {
    return shaped<T>((await request<T>(this.http, req)).body, req, list);
  }

  // Schedules

  createSchedule(settings: ScheduleCreateBody, opts: KeyedWriteOptions = {}): Promise<ScheduleJson> {
    return this.call({ ...opts, method: "POST", path: "/v1/schedules", body: settings });
  }

  /** Checks a whole schedules file as `apply` would write it (POST /v1/schedules/validate); writes nothing. */
  validateSchedules(
    schedules: readonly ScheduleSettingsBody[],
  ): Promise<{ valid: number; actions: ("create" | "update")[] }> {
    return this.call({ method: "POST", path: "/v1/schedules/validate", body: { schedules } });
  }

  /**
   * Makes the schedules match a file in one transaction (POST /v1/schedules/apply): all or nothing;
   * `prune` deletes only the scope's schedules; `dry_run` plans and rolls back.
   */
  async applySchedules(body: ApplyRequestJson): Promise<ApplyResultJson> {
    const timeoutMs = this.http.timeoutMs ?? LONG_WRITE_TIMEOUT_MS;
    const req: RequestOptions = { method: "POST", path: "/v1/schedules/apply", body };
    return shaped((await request<ApplyResultJson>({ ...this.http, timeoutMs }, req)).body, req, "steps");
  }

  /** Creates up to 1000 schedules in one request and one transaction, all or none (docs/api.md). */

  createSchedules(
    settings: readonly ScheduleCreateBody[],
    opts: KeyedWriteOptions = {},
  ): Promise<{ created: number; schedule_ids: string[] }> {
    return this.call({ ...opts, method: "POST", path: "/v1/schedules/batch", body: { schedules: settings } });
  }

  listSchedules(query: ListSchedulesQuery = {}): Promise<SchedulePage> {
    return this.call({ method: "GET", path: "/v1/schedules", query: { ...query } }, "schedules");
  }

  /** Every schedule, following `next_cursor` page by page. */
  async listAllSchedules(query: Omit<ListSchedulesQuery, "cursor"> = {}): Promise<ScheduleJson[]> {
    const all: ScheduleJson[] = [];
    const trail = new CursorTrail();
    let cursor: string | undefined;
    do {
      const page = await this.listSchedules({ ...query, cursor, limit: query.limit ?? 1000 });
      all.push(...page.schedules);
      cursor = trail.next(page.next_cursor, page.schedules.length);
    } while (cursor !== undefined);
    return all;
  }

  getSchedule(id: string): Promise<ScheduleJson> {
    return this.call({ method: "GET", path: `/v1/schedules/${seg(id)}` });
  }

  updateSchedule(id: string, patch: ScheduleUpdateBody, opts: WriteOptions = {}): Promise<ScheduleJson> {
    return this.call({ ...opts, method: "PATCH", path: `/v1/schedules/${seg(id)}`, body: patch });
  }

  async deleteSchedule(id: string, opts: WriteOptions = {}): Promise<void> {
    // 204, no body.
    await request(this.http, { ...opts, method: "DELETE", path: `/v1/schedules/${seg(id)}` });
  }

  pauseSchedule(id: string, body: { note?: string } = {}, opts: WriteOptions = {}): Promise<ScheduleJson> {
    return this.call({ ...opts, method: "POST", path: `/v1/schedules/${seg(id)}/pause`, body });
  }

  resumeSchedule(id: string, body: { catch_up?: boolean } = {}, opts: WriteOptions = {}): Promise<ScheduleJson> {
    return this.call({ ...opts, method: "POST", path: `/v1/schedules/${seg(id)}/resume`, body });
  }

  triggerSchedule(id: string, body: { input?: JsonObject } = {}, opts: WriteOptions = {}): Promise<TriggerResultJson> {
    return this.call({ ...opts, method: "POST", path: `/v1/schedules/${seg(id)}/trigger`, body });
  }

  async backfillSchedule(
    id: string,
    body: { start_at: string; end_at: string },
    opts: WriteOptions = {},
  ): Promise<BackfillResultJson> {
    const req: RequestOptions = { ...opts, method: "POST", path: `/v1/schedules/${seg(id)}/backfill`, body };
    // `orbit schedule backfill` said the server did not answer while it started them all (a tester).
    const timeoutMs = this.http.timeoutMs ?? LONG_WRITE_TIMEOUT_MS;
    return shaped((await request<BackfillResultJson>({ ...this.http, timeoutMs }, req)).body, req);
  }

  listOccurrences(id: string, query: PageQuery = {}): Promise<OccurrencePage> {
    return this.call(
      { method: "GET", path: `/v1/schedules/${seg(id)}/occurrences`, query: { ...query } },
      "occurrences",
    );
  }

  // Workflows

  async registerWorkflow(body: RegisterWorkflowBody, opts: KeyedWriteOptions = {}): Promise<Created<WorkflowJson>> {
    const req: RequestOptions = { ...opts, method: "POST", path: "/v1/workflows", body };
    const res = await request<WorkflowJson>(this.http, req);
    return { created: res.status === 201, value: shaped(res.body, req) };
  }

  async listWorkflows(): Promise<WorkflowJson[]> {
    return (await this.call<{ workflows: WorkflowJson[] }>({ method: "GET", path: "/v1/workflows" }, "workflows"))
      .workflows;
  }

  getWorkflow(name: string): Promise<WorkflowVersionsJson> {
    return this.call({ method: "GET", path: `/v1/workflows/${seg(name)}` }, "versions");
  }

  /** Deprecates (or, with `false`, undeprecates) a version: "latest" skips it (docs/outcomes.md). */
  deprecateWorkflow(
    name: string,
    version: string,
    deprecated = true,
    opts: KeyedWriteOptions = {},
  ): Promise<WorkflowJson> {
    const action = deprecated ? "deprecate" : "undeprecate";
    return this.call({
      ...opts,
      method: "POST",
      path: `/v1/workflows/${seg(name)}/versions/${seg(version)}/${action}`,
      body: {},
    });
  }

  // Executions

  async startExecution(body: StartExecutionBody, opts: KeyedWriteOptions = {}): Promise<Created<ExecutionJson>> {
    const req: RequestOptions = { ...opts, method: "POST", path: "/v1/executions", body };
    const res = await request<ExecutionJson>(this.http, req);
    return { created: res.status === 201, value: shaped(res.body, req) };
  }

  listExecutions(query: ListExecutionsQuery = {}): Promise<ExecutionPage> {
    return this.call({ method: "GET", path: "/v1/executions", query: { ...query } }, "executions");
  }

  /**
   * {@link listExecutions} in the summary view: without input and result, the error's type,
   * message (cut to 1,000 characters) and step (docs/api.md § Executions). A server before it
   * refuses the `view` parameter (INVALID_ARGUMENT).
   */
  listExecutionSummaries(query: ListExecutionsQuery = {}): Promise<ExecutionSummaryPage> {
    return this.call({ method: "GET", path: "/v1/executions", query: { ...query, view: "summary" } }, "executions");
  }

  getExecution(id: string): Promise<ExecutionJson> {
    return this.call({ method: "GET", path: `/v1/executions/${seg(id)}` });
  }

  async executionEvents(id: string): Promise<ExecutionEventJson[]> {
    const page = await this.call<{ events: ExecutionEventJson[] }>(
      { method: "GET", path: `/v1/executions/${seg(id)}/events` },
      "events",
    );
    return page.events;
  }

  cancelExecution(id: string, body: { reason?: string } = {}, opts: KeyedWriteOptions = {}): Promise<ExecutionJson> {
    return this.call({ ...opts, method: "POST", path: `/v1/executions/${seg(id)}/cancel`, body });
  }

  /** Re-runs a FAILED or CANCELLED execution as its next run (docs/outcomes.md § Retry). */
  retryExecution(id: string, opts: KeyedWriteOptions = {}): Promise<ExecutionJson> {
    return this.call({ ...opts, method: "POST", path: `/v1/executions/${seg(id)}/retry`, body: {} });
  }

  async listWorkers(): Promise<WorkerJson[]> {
    return (await this.call<{ workers: WorkerJson[] }>({ method: "GET", path: "/v1/workers" }, "workers")).workers;
  }

  // Other

  health(): Promise<{ status: string }> {
    return this.call({ method: "GET", path: "/healthz" });
  }

  ready(): Promise<{ status: string; role: string }> {
    return this.call({ method: "GET", path: "/readyz" });
  }

  /** The caller's identity and grants (`GET /v1/me`; an open server answers `name: null`). */
  me(): Promise<{ name: string | null; kind: "client" | "worker" }> {
    return this.call({ method: "GET", path: "/v1/me" });
  }

  /** The server's `orbit doctor` checks (GET /v1/doctor). */
  doctor(): Promise<DoctorReportJson> {
    return this.call({ method: "GET", path: "/v1/doctor" }, "checks");
  }
}

/**
 * `body`, if it is a JSON object holding `list` as a list (and a page's `next_cursor` as text or
 * null); else a TypeError naming what it is. An Orbit-labelled answer that was empty, `null`, `[]`
 * or another object came out of the CLI as `Cannot read properties of undefined (reading
 * 'executions')` or `page.schedules is not iterable` (a tester); the CLI reports a TypeError as an
 * answer of another shape, in one line (src/cli/main.ts).
 */
function shaped<T>(body: unknown, req: RequestOptions, list?: string): T {
  const what = `the answer to ${req.method} ${req.path}`;
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    const is =
      body === undefined ? "empty" : body === null ? "null" : Array.isArray(body) ? "a list" : `a ${typeof body}`;
    throw new TypeError(`${what} is ${is}, not a JSON object`);
  }
  if (list === undefined) return body as T;
  const fields = body as Record<string, unknown>;
  if (!Array.isArray(fields[list])) throw new TypeError(`${what} has no ${list} (list)`);
  const cursor = fields.next_cursor;
  if (cursor !== undefined && cursor !== null && typeof cursor !== "string") {
    throw new TypeError(`${what} has no next_cursor (text or null)`);
  }
  return body as T;
}
