/**
 * Workers and stalls (docs/outcomes.md), for real: an execution nobody polls says so, a version no
 * worker runs says so, `GET /v1/workers` and `orbit workers` list the worker, and `orbit retry`
 * re-runs a failed execution as run 2 of the same id, its history kept (`orbit events`, `orbit status`).
 */
import { expect, it } from "vitest";
import { OrbitError } from "../../src/domain/errors.js";
import { orbit } from "../e2e/harness.js";
import { describeEachDialect } from "../helpers/db.js";
import { stop, useWorkerCluster, waitFor } from "./harness.js";

describeEachDialect("workers, stalls and retry", (dialect) => {
  const cluster = useWorkerCluster(dialect, { leaseMs: 5000 });

  it("names why an execution waits, lists workers, retries a failed execution", async () => {
    const { client } = cluster;
    const env = { ORBIT_SERVER: cluster.url };
    // No worker at all: the execution says nobody polls its workflow.
    await client.registerWorkflow({ name: "FixedOnRetry", version: "1.0.0" });
    const early = await client.startExecution({ workflow: "FixedOnRetry", input: {} });
    const lonely = await client.getExecution(early.value.execution_id);
    expect(lonely.waiting?.reason).toBe("no_worker");
    expect(lonely.waiting?.message).toMatch(/^no worker polls workflow FixedOnRetry/);

    // A worker starts and takes it; the first run fails.
    await cluster.startWorker("A");
    const failed = await waitFor("the first run fails", async () => {
      const e = await client.getExecution(early.value.execution_id);
      return e.status === "FAILED" ? e : undefined;
    });
    expect(failed.waiting).toBeUndefined();
    expect(failed).toMatchObject({ run: 1, attempt: 1, error: { message: "bug in run 1" } });

    // A newer version nobody runs: "latest" starts stall, and say which versions are run.
    await client.registerWorkflow({ name: "FixedOnRetry", version: "1.1.0" });
    const stalled = await client.startExecution({ workflow: "FixedOnRetry", input: {} });
    expect(stalled.value.version).toBe("1.1.0");
    const why = (await client.getExecution(stalled.value.execution_id)).waiting;
    expect(why?.reason).toBe("no_worker_for_version");
    expect(why?.message).toContain("no worker polls FixedOnRetry@1.1.0; live workers run version 1.0.0");
    // Deprecating the version does not move an execution already on it: say so, and how to go on.
    await client.deprecateWorkflow("FixedOnRetry", "1.1.0");
    const still = (await client.getExecution(stalled.value.execution_id)).waiting;
    expect(still?.message).toBe(
      `no worker polls FixedOnRetry@1.1.0, which is deprecated: this execution still waits for it; cancel it (orbit cancel ${stalled.value.execution_id}) so its schedule goes on with the latest version, or run a worker with FixedOnRetry@1.1.0`,
    );
    await client.deprecateWorkflow("FixedOnRetry", "1.1.0", false);
    // A newer version is "latest" (a deploy replaced the worker while this one was due): only this
    // execution waits, and deprecating 1.1.0 would change nothing for it (the advice said to).
    await client.registerWorkflow({ name: "FixedOnRetry", version: "1.2.0" });
    expect((await client.getExecution(stalled.value.execution_id)).waiting?.message).toBe(
      `no worker polls FixedOnRetry@1.1.0; live workers run version 1.0.0: this execution started on 1.1.0 and waits for a worker of it; cancel it (orbit cancel ${stalled.value.execution_id}), or run a worker with FixedOnRetry@1.1.0`,
    );

    // The worker is listed, live, with its workflows.
    const workers = await client.listWorkers();
    expect(workers).toHaveLength(1);
    expect(workers[0]).toMatchObject({ status: "live", running_tasks: 0, stuck: false });
    expect(workers[0]!.free_slots).toBeGreaterThan(0);
    expect(workers[0]!.workflows).toContainEqual({ name: "FixedOnRetry", version: "1.0.0" });
    const listed = await orbit(["workers"], env);
    expect(listed.stdout.split("\n")[0]).toMatch(/^WORKER +STATUS +LAST SEEN +RUNNING +WORKFLOWS$/);
    expect(listed.stdout).toContain(`${workers[0]!.worker_id} `);
    expect(listed.stdout).toContain("FixedOnRetry@1.0.0");

    // Retry: run 2 of the same execution completes; the history keeps run 1.
    const retried = await orbit(["retry", early.value.execution_id], env);
    expect(retried).toMatchObject({ code: 0, stdout: `retrying ${early.value.execution_id} as run 2\n` });
    const done = await waitFor("run 2 completes", async () => {
      const e = await client.getExecution(early.value.execution_id);
      return e.status === "COMPLETED" ? e : undefined;
    });
    expect(done).toMatchObject({ run: 2, attempt: 1, result: { fixed: true }, error: null });
    expect(cluster.marks(early.value.execution_id).map((m) => m.split(" ").slice(2).join(" "))).toEqual([
      "run work run=1",
      "run work run=2",
    ]);
    const types = (await client.executionEvents(early.value.execution_id)).map((e) => e.type);
    expect(types.filter((t) => t.startsWith("Workflow"))).toEqual([
      "WorkflowCreated",
      "WorkflowTaskStarted",
      "WorkflowFailed",
      "WorkflowRetried",
      "WorkflowTaskStarted",
      "WorkflowCompleted",
    ]);
    const events = await orbit(["events", early.value.execution_id], env);
    // PostgreSQL's jsonb orders the keys its own way: look for the line, then its fields.
    const retriedLine = events.stdout.split("\n").find((l) => / WorkflowRetried /.test(l)) ?? "";
    expect(retriedLine).toMatch(/^\d+ +\S+ +WorkflowRetried +\{/);
    expect(retriedLine).toContain('"run":2');
    expect(retriedLine).toContain('"previous_status":"FAILED"');
    const status = await orbit(["status", early.value.execution_id], env);
    expect(status.stdout).toContain("  run: 2   attempt: 1\n");
    // The result only when asked for: the default is the seed's lines (docs/cli.md § orbit status).
    expect(status.stdout).not.toContain("result:");
    const wide = await orbit(["status", early.value.execution_id, "--wide"], env);
    expect(wide.stdout).toContain('  result: {"fixed":true}\n');

    // Only FAILED or CANCELLED executions are retried.
    const again = await client.retryExecution(early.value.execution_id).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(OrbitError);
    expect(again).toMatchObject({ code: "CONFLICT" });
  }, 240_000);

  it("a worker that closes is gone at once: its workflow's executions say no worker polls it", async () => {
    const { client } = cluster;
    await client.registerWorkflow({ name: "FixedOnRetry", version: "1.0.0" });
    const worker = await cluster.startWorker("A");
    await waitFor("the worker is listed live", async () =>
      (await client.listWorkers()).some((w) => w.status === "live") ? true : undefined,
    );
    await stop(worker); // SIGTERM: Worker.close()
    // At once, not a minute after its last poll as before.
    const [listed] = await client.listWorkers();
    expect(listed?.status).toBe("gone");
    const started = await client.startExecution({ workflow: "FixedOnRetry", input: {} });
    const waiting = (await client.getExecution(started.value.execution_id)).waiting;
    expect(waiting?.reason).toBe("no_worker");
    // Started again (a new process, the same workflows), it is live once more.
    await cluster.startWorker("B");
    await waitFor("a live worker again", async () =>
      (await client.listWorkers()).some((w) => w.status === "live") ? true : undefined,
    );
  }, 120_000);
});
