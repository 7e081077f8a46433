/**
 * What the Worker's `concurrency` counts (docs/workflows.md § Concurrency): runs whose code is
 * running. A run that returned and whose completion is still on its way no longer holds its slot,
 * so the next poll goes out beside that report; its lease is still heartbeated until the report is
 * answered; and no more than `concurrency` runs' code ever runs at once. The server is a stub of
 * the worker protocol that holds each complete until the test lets it answer.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { afterEach, expect, it } from "vitest";
import type { TaskJson } from "../../src/domain/worker-protocol.js";
import { defineWorkflow, Worker } from "../../src/index.js";
import { taskJson } from "./hung-code.js";

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

function task(n: number): TaskJson {
  return {
    ...taskJson({ task_id: `t${n}`, execution_id: `e${n}`, workflow: "Slots", input: { n }, heartbeat_ms: 50 }),
    traceparent: undefined as unknown as string,
  };
}

interface Stub {
  url: string;
  /** Each poll's max_tasks, in order. */
  polls: number[];
  /** Task ids of completes the stub holds unanswered. */
  held: string[];
  /** Answers every held complete, and every later one at once. */
  answer(): void;
  /** Task ids named by heartbeats. */
  heartbeats: Set<string>;
  /** Task ids handed back by release. */
  released: string[];
  /** Resolves once `n` polls arrived. */
  pollsArrived(n: number): Promise<void>;
  /** Resolves once heartbeats named every one of `ids`. */
  heartbeated(ids: readonly string[]): Promise<void>;
}

let server: Server | null = null;
let worker: Worker | null = null;
afterEach(async () => {
  await worker?.close();
  await new Promise((resolve) => server?.close(resolve));
  server = worker = null;
});

