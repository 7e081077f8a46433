/**
 * The access matrix test's two inputs (test/api/access-matrix.test.ts): the documented matrix,
 * read from the table of docs/security.md § Access matrix, and one valid request per operation of
 * the OpenAPI document with the objects it needs (a schedule, an execution, a leased task) made
 * fresh by an admin and a worker allowed everything.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Answer } from "./helpers.js";

export type Action = "schedule" | "start" | "read" | "cancel";
export type Rule =
  | { kind: "open" }
  | { kind: "any"; lists?: Action }
  | { kind: "action"; action: Action }
  | { kind: "its" }
  /** A task route: its workflows, and only on a lease its identity took. */
  | { kind: "its-leases" }
  | { kind: "never" };
export interface Documented {
  client: Rule;
  worker: Rule;
  /** What a caller needs to see the stored object (its denials are then 404, not 403). */
  unseenWithout?: Action;
}

function rule(cell: string): Rule {
  const text = cell.trim();
  if (text === "open") return { kind: "open" };
  if (text === "403") return { kind: "never" };
  if (text === "its workflows") return { kind: "its" };
  if (text === "its workflows, leases it took") return { kind: "its-leases" };
  const action = /`(schedule|start|read|cancel)`/.exec(text)?.[1] as Action | undefined;
  if (text.startsWith("any")) return action ? { kind: "any", lists: action } : { kind: "any" };
  if (action && !text.startsWith("any")) return { kind: "action", action };
  throw new Error(`docs/security.md § Access matrix: cannot read the cell "${text}"`);
}

