/**
 * A heartbeat's answer is about the runs it named: a retry leased to the same worker under the same
 * task id is not stopped by the answer to a heartbeat sent during the attempt before it. The server
 * answers "lost" to a heartbeat that reaches it while the task waits for its retry; the worker
 * applied that answer to whatever ran under the id when it arrived, the next attempt, which it
 * stopped mid-step: its outcome went unreported, its lease ran out 30 s later and its step ran a
 * third time (a tester: 45 times in 35 minutes of failing schedules). The server is a stub of the
 * worker protocol that holds the first heartbeat naming the task until the retry runs.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import { afterEach, expect, it } from "vitest";
import { defineWorkflow, Worker } from "../../src/index.js";
import { capturing, taskJson, turn } from "./hung-code.js";

let server: Server | null = null;
let worker: Worker | null = null;
afterEach(async () => {
  await worker?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = worker = null;
});

it("does not stop a retry for the 'lost' answer to a heartbeat sent during the attempt before", async () => {
  const attempts = [1, 2].map((attempt) =>
    taskJson({ task_id: "t1", execution_id: "e1", workflow: "Retried", attempt, heartbeat_ms: 20 }),
  );
  /** The answer of the held heartbeat, once one is held. */
  const held: { beat: ((lease: "held" | "lost") => void) | null } = { beat: null };
  /** The attempts' reports: attempt 1's failure, then attempt 2's completion. */
  const completes: { attempt: number; result?: unknown; error?: unknown }[] = [];
  const parked: ServerResponse[] = [];
  /** The attempts whose code started, in order. */
  const started: number[] = [];
  server = createServer((req, res) => {
    let text = "";
    req.on("data", (c: Buffer) => {
      text += c.toString();
    });
    req.on("end", () => {
      const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      const json = (answer: unknown) =>
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
      if (req.url === "/v1/workflows") return json({});
      if (req.url === "/v1/worker/heartbeat") {
        const ids = body.task_ids as string[];
        const answer = (lease: "held" | "lost") =>
          json({ tasks: Object.fromEntries(ids.map((id) => [id, { lease, cancel_requested: null }])) });
        // The first one naming t1 is held: it reaches the server between the attempts.
        if (held.beat === null && ids.includes("t1") && completes.length === 0) held.beat = answer;
        else answer("held");
        return;
      }
      if (req.url === "/v1/worker/poll") {
        // Attempt 1 first, attempt 2 once attempt 1's failure is reported, then nothing.
        const next =
          started.length === 0 ? attempts[0] : started.length === 1 && completes.length === 1 ? attempts[1] : undefined;
        if (next === undefined || body.max_tasks === 0) return void parked.push(res);
        return json({ tasks: [next] });
      }
      if (req.url === "/v1/worker/tasks/t1/fail") {
        completes.push({ attempt: body.attempt as number, error: body.error });
        return json({ execution_id: "e1", status: "RUNNING", cancel_reason: null });
      }
      if (req.url === "/v1/worker/complete") {
        const items = body.tasks as { task_id: string; attempt: number; result?: unknown; error?: unknown }[];
        completes.push(...items);
        return json({ tasks: Object.fromEntries(items.map((t) => [t.task_id, { status: "COMPLETED" }])) });
      }
      res.writeHead(404).end();
    });
  });
  server.on("close", () => {
    for (const res of parked) res.destroy();
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };

  let finishSecond: () => void = () => undefined;
  const second = new Promise<void>((resolve) => {
    finishSecond = resolve;
  });
  const Retried = defineWorkflow({
    name: "Retried",
    version: "1.0.0",
    retry: { maxAttempts: 3 },
    async run(ctx) {
      started.push(ctx.attempt);
      if (ctx.attempt === 1) {
        // Fails once its heartbeat is on its way (held by the stub).
        while (held.beat === null) await new Promise((resolve) => setTimeout(resolve, 5));
        throw new Error("first attempt fails");
      }
      await second;
      return { attempt: ctx.attempt };
    },
  });
  const { lines, logger } = capturing();
  worker = new Worker({ server: `http://127.0.0.1:${port}`, workflows: [Retried], logger, concurrency: 1 });
  void worker.run();
  while (!started.includes(2)) await turn();
  // The answer to the heartbeat sent during attempt 1 arrives while attempt 2 runs.
  held.beat?.("lost");
  for (let i = 0; i < 50; i++) await turn();
  finishSecond();
  while (completes.length < 2 && !lines.some(([, m]) => m.startsWith("lost the task's lease"))) await turn();
  expect(lines.filter(([, m]) => /lease|no longer this worker's/.test(m))).toEqual([]);
  expect(completes.map((c) => [c.attempt, c.result ?? null])).toEqual([
    [1, null],
    [2, { attempt: 2 }],
  ]);
});
