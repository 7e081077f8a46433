/**
 * A poll's `instance` over HTTP (docs/workflows.md § Protocol): the worker process polling, checked
 * at the boundary, recorded by the leases, and scoping the redelivery that `held` asks for. Two
 * processes polling under one worker_id are named in a warning, at most once a minute: a tester's
 * two workers named "billing" ran every step of every in-flight execution twice after a restart.
 */
import pino from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers.js";

const offer = [{ name: "W", version: "1.0.0", max_attempts: 3, backoff_ms: 0 }];
const lines: { msg: string; worker_id?: string }[] = [];
let t: TestServer;
beforeAll(async () => {
  const logger = pino({ level: "warn" }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  t = await startTestServer({ logger });
  await t.ok("POST", "/v1/workflows", { name: "W", version: "1.0.0" });
});
afterAll(() => t.stop());

/** A poll a second after the last one. */
const poll = (body: Record<string, unknown>) => {
  t.clock.advance(1000);
  return t.call("POST", "/v1/worker/poll", {
    worker_id: "billing",
    workflows: offer,
    max_tasks: 5,
    wait_ms: 0,
    ...body,
  });
};
const shared = () => lines.filter((l) => l.msg.includes('poll as worker_id "billing"'));

it("refuses an instance that is not 1-64 characters of letters, digits and _ . : -", async () => {
  for (const instance of ["", "a b", "x".repeat(65), "é", 7]) {
    const answer = await poll({ instance });
    expect(answer.status, JSON.stringify(instance)).toBe(400);
    expect(answer.body.code).toBe("INVALID_ARGUMENT");
    expect(answer.body.message).toContain("instance");
  }
  expect((await poll({ instance: "host-1:4242.a_b" })).status).toBe(200);
});

it("hands each of two processes under one worker_id only its own tasks again, and warns once a minute", async () => {
  for (const id of ["a", "b"]) await t.ok("POST", "/v1/executions", { execution_id: id, workflow: "W", input: {} });
  const one = (await poll({ instance: "p1", max_tasks: 1 })).body.tasks;
  const two = (await poll({ instance: "p2", max_tasks: 1 })).body.tasks;
  expect([...one, ...two].map((x: { execution_id: string }) => x.execution_id).sort()).toEqual(["a", "b"]);
  expect(shared()).toHaveLength(0); // p2's first poll came after p1's last: a restart looks the same
  expect((await poll({ instance: "p1", held: [one[0].task_id] })).body.tasks).toEqual([]);
  expect((await poll({ instance: "p2", held: [two[0].task_id] })).body.tasks).toEqual([]);
  expect(shared()).toHaveLength(1);
  expect(shared()[0]).toMatchObject({ worker_id: "billing" });
  expect(shared()[0]?.msg).toContain("give each process its own workerId");
  await poll({ instance: "p1" });
  expect(shared()).toHaveLength(1);
  // A minute after the warning (p1 last polled 59 s ago: still live), the next poll warns again.
  t.clock.advance(58_000);
  await poll({ instance: "p2" });
  expect(shared()).toHaveLength(2);
});