/** `METHOD /path` → the documented rules, from docs/security.md. */
export function documentedMatrix(): Map<string, Documented> {
  const doc = readFileSync(join(import.meta.dirname, "../../docs/security.md"), "utf8");
  const start = doc.indexOf("## Access matrix");
  const section = doc.slice(start, doc.indexOf("\n## ", start + 1));
  const out = new Map<string, Documented>();
  for (const line of section.split("\n")) {
    const m = /^\| `([A-Z]+ [^`]+)`\s*\|([^|]+)\|([^|]+)\|([^|]+)\|$/.exec(line);
    if (m === null) continue;
    const unseen = /`(schedule|read)`/.exec(m[4]!)?.[1] as Action | undefined;
    if (unseen === undefined && m[4]!.trim() !== "-") throw new Error(`cannot read the cell "${m[4]}"`);
    out.set(m[1]!, { client: rule(m[2]!), worker: rule(m[3]!), ...(unseen ? { unseenWithout: unseen } : {}) });
  }
  return out;
}

export type Caller = (method: string, path: string, body?: unknown) => Promise<Answer>;

export interface Fixtures {
  admin: Caller;
  /** The worker identity that leases the tasks a request reports on. */
  fixtureWorker: Caller;
  unique(prefix: string): string;
}

export interface Request {
  method: string;
  path: string;
  body?: unknown;
}

export const FIXTURE_WORKER = "fixture-worker";
const offer = (workflow: string) => [{ name: workflow, version: "1.0.0", max_attempts: 1, backoff_ms: 1000 }];

async function ok(r: Promise<Answer>, what: string): Promise<Answer> {
  const a = await r;
  if (a.status >= 300) throw new Error(`fixture ${what}: ${a.status} ${a.text}`);
  return a;
}

async function schedule(f: Fixtures, workflow: string): Promise<string> {
  const id = f.unique("s");
  await ok(f.admin("POST", "/v1/schedules", { schedule_id: id, workflow, interval: "1h", input: {} }), "schedule");
  return id;
}

async function execution(f: Fixtures, workflow: string): Promise<string> {
  const id = f.unique("e");
  await ok(f.admin("POST", "/v1/executions", { execution_id: id, workflow, input: {} }), "execution");
  return id;
}

/** A RUNNING execution whose task the fixture worker holds. */
async function leasedTask(f: Fixtures, workflow: string): Promise<{ task: string; execution: string }> {
  const id = await execution(f, workflow);
  const poll = await ok(
    f.fixtureWorker("POST", "/v1/worker/poll", {
      worker_id: FIXTURE_WORKER,
      workflows: offer(workflow),
      max_tasks: 100,
      wait_ms: 0,
    }),
    "poll",
  );
  const task = (poll.body.tasks as { task_id: string; execution_id: string }[]).find((t) => t.execution_id === id);
  if (task === undefined) throw new Error(`fixture: the task of ${id} was not leased`);
  return { task: task.task_id, execution: id };
}

/** One valid request for the operation `METHOD /path` on `workflow`, with what it needs made first. */
export async function requestFor(op: string, workflow: string, f: Fixtures): Promise<Request> {
  const [method, template] = op.split(" ") as [string, string];
  const w = FIXTURE_WORKER;
  const withTask = async (extra: object, prepare?: (task: string, execution: string) => Promise<void>) => {
    const { task, execution } = await leasedTask(f, workflow);
    if (prepare) await prepare(task, execution);
    return { path: template.replace("{task_id}", task), body: { worker_id: w, ...extra }, task };
  };
  const cancelRequested = async (_task: string, execution: string): Promise<void> => {
    await ok(f.admin("POST", `/v1/executions/${execution}/cancel`, { reason: "matrix" }), "cancel");
  };
  switch (op) {
    case "POST /v1/schedules":
      return { method, path: template, body: { schedule_id: f.unique("s"), workflow, interval: "1h", input: {} } };
    case "POST /v1/schedules/batch":
    case "POST /v1/schedules/validate":
    case "POST /v1/schedules/apply":
      return {
        method,
        path: template,
        body: { schedules: [{ schedule_id: f.unique("s"), workflow, interval: "1h" }] },
      };
    case "PATCH /v1/schedules/{id}":
      return { method, path: template.replace("{id}", await schedule(f, workflow)), body: { description: "matrix" } };
    case "POST /v1/schedules/{id}/backfill":
      return {
        method,
        path: template.replace("{id}", await schedule(f, workflow)),
        body: { start_at: "2026-11-15T10:00:00Z", end_at: "2026-11-15T11:00:00Z" },
      };
    case "POST /v1/workflows":
      return { method, path: template, body: { name: workflow, version: "1.0.0" } };
    case "PATCH /v1/workflows/{name}/settings":
      return { method, path: template.replace("{name}", workflow), body: { run_timeout: "1h" } };
    case "POST /v1/executions":
      return { method, path: template, body: { execution_id: f.unique("e"), workflow, input: {} } };
    case "POST /v1/executions/{id}/cancel":
      return { method, path: template.replace("{id}", await execution(f, workflow)), body: { reason: "matrix" } };
    case "POST /v1/executions/{id}/retry": {
      const id = await execution(f, workflow);
      await ok(f.admin("POST", `/v1/executions/${id}/cancel`, {}), "cancel");
      return { method, path: template.replace("{id}", id), body: {} };
    }
    case "GET /v1/preview":
      return { method, path: `${template}?cron=0%20*%20*%20*%20*` };
    case "POST /v1/worker/poll":
      return {
        method,
        path: template,
        body: { worker_id: "matrix", workflows: offer(workflow), max_tasks: 1, wait_ms: 0 },
      };
    case "POST /v1/worker/heartbeat":
    case "POST /v1/worker/release": {
      const t = await withTask({});
      return { method, path: template, body: { worker_id: w, task_ids: [t.task] } };
    }
    case "POST /v1/worker/leave":
      return { method, path: template, body: { worker_id: f.unique("leaver") } };
    case "POST /v1/worker/complete": {
      const t = await withTask({});
      return { method, path: template, body: { worker_id: w, tasks: [{ task_id: t.task, result: { forged: true } }] } };
    }
    case "POST /v1/worker/tasks/{task_id}/steps":
      return { method, ...(await withTask({ step: "a", seq: 1, result: 1, compensable: true })) };
    case "POST /v1/worker/tasks/{task_id}/complete":
      return { method, ...(await withTask({ result: { forged: true } })) };
    case "POST /v1/worker/tasks/{task_id}/fail":
      return { method, ...(await withTask({ error: { message: "matrix" }, retryable: false })) };
    case "POST /v1/worker/tasks/{task_id}/continue":
      return { method, ...(await withTask({ input: {} })) };
    case "POST /v1/worker/tasks/{task_id}/compensating":
      return { method, ...(await withTask({}, cancelRequested)) };
    case "POST /v1/worker/tasks/{task_id}/compensations":
      return {
        method,
        ...(await withTask({ step: "a" }, async (task, execution) => {
          await cancelRequested(task, execution);
          await ok(f.fixtureWorker("POST", `/v1/worker/tasks/${task}/compensating`, { worker_id: w }), "compensating");
        })),
      };
    case "POST /v1/worker/tasks/{task_id}/cancelled":
      return { method, ...(await withTask({}, cancelRequested)) };
    default:
      break;
  }
  // Routes on a stored object with no body to speak of.
  let path = template;
  if (path.startsWith("/v1/schedules/{id}")) path = path.replace("{id}", await schedule(f, workflow));
  if (path.startsWith("/v1/executions/{id}")) path = path.replace("{id}", await execution(f, workflow));
  path = path.replace("{name}", workflow).replace("{version}", "0.0.1");
  if (path.includes("{")) throw new Error(`no fixture for ${op}`);
  const lists = method === "GET" && ["/v1/schedules", "/v1/executions"].includes(path);
  return { method, path: lists ? `${path}?limit=1000` : path, ...(method === "GET" ? {} : { body: {} }) };
}

/** The workflows an answer shows: every `workflow` value, and the `name` of `workflows` entries. */
export function workflowsShown(body: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(body)) for (const v of body) workflowsShown(v, out);
  else if (body !== null && typeof body === "object") {
    for (const [k, v] of Object.entries(body)) {
      if (k === "workflow" && typeof v === "string") out.add(v);
      else if (k === "workflows" && Array.isArray(v)) {
        for (const w of v)
          if (typeof (w as { name?: unknown })?.name === "string") out.add((w as { name: string }).name);
      } else workflowsShown(v, out);
    }
  }
  return out;
}
