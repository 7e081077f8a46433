/**
 * A fail report answered 503, then refused 409 when sent again, may have been recorded: the
 * server's database committed it and the answer to its COMMIT was lost (a tester's proxy swallowing
 * COMMIT answers: WorkflowAttemptFailed recorded, the next attempt running), or the lease ended
 * meanwhile. The worker cannot tell which, and no longer says "lost the task's lease while
 * reporting". A refusal at the first send still is a lost lease. A stub of the worker protocol.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import { afterEach, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { defineWorkflow, Worker } from "../../src/index.js";
import { capturing, taskJson, turn } from "./hung-code.js";

let server: Server | null = null;
let worker: Worker | null = null;
let clock: ManualClock | null = null;
afterEach(async () => {
  // close() waits on the worker's clock (its hand-back, its polls' grace): moved on meanwhile.
  let closed = false;
  const closing = worker?.close().finally(() => {
    closed = true;
  });
  while (closing !== undefined && !closed) {
    if (clock !== null && clock.pendingSleeps > 0) clock.advance(1000);
    await turn();
  }
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = worker = null;
  clock = null;
});

const Failing = defineWorkflow({
  name: "Failing",
  version: "1.0.0",
  async run() {
    throw new Error("boom");
  },
});

/** Runs Failing's one task; its fail report is answered `answers` in turn; resolves with the worker's warnings. */
async function failReported(answers: number[]): Promise<string[]> {
  const task = taskJson({ task_id: "t1", execution_id: "e1", workflow: "Failing" });
  const parked: ServerResponse[] = [];
  let leased = false;
  let reports = 0;
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const json = (answer: unknown, status = 200) =>
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(answer));
      if (req.url === "/v1/worker/poll") {
        if (leased) return void parked.push(res);
        leased = true;
        return json({ tasks: [task] });
      }
      if (req.url === "/v1/worker/tasks/t1/fail") {
        const status = answers[reports++] ?? 409;
        if (status === 503)
          return json({ code: "UNAVAILABLE", message: "the database did not answer within 30000 ms" }, 503);
        return json({ code: "CONFLICT", message: "worker task t1 (execution e1) is not leased to worker w1" }, 409);
      }
      if (req.url === "/v1/worker/heartbeat") return json({ tasks: { t1: { lease: "held", cancel_requested: null } } });
      json({});
    });
  });
  server.on("close", () => {
    for (const res of parked) res.destroy();
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const { lines, logger } = capturing();
  const at = new ManualClock(Date.parse("2026-12-07T12:00:00Z"));
  clock = at;
  worker = new Worker({ server: `http://127.0.0.1:${port}`, workflows: [Failing], logger, concurrency: 1, clock: at });
  void worker.run();
  const warnings = () => lines.filter(([level]) => level === "warn").map(([, m]) => m);
  while (warnings().length === 0) {
    // The resend after the 503 waits on the worker's clock.
    if (at.pendingSleeps > 0 && reports > 0) at.advance(500);
    await turn();
  }
  return warnings();
}

it("a resend refused after a 503 says the report may have been recorded, not that the lease was lost", async () => {
  expect(await failReported([503, 409])).toEqual([
    "a report sent again after a 503 was refused: the server may have recorded the first one (its database's answer was lost; the execution then went on, a failed attempt's next one runs) or the task's lease ended meanwhile",
  ]);
});

it("a refusal at the first send is still a lost lease", async () => {
  expect(await failReported([409])).toEqual(["lost the task's lease while reporting"]);
});
