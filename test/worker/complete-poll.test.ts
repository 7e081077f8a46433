/**
 * The Worker's side of complete and poll (docs/workflows.md § Complete and poll), against a stub
 * server that scripts the protocol: each batch of completes asks to lease the slots it frees (plus
 * the free ones), the tasks answered in `leased` run at once without a poll, the worker never runs
 * more than its concurrency, and it long-polls only when a batch brought nothing. A server older
 * than the feature (it refuses the unknown fields) gets the same batch again without them.
 */
import { createServer, type Server } from "node:http";
import { afterEach, expect, it } from "vitest";
import type { TaskJson } from "../../src/domain/worker-protocol.js";
import { defineWorkflow, Worker } from "../../src/index.js";

let server: Server | null = null;
let worker: Worker | null = null;
afterEach(async () => {
  await worker?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = worker = null;
});

const task = (id: string): TaskJson => ({
  task_id: id,
  execution_id: `e-${id}`,
  workflow: "Noop",
  version: "1.0.0",
  run: 1,
  attempt: 1,
  input: {},
  trigger: null,
  schedule_id: null,
  status: "RUNNING",
  cancel_requested: null,
  steps: [],
  lease_ms: 30_000,
  heartbeat_ms: 5_000,
});

interface Call {
  path: string;
  body: Record<string, unknown>;
}

/** Answers polls and completes with `answer`; a poll it answers undefined is held until the worker closes. */
async function stub(answer: (call: Call, calls: Call[]) => { status: number; body: unknown } | undefined) {
  const calls: Call[] = [];
  const waiters: { until: () => boolean; resolve: () => void }[] = [];
  /** Resolves once the calls so far satisfy `until` (checked as each call arrives). */
  const seen = (until: () => boolean) =>
    new Promise<void>((resolve) => (until() ? resolve() : waiters.push({ until, resolve })));
  server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => {
      raw += c.toString();
    });
    req.on("end", () => {
      const call = { path: req.url ?? "", body: raw ? (JSON.parse(raw) as Record<string, unknown>) : {} };
      if (call.path === "/v1/workflows") {
        res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify(call.body));
        return;
      }
      calls.push(call);
      const a = answer(call, calls);
      for (const w of waiters.splice(0)) (w.until() ? w.resolve : () => waiters.push(w))();
      if (a !== undefined) res.writeHead(a.status, { "content-type": "application/json" }).end(JSON.stringify(a.body));
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return { url: `http://127.0.0.1:${port}`, calls, seen };
}

const completed = (body: Record<string, unknown>) =>
  Object.fromEntries((body.tasks as { task_id: string }[]).map((t) => [t.task_id, { status: "COMPLETED" }]));

function startWorker(url: string, ran: string[], concurrency: number): { peak: () => number; done: Promise<void> } {
  let running = 0;
  let peak = 0;
  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const Noop = defineWorkflow({
    name: "Noop",
    version: "1.0.0",
    run: async (ctx) => {
      running++;
      peak = Math.max(peak, running);
      ran.push(ctx.executionId);
      await new Promise((r) => setImmediate(r));
      running--;
      if (ran.length === 6) finish();
      return null;
    },
  });
  const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
  worker = new Worker({ server: url, workflows: [Noop], concurrency, logger: quiet, workerId: "w1" });
  void worker.run();
  return { peak: () => peak, done };
}

it("runs the tasks leased with its completes at once, within its concurrency, and long-polls only when none came", async () => {
  const leases: Record<number, string[]> = { 0: ["c", "d"], 1: ["e", "f"] };
  let completes = 0;
  const s = await stub((call) => {
    if (call.path === "/v1/worker/poll") {
      const polls = s.calls.filter((c) => c.path === "/v1/worker/poll").length;
      return polls === 1 ? { status: 200, body: { tasks: [task("a"), task("b")] } } : undefined;
    }
    const leased = (leases[completes++] ?? []).map(task);
    return { status: 200, body: { tasks: completed(call.body), leased } };
  });
  const ran: string[] = [];
  const w = startWorker(s.url, ran, 2);
  await w.done;
  await s.seen(() => s.calls.filter((c) => c.path === "/v1/worker/poll").length === 2); // the long poll
  expect(ran).toEqual(["e-a", "e-b", "e-c", "e-d", "e-e", "e-f"]);
  expect(w.peak()).toBeLessThanOrEqual(2);
  const shape = s.calls.map((c) => [
    c.path,
    ((c.body.tasks as { task_id: string }[] | undefined) ?? []).map((t) => t.task_id).join(","),
    c.body.max_tasks ?? null,
  ]);
  // One poll, then each batch of two completes asks for two tasks; the third brings none, and only
  // then does the worker poll again (held by the stub).
  expect(shape).toEqual([
    ["/v1/worker/poll", "", 2],
    ["/v1/worker/complete", "a,b", 2],
    ["/v1/worker/complete", "c,d", 2],
    ["/v1/worker/complete", "e,f", 2],
    ["/v1/worker/poll", "", 2],
  ]);
  for (const c of s.calls.filter((x) => x.path === "/v1/worker/complete")) {
    expect(c.body.workflows).toEqual([{ name: "Noop", version: "1.0.0", max_attempts: 3, backoff_ms: 1000 }]);
  }
});

it("against a server without complete and poll, sends the batch again without the lease and plain batches after", async () => {
  const refusal = {
    status: 400,
    body: {
      code: "INVALID_ARGUMENT",
      message: 'unknown field "workflows" in the request body (known: worker_id, tasks)',
    },
  };
  let polls = 0;
  const s = await stub((call) => {
    if (call.path === "/v1/worker/poll") {
      polls++;
      if (polls > 3) return undefined;
      return { status: 200, body: { tasks: [task(`a${polls}`), task(`b${polls}`)] } };
    }
    if ("workflows" in call.body) return refusal;
    return { status: 200, body: { tasks: completed(call.body) } };
  });
  const ran: string[] = [];
  const w = startWorker(s.url, ran, 2);
  await w.done;
  await s.seen(() => polls === 4);
  const completes = s.calls.filter((c) => c.path === "/v1/worker/complete");
  expect(completes.map((c) => "workflows" in c.body)).toEqual([true, false, false, false]);
  expect(polls).toBe(4);
});
