/**
 * Each Worker names its process on its polls (`instance`, docs/workflows.md § Protocol), so that
 * the redelivery after a poll that got no answer (`held`) hands it its own tasks only, not those of
 * another process sharing its worker id (a tester's two "billing" workers ran every step twice). A
 * server from before `instance` refuses it as an unknown field: the worker asks again at once
 * without it, and sends no `held` either until it offers the field again a minute later. The server
 * is a stub that records the polls.
 */
import { createServer, type Server } from "node:http";
import { afterEach, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { defineWorkflow, Worker } from "../../src/index.js";
import { capturing, turn } from "./hung-code.js";

let server: Server | null = null;
const workers: Worker[] = [];
afterEach(async () => {
  for (const w of workers.splice(0)) await w.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = null;
});

const W = defineWorkflow({ name: "W", version: "1.0.0", run: async () => "done" });

type Body = Record<string, unknown>;

/**
 * A stub whose task polls are recorded and answered by `answer` (`"cut"`: the connection is
 * destroyed, the answer lost); the watch polls (`max_tasks: 0`) are held.
 */
async function stub(answer: (body: Body, n: number) => "cut" | { status: number; json: unknown }): Promise<{
  url: string;
  polls: Body[];
}> {
  const polls: Body[] = [];
  server = createServer((req, res) => {
    let text = "";
    req.on("data", (c: Buffer) => {
      text += c.toString();
    });
    req.on("end", () => {
      const body = text ? (JSON.parse(text) as Body) : {};
      const json = (status: number, value: unknown) =>
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
      if (req.url === "/v1/worker/poll" && body.max_tasks !== 0) {
        polls.push(body);
        const a = answer(body, polls.length);
        return a === "cut" ? void req.socket.destroy() : json(a.status, a.json);
      }
      if (req.url === "/v1/worker/poll") return undefined;
      json(200, { tasks: {} });
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, polls };
}

function start(url: string, clock: ManualClock, workerId = "billing"): Worker {
  const worker = new Worker({ server: url, workflows: [W], logger: capturing().logger, clock, workerId });
  workers.push(worker);
  void worker.run();
  return worker;
}

/** Until `polls` has `n` entries, moving the worker's clock past its 1 s wait after a failed poll. */
async function pollsReach(clock: ManualClock, polls: Body[], n: number): Promise<void> {
  while (polls.length < n) {
    if (clock.pendingSleeps > 0) clock.advance(1000);
    await turn();
  }
}

it("names its process on every poll, one id per Worker, and with it `held` after a lost answer", async () => {
  const clock = new ManualClock(Date.UTC(2026, 11, 9, 8, 0, 0));
  const s = await stub((_body, n) => (n === 1 ? "cut" : { status: 200, json: { tasks: [] } }));
  start(s.url, clock);
  await pollsReach(clock, s.polls, 3);
  const instance = s.polls[0]?.instance;
  expect(instance).toMatch(/^[0-9a-f-]{36}$/);
  expect(s.polls.map((p) => [p.instance, p.held])).toEqual([
    [instance, undefined],
    [instance, []],
    [instance, undefined],
  ]);
  // Another Worker of the same worker id (another process) polls as another instance.
  const before = s.polls.length;
  start(s.url, clock);
  await pollsReach(clock, s.polls, before + 2);
  const instances = new Set(s.polls.map((p) => p.instance));
  expect(instances.size).toBe(2);
  expect(s.polls.every((p) => p.worker_id === "billing")).toBe(true);
});

it("polls on without `instance`, and sends no `held`, when a server from before it refuses the field", async () => {
  const clock = new ManualClock(Date.UTC(2026, 11, 9, 8, 0, 0));
  const refusal = { code: "INVALID_ARGUMENT", message: 'unknown field "instance" in the request body' };
  let cut = false;
  const s = await stub((body) => {
    if (body.instance !== undefined) return { status: 400, json: refusal };
    if (!cut) {
      cut = true;
      return "cut";
    }
    return { status: 200, json: { tasks: [] } };
  });
  start(s.url, clock);
  await pollsReach(clock, s.polls, 4);
  expect(s.polls.map((p) => [p.instance === undefined ? "none" : "instance", p.held])).toEqual([
    ["instance", undefined], // refused
    ["none", undefined], // asked again at once without it: its answer is lost
    ["none", undefined], // no `held`: without an instance it could be handed another process's tasks
    ["none", undefined],
  ]);
});

it("offers `instance` again a minute after an old server refused it, the same id, so a finished roll regains it", async () => {
  const clock = new ManualClock(Date.UTC(2026, 11, 9, 8, 0, 0));
  const refusal = { code: "INVALID_ARGUMENT", message: 'unknown field "instance" in the request body' };
  let upgraded = false;
  const s = await stub((body) =>
    body.instance !== undefined && !upgraded ? { status: 400, json: refusal } : { status: 200, json: { tasks: [] } },
  );
  start(s.url, clock);
  await pollsReach(clock, s.polls, 3);
  const first = s.polls[0]?.instance;
  expect(first).toMatch(/^[0-9a-f-]{36}$/);
  expect(s.polls.slice(1, 3).every((p) => p.instance === undefined)).toBe(true);
  // The roll finishes: the server now takes the field. Within the minute the polls go on without it.
  upgraded = true;
  clock.advance(30_000);
  const half = s.polls.length;
  await pollsReach(clock, s.polls, half + 2);
  expect(s.polls.slice(half).every((p) => p.instance === undefined)).toBe(true);
  clock.advance(30_000);
  const later = s.polls.length;
  await pollsReach(clock, s.polls, later + 2);
  expect(s.polls.slice(later + 1).map((p) => p.instance)).toEqual(s.polls.slice(later + 1).map(() => first));
});
