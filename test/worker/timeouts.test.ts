/**
 * Timeouts (docs/outcomes.md), for real: a start nobody takes fails with start_timeout (a schedule's
 * override), and a running execution past the workflow's run_timeout is cancelled through its
 * signal, compensated, and ends FAILED with error.type "Timeout" — on the schedule as TIMED OUT.
 */
import { writeFileSync } from "node:fs";
import { expect, it } from "vitest";
import { orbit } from "../e2e/harness.js";
import { describeEachDialect } from "../helpers/db.js";
import { gateFile } from "./fixtures/workflows.js";
import { useWorkerCluster, waitFor } from "./harness.js";

describeEachDialect("timeouts with a worker", (dialect) => {
  const cluster = useWorkerCluster(dialect, { leaseMs: 5000 });

  const failed = (id: string) =>
    waitFor(`execution ${id} fails`, async () => {
      const e = await cluster.client.getExecution(id);
      return e.status === "FAILED" ? e : undefined;
    });

  it("fails a start nobody takes (start_timeout) and shows it on the schedule", async () => {
    const { client } = cluster;
    await client.registerWorkflow({ name: "NobodyRuns", version: "1.0.0" });
    await client.createSchedule({
      schedule_id: "stalls",
      workflow: "NobodyRuns",
      interval: "1h",
      start_timeout: "1s",
      run_timeout: "1h",
    });
    const { execution_id } = await client.triggerSchedule("stalls");
    const e = await failed(execution_id!);
    expect(e.error).toMatchObject({ type: "Timeout", timeout: "start_timeout" });
    expect((e.error as { message: string }).message).toMatch(
      /^start_timeout exceeded: no worker took the execution by /,
    );
    const events = (await client.executionEvents(execution_id!)).map((x) => x.type);
    expect(events).toEqual(["WorkflowCreated", "WorkflowTimedOut", "WorkflowFailed"]);
    const s = await client.getSchedule("stalls");
    expect(s.last_outcome).toMatchObject({ status: "FAILED", execution_id, error_type: "Timeout" });
    const list = await orbit(["schedule", "list", "--wide"], { ORBIT_SERVER: cluster.url });
    expect(list.stdout).toMatch(/stalls .* active {3}TIMED OUT /);

    // A start request takes the timeouts too; bad ones are refused and change nothing.
    const bad = await fetch(`${cluster.url}/v1/executions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ workflow: "NobodyRuns", start_timeout: "soon" }),
    });
    expect(bad.status).toBe(400);
    expect((await client.listExecutions({ workflow: "NobodyRuns" })).executions).toHaveLength(1);
  }, 240_000);

  it("cancels a running execution past run_timeout: signal, compensations, FAILED Timeout", async () => {
    const { client } = cluster;
    await cluster.startWorker("A");
    const patched = await fetch(`${cluster.url}/v1/workflows/Compensating/settings`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ run_timeout: "2s" }),
    });
    expect(await patched.json()).toEqual({ name: "Compensating", run_timeout: "2s" });
    const { value } = await client.startExecution({ workflow: "Compensating", input: {} });
    const e = await failed(value.execution_id);
    expect(e.error).toMatchObject({ type: "Timeout", timeout: "run_timeout" });
    // Every step that completed before the timeout was compensated, newest first, then onCancel ran
    // with the timeout as its reason (how far the code got depends on the machine's speed).
    const history = await client.executionEvents(value.execution_id);
    const completed = history.filter((x) => x.type === "StepCompleted").map((x) => String(x.data.step));
    const compensated = history.filter((x) => x.type === "CompensationCompleted").map((x) => String(x.data.step));
    expect(compensated).toEqual(completed.filter((step) => step !== "ship").reverse());
    const marks = cluster.marks(value.execution_id).map((m) => m.split(" ").slice(2).join(" "));
    expect(marks.filter((m) => m.startsWith("compensate "))).toEqual(compensated.map((step) => `compensate ${step}`));
    expect(marks.at(-1)).toMatch(/^onCancel timeout: run_timeout exceeded: the execution did not end by /);
    const types = (await client.executionEvents(value.execution_id)).map((x) => x.type);
    expect(types).toContain("WorkflowTimedOut");
    expect(types.slice(-1)).toEqual(["WorkflowFailed"]);
    expect(types.indexOf("CompensationStarted")).toBeGreaterThan(types.indexOf("WorkflowTimedOut"));
  }, 240_000);

  it("code that heard of the run_timeout and completed anyway is compensated and ends FAILED Timeout", async () => {
    const { client } = cluster;
    const worker = await cluster.startWorker("A");
    const { value } = await client.startExecution({ workflow: "LateForDeadline", input: {}, run_timeout: "2s" });
    const id = value.execution_id;
    await waitFor("step work", async () => cluster.marks(id).some((m) => m.endsWith(" run work")));
    // The server's sweeper applies the deadline 2 s after the start (a jump of its clock would
    // also carry the lease past its end).
    await waitFor("the timeout's cancel", async () => (await client.getExecution(id)).cancel_reason !== undefined);
    // The next heartbeat carries it: the step's signal aborts, and the code goes on regardless.
    cluster.jumpWorkerClock(worker);
    await waitFor("the code to hear of it", async () => cluster.marks(id).some((m) => m.includes(" heard timeout: ")));
    writeFileSync(gateFile(cluster.file("marks"), id), "");
    const e = await failed(id);
    expect(e.error).toMatchObject({ type: "Timeout", timeout: "run_timeout" });
    expect(cluster.marks(id).map((m) => m.split(" ").slice(2).join(" "))).toEqual([
      "run work",
      expect.stringMatching(/^heard timeout: run_timeout exceeded/),
      "compensate work",
    ]);
    // Before, the worker reported the completion and the execution ended COMPLETED: a run six
    // times over its deadline looked healthy.
  }, 240_000);
});
