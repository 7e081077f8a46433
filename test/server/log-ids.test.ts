/**
 * Structured logs carry the ids of what they are about (docs/operations.md § Monitor): the firing
 * loop's lines about a schedule have `schedule_id` (a pino child logger), the request log has the
 * `schedule_id` / `execution_id` of the route, and a worker's lines about a task — the SDK's and
 * the workflow code's `ctx.log` — have `execution_id`, `task_id`, `workflow` and `schedule_id`.
 * A real server in-process with a pino logger writing to memory, and a real Worker.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { defineWorkflow, Worker, type WorkflowLogger } from "../../src/index.js";
import { type RunningServer, startServer } from "../../src/server/server.js";
import { parseInstant } from "../../src/time/format.js";

type Line = Record<string, unknown>;
const serverLines: Line[] = [];
const workerLines: Line[] = [];
let server: RunningServer;
let clock: ManualClock;
let dir: string;

const call = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(server.url + path, {
    method,
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as Line | null };
};

async function until(what: string, found: () => Line | undefined): Promise<Line> {
  for (let i = 0; i < 1000; i++) {
    const line = found();
    if (line !== undefined) return line;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no log line: ${what}`);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "orbit-logids-"));
  clock = new ManualClock(parseInstant("2026-11-15T18:51:00.347Z"));
  const logger = pino({ level: "debug" }, { write: (s: string) => void serverLines.push(JSON.parse(s) as Line) });
  server = await startServer({ port: 0, dataDir: dir, clock, logger });
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

it("the firing loop's lines about a schedule carry its schedule_id", async () => {
  // A schedule on a workflow nobody registered: its start fails and the loop says so.
  const applied = await call("POST", "/v1/schedules/apply", {
    schedules: [{ schedule_id: "waits", workflow: "NotYet", interval: "10s" }],
    allow_unregistered: true,
  });
  expect(applied.status).toBe(200);
  clock.set(parseInstant("2026-11-15T18:51:10.000Z"));
  const line = await until("start failed", () =>
    serverLines.find((l) => l.msg === "start failed; retrying the occurrence in 5 s"),
  );
  expect(line).toMatchObject({
    schedule_id: "waits",
    error: expect.stringMatching(/^workflow NotYet is not registered: start a worker that runs it/),
  });
});

it("the request log carries the schedule_id or execution_id of the route", async () => {
  await call("GET", "/v1/schedules/waits");
  await call("GET", "/v1/executions/no-such-execution");
  const requests = () => serverLines.filter((l) => l.msg === "request");
  await until("the two requests", () => (requests().length >= 2 ? requests().at(-1) : undefined));
  expect(requests().find((l) => l.url === "/v1/schedules/waits")).toMatchObject({ schedule_id: "waits", status: 200 });
  expect(requests().find((l) => l.url === "/v1/executions/no-such-execution")).toMatchObject({
    execution_id: "no-such-execution",
    status: 404,
  });
});

it("a worker's lines about a task, ctx.log included, carry execution_id, task_id, workflow and schedule_id", async () => {
  const Report = defineWorkflow({
    name: "Report",
    version: "1.0.0",
    async run(ctx) {
      ctx.log.info("building the report", { rows: 3 });
      throw new Error("no data");
    },
  });
  const logger: WorkflowLogger = {
    info: (msg, fields) => workerLines.push({ level: "info", msg, ...fields }),
    warn: (msg, fields) => workerLines.push({ level: "warn", msg, ...fields }),
    error: (msg, fields) => workerLines.push({ level: "error", msg, ...fields }),
  };
  const worker = new Worker({ server: server.url, workflows: [Report], logger });
  const working = worker.run();
  try {
    await until("the worker's registration", () =>
      serverLines.some((l) => l.url === "/v1/workflows") ? {} : undefined,
    );
    expect(
      (await call("POST", "/v1/schedules", { schedule_id: "weekly", workflow: "Report", interval: "1h" })).status,
    ).toBe(201);
    const trigger = await call("POST", "/v1/schedules/weekly/trigger", {});
    const executionId = trigger.body?.execution_id;
    expect(typeof executionId).toBe("string");
    const fromCode = await until("ctx.log", () => workerLines.find((l) => l.msg === "building the report"));
    const failed = await until("the failure", () => workerLines.find((l) => String(l.msg).includes("failed")));
    for (const line of [fromCode, failed]) {
      expect(line).toMatchObject({
        execution_id: executionId,
        workflow: "Report@1.0.0",
        schedule_id: "weekly",
        task_id: expect.any(String),
      });
    }
    expect(fromCode.rows).toBe(3);
  } finally {
    await worker.close();
    await working;
  }
});