/** A few turns of the event loop: a run that takes a while without a timer. */
async function work(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Hands out `tasks` one per poll (then parks polls until closed), and holds every complete. */
async function stub(tasks: TaskJson[], o: { refuseRelease?: boolean } = {}): Promise<Stub> {
  const s: Stub = {
    url: "",
    polls: [],
    held: [],
    heartbeats: new Set(),
    released: [],
    answer: () => undefined,
    pollsArrived: () => Promise.resolve(),
    heartbeated: () => Promise.resolve(),
  };
  const beatWaiters: { ids: readonly string[]; resolve: () => void }[] = [];
  s.heartbeated = (ids) =>
    new Promise((resolve) => {
      beatWaiters.push({ ids, resolve });
      checkBeats();
    });
  const checkBeats = (): void => {
    for (const w of [...beatWaiters]) {
      if (w.ids.every((id) => s.heartbeats.has(id))) {
        beatWaiters.splice(beatWaiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  const holding: (() => void)[] = [];
  const pollWaiters: { n: number; resolve: () => void }[] = [];
  const parked: ServerResponse[] = [];
  let hold = true;
  s.answer = () => {
    hold = false;
    for (const a of holding.splice(0)) a();
  };
  s.pollsArrived = (n) =>
    new Promise((resolve) => {
      if (s.polls.length >= n) resolve();
      else pollWaiters.push({ n, resolve });
    });
  const json = (res: ServerResponse, body: unknown): void => {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  };
  server = createServer((req: IncomingMessage, res) => {
    let text = "";
    req.on("data", (c: Buffer) => {
      text += c.toString();
    });
    req.on("end", () => {
      const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      if (req.url === "/v1/workflows") return json(res, {});
      if (req.url === "/v1/worker/heartbeat") {
        const ids = body.task_ids as string[];
        for (const id of ids) s.heartbeats.add(id);
        checkBeats();
        return json(res, {
          tasks: Object.fromEntries(ids.map((id) => [id, { lease: "held", cancel_requested: null }])),
        });
      }
      if (req.url === "/v1/worker/poll" && body.max_tasks === 0) {
        // A full worker's watch for cancels (docs/workflows.md § Cancellation): it takes no task.
        parked.push(res);
        return;
      }
      if (req.url === "/v1/worker/poll") {
        s.polls.push(body.max_tasks as number);
        for (const w of [...pollWaiters]) {
          if (s.polls.length >= w.n) {
            pollWaiters.splice(pollWaiters.indexOf(w), 1);
            w.resolve();
          }
        }
        const next = tasks.shift();
        if (next) return json(res, { tasks: [next] });
        parked.push(res);
        return;
      }
      if (req.url === "/v1/worker/complete") {
        const items = body.tasks as { task_id: string }[];
        const reply = () =>
          json(res, { tasks: Object.fromEntries(items.map((t) => [t.task_id, { status: "COMPLETED" }])) });
        if (!hold) return reply();
        s.held.push(...items.map((t) => t.task_id));
        holding.push(reply);
        return;
      }
      if (req.url === "/v1/worker/release") {
        if (o.refuseRelease)
          return res
            .writeHead(400, { "content-type": "application/json" })
            .end('{"code":"INVALID_ARGUMENT","message":"no"}');
        s.released.push(...((body.task_ids as string[]) ?? []));
        return json(res, { released: body.task_ids });
      }
      res.writeHead(404).end();
    });
  });
  server.on("close", () => {
    for (const res of parked) res.destroy();
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  s.url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
  return s;
}

/** The test's workflow: each run takes a few turns of the event loop; `most` is the most runs inside at once. */
function counted(onRan: (n: number) => void): {
  Slots: ReturnType<typeof defineWorkflow<{ n: number }>>;
  most: () => number;
} {
  let inside = 0;
  let most = 0;
  const Slots = defineWorkflow<{ n: number }>({
    name: "Slots",
    version: "1.0.0",
    async run(_ctx, input) {
      inside++;
      most = Math.max(most, inside);
      await work();
      inside--;
      onRan(input.n);
      return { n: input.n };
    },
  });
  return { Slots, most: () => most };
}

it("a run whose completion is on its way frees its slot: the next poll goes out beside the report", async () => {
  const s = await stub([task(1), task(2)]);
  const ran: number[] = [];
  const { Slots, most } = counted((n) => ran.push(n));
  worker = new Worker({ server: s.url, workflows: [Slots], concurrency: 1, logger: quiet });
  void worker.run();
  // Task 1 ran and its complete is held; the worker polled again (for its one slot) and ran task 2.
  await s.pollsArrived(3);
  expect(ran).toEqual([1, 2]);
  expect(s.polls).toEqual([1, 1, 1]);
  expect(most()).toBe(1);
  // Neither run's report is answered yet (task 2's waits behind task 1's, one complete request at
  // a time): both leases are still heartbeated.
  await s.heartbeated(["t1", "t2"]);
  expect(s.held).toEqual(["t1"]);
  s.answer();
});

it("never runs more than `concurrency` runs' code at once", async () => {
  const s = await stub(Array.from({ length: 12 }, (_, i) => task(i + 1)));
  let ran = 0;
  let allRan: () => void = () => undefined;
  const twelve = new Promise<void>((resolve) => {
    allRan = resolve;
  });
  const { Slots, most } = counted(() => {
    if (++ran === 12) allRan();
  });
  worker = new Worker({ server: s.url, workflows: [Slots], concurrency: 3, logger: quiet });
  void worker.run();
  await twelve;
  expect(most()).toBe(3);
  // Every completion is still held: the slots were freed by the runs ending, not by the answers.
  await s.pollsArrived(13);
  s.answer();
});

/**
 * A worker (closeTimeoutMs 20) on `s` whose run never settles and ignores its signal; resolves once
 * the run started, with the worker's run() and its warnings.
 */
async function runStuck(s: Stub): Promise<{ stuck: Worker; run: Promise<void>; warnings: string[] }> {
  let started: () => void = () => undefined;
  const running = new Promise<void>((resolve) => {
    started = resolve;
  });
  const Stuck = defineWorkflow({
    name: "Slots",
    version: "1.0.0",
    run: () => {
      started();
      return new Promise<never>(() => undefined);
    },
  });
  const warnings: string[] = [];
  const logger = { ...quiet, warn: (m: string) => void warnings.push(m) };
  const stuck = new Worker({ server: s.url, workflows: [Stuck], closeTimeoutMs: 20, logger });
  worker = stuck; // closed after the test
  const run = stuck.run();
  await running;
  return { stuck, run, warnings };
}

it("close() hands back code still running after closeTimeoutMs and resolves, even if that code never settles", async () => {
  const s = await stub([task(1)]);
  const { stuck, run, warnings } = await runStuck(s);
  await s.heartbeated(["t1"]);
  // Before, close() waited for run(), which waited for the run: forever.
  await stuck.close();
  await run;
  expect(warnings).toContain(
    "closing: tasks not finished after closeTimeoutMs (code still running, or a report the server did not take) were handed back",
  );
  expect(s.released).toEqual(["t1"]);
});

it("says when close() could not hand its tasks back (the server away), instead of nothing", async () => {
  const s = await stub([task(1)], { refuseRelease: true });
  const { stuck, run, warnings } = await runStuck(s);
  await stuck.close();
  await run;
  expect(warnings).toContain(
    "closing: could not hand the tasks back to the server; they run again, elsewhere, when their leases end (30 s)",
  );
});

it("says a run it handed back at close ended, not that it lost the lease", async () => {
  const s = await stub([task(1)]);
  let started: () => void = () => undefined;
  const running = new Promise<void>((resolve) => {
    started = resolve;
  });
  let finish: () => void = () => undefined;
  let signal: AbortSignal | undefined;
  const Slow = defineWorkflow({
    name: "Slots",
    version: "1.0.0",
    run: (ctx) => {
      signal = ctx.signal;
      started();
      return new Promise<{ ok: boolean }>((resolve) => {
        finish = () => resolve({ ok: true });
      });
    },
  });
  const lines: string[] = [];
  const logger = {
    info: (m: string) => void lines.push(`info ${m}`),
    warn: (m: string) => void lines.push(`warn ${m}`),
    error: (m: string) => void lines.push(`error ${m}`),
  };
  worker = new Worker({ server: s.url, workflows: [Slow], closeTimeoutMs: 20, logger });
  const run = worker.run();
  await running;
  await s.heartbeated(["t1"]);
  await worker.close();
  await run;
  // close() says at once what it waits for (a deploy's SIGTERM was silent until "worker closed").
  expect(lines).toContain("info closing: waiting for the running executions to finish their current step");
  // The code's signal says the worker handed the task back, not that a lease was lost to anyone.
  expect(signal?.aborted).toBe(true);
  expect(String(signal?.reason)).toBe(
    "LeaseLostError: the worker is closing: it handed task t1 back to the server (closeTimeoutMs passed), and the execution runs again elsewhere",
  );
  // The run ends after close() handed it back: it warned "lost the task's lease" for a task this
  // worker gave back itself.
  finish();
  const said = "info a run handed back at close ended; its outcome is not reported (the task runs again elsewhere)";
  while (!lines.includes(said)) await new Promise((resolve) => setImmediate(resolve));
  expect(lines.filter((l) => l.includes("lost the task's lease"))).toEqual([]);
});

it("a worker closed before it ran neither registers nor says it polls", async () => {
  const s = await stub([]);
  const infos: string[] = [];
  const logger = { ...quiet, info: (m: string) => void infos.push(m) };
  const W = defineWorkflow({ name: "Slots", version: "1.0.0", run: async () => ({}) });
  worker = new Worker({ server: s.url, workflows: [W], logger });
  await worker.close();
  await worker.run();
  expect(infos).not.toContain("worker polling");
  expect(s.polls).toEqual([]);
});
