/**
 * A poll whose answer never came (docs/workflows.md § Protocol): the worker's next poll names the
 * tasks it runs (`held`), so that the server can answer again what it leased to the lost answer;
 * before, such tasks waited out their lease and ran as the next attempt. A server from before
 * `held` refuses it as an unknown field, and the worker polls on without it. The server is a stub
 * of the worker protocol that cuts the first poll's connection instead of answering.
 */
import { createServer, type Server } from "node:http";
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

const Lost = defineWorkflow({ name: "Lost", version: "1.0.0", run: async () => "done" });

/** Polls as the stub saw them, after the first was cut; `answer` says what each later poll gets. */
async function afterACutPoll(
  answer: (body: Record<string, unknown>) => { status: number; json: unknown } | null,
): Promise<{ polls: Record<string, unknown>[]; completed: string[] }> {
  const seen = { polls: [] as Record<string, unknown>[], completed: [] as string[], cut: false };
  server = createServer((req, res) => {
    let text = "";
    req.on("data", (c: Buffer) => {
      text += c.toString();
    });
    req.on("end", () => {
      const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      const json = (status: number, value: unknown) =>
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
      if (req.url === "/v1/worker/poll" && body.max_tasks !== 0) {
        if (!seen.cut) {
          seen.cut = true;
          return void req.socket.destroy();
        }
        seen.polls.push(body);
        const a = answer(body);
        return a === null ? undefined : json(a.status, a.json);
      }
      if (req.url === "/v1/worker/complete") {
        for (const t of (body.tasks as { task_id: string }[] | undefined) ?? []) seen.completed.push(t.task_id);
        return json(200, {
          tasks: Object.fromEntries(
            ((body.tasks as { task_id: string }[]) ?? []).map((t) => [t.task_id, { ok: true }]),
          ),
        });
      }
      if (req.url === "/v1/worker/heartbeat") return json(200, { tasks: {} });
      if (req.url === "/v1/worker/poll") return undefined; // a watch poll: held
      json(200, {});
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const { logger } = capturing();
  worker = new Worker({ server: `http://127.0.0.1:${port}`, workflows: [Lost], logger, concurrency: 2 });
  void worker.run();
  return seen;
}

it("names what it runs in the poll after one that got no answer, and runs what the server answers again", async () => {
  const task = taskJson({ task_id: "t1", execution_id: "e1", workflow: "Lost" });
  const seen = await afterACutPoll((body) =>
    body.held !== undefined ? { status: 200, json: { tasks: [task] } } : null,
  );
  while (seen.polls.length === 0) await turn();
  expect(seen.polls[0]?.held).toEqual([]);
  while (seen.completed.length === 0) await turn();
  expect(seen.completed).toEqual(["t1"]);
  // The answer came: the polls after it say nothing of what the worker holds.
  while (seen.polls.length < 2) await turn();
  expect(seen.polls[1]?.held).toBeUndefined();
});

it("polls on without `held` when a server from before it refuses the field", async () => {
  const refusal = { code: "INVALID_ARGUMENT", message: 'unknown field "held" in the request body' };
  const seen = await afterACutPoll((body) =>
    body.held !== undefined ? { status: 400, json: refusal } : { status: 200, json: { tasks: [] } },
  );
  while (seen.polls.length < 3) await turn();
  expect(seen.polls.map((p) => p.held)).toEqual([[], undefined, undefined]);
});
