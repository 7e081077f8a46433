/**
 * A fetch that answers from a routing function, so the commands run in-process against canned
 * server answers; every request is recorded (method, path with query, headers, body).
 */
import { type RunOptions, runCli } from "./run-cli.js";

export interface SeenRequest {
  /** `http://host:port` the request went to. */
  origin: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
}

export type Route = (req: SeenRequest) => { status: number; body?: unknown } | undefined;

export class FakeServer {
  readonly requests: SeenRequest[] = [];
  constructor(private readonly route: Route) {}

  readonly fetch = (async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(String(input));
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, key) => {
      headers[key] = value;
    });
    const req: SeenRequest = {
      origin: url.origin,
      method: init?.method ?? "GET",
      path: `${url.pathname}${url.search}`,
      headers,
      body: typeof init?.body === "string" ? JSON.parse(init.body) : undefined,
    };
    this.requests.push(req);
    const answer = this.route(req) ?? { status: 404, body: { code: "NOT_FOUND", message: `no route ${req.path}` } };
    const text = answer.body === undefined ? null : JSON.stringify(answer.body);
    // As an Orbit server answers: the client refuses a 2xx answer without Orbit-Version.
    return new Response(text, {
      status: answer.status,
      headers: { "content-type": "application/json", "orbit-version": "0.1.0" },
    });
  }) as typeof fetch;

  run(argv: string[], opts: RunOptions = {}) {
    return runCli(argv, { ...opts, fetch: this.fetch, env: { ORBIT_SERVER: "http://orbit.test:7233", ...opts.env } });
  }
}
