/**
 * A committed cancel asks the workers to heartbeat now (docs/workflows.md § Cancellation and
 * compensation): a poll parked on the server is answered `heartbeat: true` at once; so is the
 * worker's next poll when the cancel came while none of its polls was parked (its previous answer
 * on the way back, its next not yet arrived): that cancel was told to nobody, and the worker heard
 * it only at its next heartbeat. The server's clock is manual here: a poll nobody answers waits
 * until the test moves it.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminQuery, PG_URL } from "../helpers/db.js";
import { startTestServer, type TestServer } from "./helpers.js";

const offer = [{ name: "W", version: "1.0.0", max_attempts: 3, backoff_ms: 1000 }];
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  await t.call("POST", "/v1/workflows", { name: "W", version: "1.0.0" });
});
afterAll(() => t.stop());

/** Until one more sleep waits on the server's clock than `before` (a poll has parked). */
const parked = (before: number) =>
  t.until(
    async () => t.clock.pendingSleeps,
    (n) => n > before,
    "the poll to park",
  );
/** Never reached when the answer comes: it only ends a test whose poll waits on. */
const orNull = <T>(answer: Promise<T>) =>
  Promise.race([answer, new Promise<null>((resolve) => setTimeout(() => resolve(null), 5000))]);

const poll = (worker: string, wait = 0) =>
  t.call("POST", "/v1/worker/poll", { worker_id: worker, workflows: offer, max_tasks: 1, wait_ms: wait });

it("answers a parked poll heartbeat: true when a cancel is committed", async () => {
  await t.call("POST", "/v1/executions", { execution_id: "a", workflow: "W", input: {} });
  expect((await poll("w1")).body.tasks).toHaveLength(1);
  const sleeping = t.clock.pendingSleeps;
  const waiting = poll("w1", 10_000);
  await parked(sleeping);
  await t.call("POST", "/v1/executions/a/cancel", { reason: "stop" });
  const answered = await orNull(waiting);
  expect(answered).toMatchObject({ status: 200, body: { tasks: [], heartbeat: true } });
});

it("answers a worker's next poll heartbeat: true when the cancel came while none of its polls was parked", async () => {
  await t.call("POST", "/v1/executions", { execution_id: "b", workflow: "W", input: {} });
  expect((await poll("w2")).body.tasks).toHaveLength(1);
  // Parked once and answered, so the server knows what it has told w2.
  let sleeping = t.clock.pendingSleeps;
  const first = poll("w2", 10_000);
  await parked(sleeping);
  t.clock.advance(10_000);
  expect((await first).body).toEqual({ tasks: [] });
  // The cancel comes between two polls of w2.
  await t.call("POST", "/v1/executions/b/cancel", { reason: "stop" });
  const next = poll("w2", 10_000);
  const answered = await orNull(next);
  expect(answered).toMatchObject({ status: 200, body: { tasks: [], heartbeat: true } });
  // Told once: the poll after that waits as usual.
  sleeping = t.clock.pendingSleeps;
  const quiet = poll("w2", 10_000);
  await parked(sleeping);
  t.clock.advance(10_000);
  expect((await quiet).body).toEqual({ tasks: [] });
});

it("a poll of max_tasks 0 (a full worker's watch) takes no task, and is answered heartbeat: true at a cancel", async () => {
  await t.call("POST", "/v1/executions", { execution_id: "c", workflow: "W", input: {} });
  expect((await poll("w3")).body.tasks).toHaveLength(1); // w3 runs c, and has no free slot
  const watch = (worker: string) =>
    t.call("POST", "/v1/worker/poll", { worker_id: worker, workflows: offer, max_tasks: 0, wait_ms: 10_000 });
  const sleeping = t.clock.pendingSleeps;
  const watching = watch("w3");
  await parked(sleeping);
  // A new task does not end it, nor is it handed one.
  await t.call("POST", "/v1/executions", { execution_id: "d", workflow: "W", input: {} });
  await t.call("POST", "/v1/executions/c/cancel", { reason: "stop" });
  expect(await orNull(watching)).toMatchObject({ status: 200, body: { tasks: [], heartbeat: true } });
  const events = (await t.call("GET", "/v1/executions/d/events")).body.events.map((e: { type: string }) => e.type);
  expect(events).toEqual(["WorkflowCreated"]); // no worker took it
});

describe.skipIf(!PG_URL)("across servers sharing a PostgreSQL database [postgres]", () => {
  const schema = `orbit_nudge_${randomBytes(5).toString("hex")}`;
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    await adminQuery(`CREATE SCHEMA ${schema}`);
    const shared = { database: PG_URL!, databaseSchema: schema, cluster: "shared" as const };
    a = await startTestServer(shared);
    b = await startTestServer(shared);
    await a.call("POST", "/v1/workflows", { name: "W", version: "1.0.0" });
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });

  it("a cancel committed on one server answers a poll parked on another heartbeat: true", async () => {
    await a.call("POST", "/v1/executions", { execution_id: "x", workflow: "W", input: {} });
    const leased = await b.call("POST", "/v1/worker/poll", {
      worker_id: "wb",
      workflows: offer,
      max_tasks: 1,
      wait_ms: 0,
    });
    expect(leased.body.tasks).toHaveLength(1);
    const sleeping = b.clock.pendingSleeps;
    const waiting = b.call("POST", "/v1/worker/poll", {
      worker_id: "wb",
      workflows: offer,
      max_tasks: 1,
      wait_ms: 10_000,
    });
    await b.until(
      async () => b.clock.pendingSleeps,
      (n) => n > sleeping,
      "the poll to park on b",
    );
    await a.call("POST", "/v1/executions/x/cancel", { reason: "stop" });
    expect(await orNull(waiting)).toMatchObject({ status: 200, body: { tasks: [], heartbeat: true } });
  });
});
