/**
 * A network partition between a worker and its server (a proxy that keeps the connections open
 * and passes nothing): the run's `ctx.signal` aborts once no heartbeat of its task was acknowledged
 * for longer than the lease (src/worker/lease-watch.ts). Before, it aborted only when a heartbeat's
 * answer said the lease was lost, which a partition never delivers: a tester's step ran on while
 * another worker ran it too, and ended 18 s after the execution had COMPLETED elsewhere. What
 * follows the abort is for the server to judge once the network heals: a step report still counts
 * when the server kept the lease, a run that stopped with an error is handed back (not failed),
 * and a lease the server ended refuses the report. The worker's clock jumps past the lease
 * (SIGUSR2, fixtures/partition-worker.ts); the server's lease (30 s) ends only when a test jumps
 * its clock.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { UNHEARD_GRACE_MS } from "../../src/worker/lease-watch.js";
import { sqliteDialect } from "../helpers/db.js";
import { BlackHole } from "./black-hole.js";
import { type Child, spawnChild, stop, useWorkerCluster, waitFor } from "./harness.js";

const LEASE_MS = 30_000;

interface Line {
  level: string;
  message: string;
  fields?: Record<string, unknown>;
}

describe("a worker cut off from its server", () => {
  const cluster = useWorkerCluster(sqliteDialect, { leaseMs: LEASE_MS });
  let proxy: BlackHole | null = null;
  let worker: Child | null = null;
  afterEach(async () => {
    if (worker) await stop(worker, "SIGKILL");
    await proxy?.close();
    proxy = worker = null;
  });

  const log = (): Line[] =>
    readFileSync(cluster.file("worker.log"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Line);
  const said = (start: string) => log().filter((l) => l.message.startsWith(start));

  /** A worker (fixtures/partition-worker.ts) that reaches the server through a new proxy. */
  async function startBehindProxy(): Promise<Child> {
    proxy = new BlackHole(new URL(cluster.url));
    writeFileSync(cluster.file("worker.log"), "");
    return spawnChild("partition-worker.ts", {
      ORBIT_TEST_SERVER: await proxy.start(),
      ORBIT_TEST_MARKS: cluster.file("marks"),
      ORBIT_TEST_WORKER_LOG: cluster.file("worker.log"),
    });
  }

  /** Starts the execution through a worker behind the proxy, cuts it off mid-step, and jumps its clock past the lease. */
  async function cutOffMidStep(executionId: string, onAbort: "return" | "throw"): Promise<string> {
    worker = await startBehindProxy();
    await cluster.client.startExecution({ execution_id: executionId, workflow: "Partitioned", input: { onAbort } });
    await waitFor("the step to run", async () => cluster.marks().includes(`${executionId} wait attempt=1`));
    proxy!.blackHole();
    worker.proc.kill("SIGUSR2");
    return waitFor("the step's signal to abort", async () =>
      cluster.marks().find((m) => m.startsWith(`${executionId} aborted `)),
    );
  }

  const completed = (id: string) =>
    waitFor(`${id} COMPLETED`, async () => {
      const e = await cluster.client.getExecution(id);
      return e.status === "COMPLETED" ? e : undefined;
    });

  it("aborts ctx.signal past the lease, and the step's report counts once the network heals if the server kept the lease", async () => {
    const aborted = await cutOffMidStep("part-return", "return");
    expect(aborted).toMatch(
      /^part-return aborted LeaseLostError: no heartbeat of task \S+ was acknowledged by the server for 4\d s, longer than its lease \(30 s\): the lease has most likely ended/,
    );
    expect(said("no heartbeat was acknowledged")).toEqual([
      expect.objectContaining({
        level: "warn",
        fields: expect.objectContaining({ tasks: 1, execution_ids: ["part-return"], lease_ms: LEASE_MS }),
      }),
    ]);
    proxy!.pass();
    const done = await completed("part-return");
    expect(done.result).toEqual({ first: "stopped", second: 2 });
    const events = await cluster.client.executionEvents("part-return");
    expect(events.map((e) => e.type)).toEqual([
      "WorkflowCreated",
      "WorkflowTaskStarted",
      "StepCompleted",
      "StepCompleted",
      "WorkflowCompleted",
    ]);
    expect(said("lost the task's lease")).toEqual([]);
  });

  it("does not abort ctx.signal for a clock that moved past the lease while the server answers", async () => {
    worker = await startBehindProxy();
    await cluster.client.startExecution({
      execution_id: "part-jump",
      workflow: "Partitioned",
      input: { onAbort: "return" },
    });
    await waitFor("the step to run", async () => cluster.marks().includes("part-jump wait attempt=1"));
    // A pause, or a step of the system clock: the heartbeat asked for then is answered, the lease held.
    worker.proc.kill("SIGUSR2");
    await new Promise((resolve) => setTimeout(resolve, UNHEARD_GRACE_MS + 1000));
    await cluster.client.cancelExecution("part-jump", { reason: "enough" });
    const aborted = await waitFor("the step's signal to abort", async () =>
      cluster.marks().find((m) => m.startsWith("part-jump aborted ")),
    );
    expect(aborted).toBe("part-jump aborted CancelledError: the execution was cancelled: enough");
    expect(said("no heartbeat was acknowledged")).toEqual([]);
  });

  it("hands back the task of a run that stopped with the abort's error, without failing an attempt", async () => {
    await cutOffMidStep("part-throw", "throw");
    proxy!.pass();
    const done = await completed("part-throw");
    expect(done.result).toEqual({ first: "again", second: 2 });
    const events = await cluster.client.executionEvents("part-throw");
    expect(events.map((e) => [e.type, e.data.attempt ?? null])).toEqual([
      ["WorkflowCreated", null],
      ["WorkflowTaskStarted", 1],
      ["WorkflowTaskReleased", null],
      ["WorkflowTaskStarted", 1],
      ["StepCompleted", null],
      ["StepCompleted", null],
      ["WorkflowCompleted", null],
    ]);
    expect(said("the run ended with an error after its signal aborted")).toHaveLength(1);
    expect(cluster.marks().filter((m) => m.startsWith("part-throw wait"))).toEqual([
      "part-throw wait attempt=1",
      "part-throw wait attempt=1",
    ]);
  });

  it("drops the step's report the server refuses once it ended the lease, and says no stuck slot", async () => {
    await cutOffMidStep("part-lost", "return");
    // The server's lease ends and the reaper hands the task to the next attempt.
    await cluster.jumpServerClock(LEASE_MS + 1000);
    await waitFor("the lease to end", async () =>
      (await cluster.client.executionEvents("part-lost")).some((e) => e.type === "WorkflowTaskLeaseExpired"),
    );
    proxy!.pass();
    const done = await completed("part-lost");
    expect(done.result).toEqual({ first: "again", second: 2 });
    await waitFor("the refusal said", async () => said("lost the task's lease").length > 0);
    expect(said("a run's task is no longer this worker's")).toEqual([]);
  });
});
