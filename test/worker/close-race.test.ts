/**
 * Worker.close() while the server hands its poll a task (docs/workflows.md § Closing): the task
 * comes back in the poll's answer and is released, or stays pending; it is never left leased to a
 * worker that is gone. Before, close() gave up its poll on its own side: a task the server handed
 * that poll at that moment was neither run nor handed back until its lease ran out (a tester: 30 s
 * and a second attempt, in 4 of 6 rounds of a start beside a close). A real server and real Workers.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer as createTcpServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { defineWorkflow, OrbitClient, Worker } from "../../src/index.js";
import { type RunningServer, startServer } from "../../src/server/server.js";

let server: RunningServer;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "orbit-close-race-"));
  server = await startServer({ port: 0, dataDir: dir, logger: "silent" });
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const Job = defineWorkflow({ name: "Job", version: "1.0.0", run: async () => ({ ok: true }) });
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

it("a task handed to a poll while its worker closes is released, not left leased to the gone worker", async () => {
  const client = new OrbitClient({ server: server.url });
  const outcomes = new Set<string>();
  for (let round = 0; round < 8; round++) {
    const worker = new Worker({ server: server.url, workflows: [Job], logger: quiet, workerId: `closing-${round}` });
    const working = worker.run();
    await worker.registered();
    // Its first poll is out (the server counts it live from the poll's arrival).
    for (;;) {
      const { workers } = (await (await fetch(`${server.url}/v1/workers`)).json()) as {
        workers: { worker_id: string; status: string }[];
      };
      if (workers.some((w) => w.worker_id === `closing-${round}` && w.status === "live")) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    // Closed 0-7 ms after the start is sent: somewhere in there the start's transaction hands the
    // task to the parked poll, whose answer is then on its way as close() runs (a race, not a timing).
    const starting = client.startExecution({ workflow: "Job", input: {} });
    await new Promise((resolve) => setTimeout(resolve, round));
    await worker.close();
    await working;
    const created = await starting;
    const id = created.value.execution_id;
    const { events } = (await (await fetch(`${server.url}/v1/executions/${encodeURIComponent(id)}/events`)).json()) as {
      events: { type: string }[];
    };
    const types = events.map((e) => e.type);
    // Handed to the closing worker before it closed: run (close waits for it). Handed as it closed:
    // handed back at once. Never handed: still pending. Never leased to it with nothing after.
    expect(
      [
        ["WorkflowCreated", "WorkflowTaskStarted", "WorkflowCompleted"],
        ["WorkflowCreated", "WorkflowTaskStarted", "WorkflowTaskReleased"],
        ["WorkflowCreated"],
      ],
      `round ${round}: ${types.join(", ")}`,
    ).toContainEqual(types);
    outcomes.add(types.at(-1) as string);
  }
  // The race was met: some round's task was handed to the closing poll.
  expect([...outcomes].some((o) => o !== "WorkflowCreated")).toBe(true);
});

it("a close while the worker registers against a server that does not answer ends the registration and sends no leave", async () => {
  // It waited out the registration's 30 s, then sent a leave to the server that had never
  // answered and waited 5 s more for it (a tester): a worker that never polled has nothing to leave.
  const seen: string[] = [];
  const held: Socket[] = [];
  const stalled = createTcpServer((socket) => {
    held.push(socket);
    socket.on("data", (chunk: Buffer) => {
      const line = chunk.toString().split("\r\n")[0];
      if (line?.startsWith("POST ")) seen.push(line.split(" ")[1] ?? "");
    });
  });
  await new Promise<void>((resolve) => stalled.listen(0, "127.0.0.1", resolve));
  const port = (stalled.address() as { port: number }).port;
  try {
    const worker = new Worker({ server: `http://127.0.0.1:${port}`, workflows: [Job], logger: quiet });
    const working = worker.run();
    const registering = worker.registered().then(
      () => "registered",
      (err: unknown) => String(err),
    );
    while (!seen.includes("/v1/workflows")) await new Promise((resolve) => setImmediate(resolve));
    await worker.close();
    await working;
    expect(await registering).toMatch(/closed before it registered/);
    expect(seen).toEqual(["/v1/workflows"]);
  } finally {
    for (const socket of held) socket.destroy();
    stalled.close();
  }
});

it("a redirect at the worker's server rejects run(), as a refused token does", async () => {
  // It was taken for a server away: "registering the workflows failed; retrying every 1 s", forever.
  const { createServer: createHttpServer } = await import("node:http");
  const front = createHttpServer((req, res) => {
    res.writeHead(308, { location: `https://orbit.example${req.url}` });
    res.end();
  });
  await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
  const port = (front.address() as { port: number }).port;
  try {
    const worker = new Worker({ server: `http://127.0.0.1:${port}`, workflows: [Job], logger: quiet });
    await expect(worker.run()).rejects.toThrow(
      /answered with a redirect \(308 to "https:\/\/orbit\.example\/v1\/workflows"\)/,
    );
    await worker.close();
  } finally {
    front.close();
  }
});
