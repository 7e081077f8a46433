/**
 * A heartbeat answered "lost" while the run's code waits on the SDK's own report of a step (a
 * network that healed after a partition longer than the lease: both were held, and the heartbeat's
 * answer came first): the worker warned that the run's code had not returned and held a slot until
 * it did, and 1–10 ms later the report's refusal ended the run and freed the slot (a tester). That
 * stuck slot did not exist: nothing is said until the run's code goes on after the refusal (it
 * caught it), which the next heartbeat says. The server is a stub of the worker protocol that holds
 * the step's report until the worker has heard "lost" twice, then refuses it (409).
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import { afterEach, expect, it } from "vitest";
import { defineWorkflow, Worker } from "../../src/index.js";
import type { WorkflowDefinition } from "../../src/worker/workflow.js";
import { capturing, taskJson, turn } from "./hung-code.js";

let server: Server | null = null;
let worker: Worker | null = null;
afterEach(async () => {
  await worker?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = worker = null;
});

const STUCK = "a run's task is no longer this worker's";

/** Runs `def`'s one task against the stub; resolves once the step's report was refused. */
async function refusedAfterLost(def: WorkflowDefinition): Promise<ReturnType<typeof capturing>["lines"]> {
  const task = taskJson({ task_id: "t1", execution_id: "e1", workflow: def.name, heartbeat_ms: 20 });
  const parked: ServerResponse[] = [];
  const state = { leased: false, step: null as ServerResponse | null, lost: 0, refused: false };
  server = createServer((req, res) => {
    let text = "";
    req.on("data", (c: Buffer) => {
      text += c.toString();
    });
    req.on("end", () => {
      const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      const json = (answer: unknown, status = 200) =>
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(answer));
      if (req.url === "/v1/worker/poll") {
        if (state.leased || body.max_tasks === 0) return void parked.push(res);
        state.leased = true;
        return json({ tasks: [task] });
      }
      if (req.url === "/v1/worker/heartbeat") {
        // "lost" once the step's report is held (it reached the server after the lease's end).
        const lease = state.step !== null || state.refused ? "lost" : "held";
        if (lease === "lost") state.lost++;
        json({ tasks: { t1: { lease, cancel_requested: null } } });
        if (state.lost === 2 && state.step !== null) {
          state.step
            .writeHead(409, { "content-type": "application/json" })
            .end(JSON.stringify({ code: "CONFLICT", message: "the lease on task t1 has ended" }));
          state.step = null;
          state.refused = true;
        }
        return;
      }
      if (req.url === "/v1/worker/tasks/t1/steps") state.step = res;
      else json({});
    });
  });
  server.on("close", () => {
    for (const res of parked) res.destroy();
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const { lines, logger } = capturing();
  worker = new Worker({ server: `http://127.0.0.1:${port}`, workflows: [def], logger, concurrency: 1 });
  void worker.run();
  while (!state.refused) await turn();
  return lines;
}

it("says no stuck slot while the run waits on its step's report, and drops the run once the report is refused", async () => {
  let ended: unknown = null;
  const Reported = defineWorkflow({
    name: "Reported",
    version: "1.0.0",
    async run(ctx) {
      try {
        return await ctx.step("one", () => 1);
      } catch (err) {
        ended = err;
        throw err;
      }
    },
  });
  const lines = await refusedAfterLost(Reported);
  while (!lines.some(([, m]) => m.startsWith("lost the task's lease"))) await turn();
  // Heartbeats answered "lost" after the refusal too, while the run had ended: still nothing said.
  const lost = lines.length;
  for (let i = 0; i < 50 && lines.length === lost; i++) await new Promise((r) => setTimeout(r, 5));
  expect((ended as Error).name).toBe("LeaseLostError");
  expect(lines.filter(([, m]) => m.startsWith(STUCK))).toEqual([]);
  expect(lines.map(([level, m]) => [level, m])).toEqual([
    ["info", "worker polling"],
    [
      "warn",
      "lost the task's lease (it ran past the lease, or its execution ended meanwhile); its outcome is not reported",
    ],
  ]);
});

it("says the stuck slot at the next heartbeat when the run's code goes on after the refusal", async () => {
  const waiting: { finish: (() => void) | null } = { finish: null };
  const Caught = defineWorkflow({
    name: "Caught",
    version: "1.0.0",
    async run(ctx) {
      await ctx.step("one", () => 1).catch(() => undefined);
      await new Promise<void>((resolve) => {
        waiting.finish = resolve;
      });
      return { ok: true };
    },
  });
  const lines = await refusedAfterLost(Caught);
  while (!lines.some(([, m]) => m.startsWith(STUCK))) await turn();
  expect(lines.filter(([, m]) => m.startsWith(STUCK))).toEqual([
    ["warn", expect.stringContaining("its code has not returned"), expect.objectContaining({ execution_id: "e1" })],
  ]);
  while (waiting.finish === null) await turn();
  waiting.finish();
});
