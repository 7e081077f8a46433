/**
 * Issue 10 item 4, with a real worker process: once a cancel is requested, the execution ends
 * CANCELLED even when its last step ignores `ctx.signal` and finishes anyway (docs/workflows.md §
 * Cancellation and compensation). The step's result is journaled and compensated, the earlier
 * steps too, newest first, then `onCancel` runs — for `orbit cancel`, POST /v1/executions/{id}/cancel
 * (the step returning, or throwing) and a schedule's `cancel_previous`.
 */
import { writeFileSync } from "node:fs";
import { expect, it } from "vitest";
import type { OrbitClient } from "../../src/client/client.js";
import { orbit } from "../e2e/harness.js";
import { describeEachDialect } from "../helpers/db.js";
import { gateFile } from "./fixtures/workflows.js";
import { useWorkerCluster, waitFor } from "./harness.js";

describeEachDialect("a cancel wins over a step that ignores the signal", (dialect) => {
  // Heartbeats every 2 s: a worker rarely hears of the cancel by heartbeat in the few milliseconds
  // between the cancel and the gate opening, so the reports usually reach the server after the
  // cancel (the path under test). Either way the outcome asserted is the same.
  const cluster = useWorkerCluster(dialect, { leaseMs: 10_000 });

  const openGate = (id: string): void => writeFileSync(gateFile(cluster.file("marks"), id), "");
  const ended = (client: OrbitClient, id: string) =>
    waitFor(`execution ${id} ends`, async () => {
      const e = await client.getExecution(id);
      return e.status === "RUNNING" || e.status === "COMPENSATING" ? undefined : e;
    });
  const what = (id: string) => cluster.marks(id).map((m) => m.split(" ").slice(2).join(" "));
  const history = async (client: OrbitClient, id: string) =>
    (await client.executionEvents(id)).map((e) => [e.type, e.data.step ?? e.data.reason ?? null]);

  it("orbit cancel: the step returns after the cancel; it is compensated, onCancel runs, CANCELLED", async () => {
    const { client } = cluster;
    await cluster.startWorker("A");
    await client.startExecution({ execution_id: "order-1", workflow: "IgnoresCancel", input: {} });
    await waitFor("step ship", async () => what("order-1").includes("run ship"));
    const cli = await orbit(["cancel", "order-1", "--reason", "customer changed their mind"], {
      ORBIT_SERVER: cluster.url,
    });
    expect(cli).toMatchObject({ code: 0, stderr: "" });
    expect(cli.stdout).toContain("cancel requested for order-1");
    openGate("order-1");
    const e = await ended(client, "order-1");
    expect(e).toMatchObject({ status: "CANCELLED", cancel_reason: "customer changed their mind", result: null });
    expect(what("order-1")).toEqual([
      "run ship",
      "compensate ship",
      "compensate reserve",
      "onCancel customer changed their mind",
    ]);
    expect((await history(client, "order-1")).slice(-8)).toEqual([
      ["StepCompleted", "reserve"],
      ["CancelRequested", "customer changed their mind"],
      ["StepCompleted", "ship"],
      ["CompletionAfterCancel", null],
      ["CompensationStarted", "customer changed their mind"],
      ["CompensationCompleted", "ship"],
      ["CompensationCompleted", "reserve"],
      ["WorkflowCancelled", "customer changed their mind"],
    ]);
    const events = await client.executionEvents("order-1");
    expect(events.find((x) => x.type === "CompletionAfterCancel")?.data).toEqual({ result: { shipped: true } });
  });

  /** The history without the record of a late report (present when the worker had not heard of the cancel yet). */
  const withoutLateReport = async (client: OrbitClient, id: string) =>
    (await history(client, id)).filter(([type]) => type !== "FailureAfterCancel" && type !== "ContinueAfterCancel");

  it("POST …/cancel: the step throws after the cancel; the earlier steps are compensated, CANCELLED", async () => {
    const { client } = cluster;
    await cluster.startWorker("A");
    await client.startExecution({ execution_id: "order-2", workflow: "IgnoresCancel", input: { ending: "throw" } });
    await waitFor("step ship", async () => what("order-2").includes("run ship"));
    const res = await fetch(`${cluster.url}/v1/executions/order-2/cancel`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ reason: "out of stock" }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: "RUNNING", cancel_reason: "out of stock" });
    openGate("order-2");
    const e = await ended(client, "order-2");
    expect(e).toMatchObject({ status: "CANCELLED", cancel_reason: "out of stock", attempt: 1 });
    expect(what("order-2")).toEqual(["run ship", "compensate reserve", "onCancel out of stock"]);
    expect((await withoutLateReport(client, "order-2")).slice(-4)).toEqual([
      ["CancelRequested", "out of stock"],
      ["CompensationStarted", "out of stock"],
      ["CompensationCompleted", "reserve"],
      ["WorkflowCancelled", "out of stock"],
    ]);
  });

  it("the run continues as new after the cancel: no next run, compensated, CANCELLED", async () => {
    const { client } = cluster;
    await cluster.startWorker("A");
    await client.startExecution({ execution_id: "loop-1", workflow: "IgnoresCancel", input: { ending: "continue" } });
    await waitFor("step ship journaled", async () =>
      (await client.executionEvents("loop-1")).some((x) => x.type === "StepCompleted" && x.data.step === "ship"),
    );
    await client.cancelExecution("loop-1", { reason: "stop looping" });
    openGate("loop-1");
    const e = await ended(client, "loop-1");
    // Attempt 1, run 1: the same worker compensated (no lease ran out, no next run started).
    expect(e).toMatchObject({ status: "CANCELLED", cancel_reason: "stop looping", run: 1, attempt: 1 });
    expect(what("loop-1")).toEqual(["run ship", "compensate ship", "compensate reserve", "onCancel stop looping"]);
    expect((await withoutLateReport(client, "loop-1")).slice(-6)).toEqual([
      ["StepCompleted", "ship"],
      ["CancelRequested", "stop looping"],
      ["CompensationStarted", "stop looping"],
      ["CompensationCompleted", "ship"],
      ["CompensationCompleted", "reserve"],
      ["WorkflowCancelled", "stop looping"],
    ]);
  });

  it("cancel_previous: the replaced execution's step finishes anyway; it still ends CANCELLED", async () => {
    const { client } = cluster;
    await cluster.startWorker("A");
    await client.createSchedule({
      schedule_id: "replace",
      workflow: "IgnoresCancel",
      interval: "5s",
      overlap: "cancel_previous",
    });
    const reason = "schedule `replace`: replaced by the next occurrence (overlap cancel_previous)";
    // The server's clock moves to an occurrence, which starts an execution; once it is inside `ship`,
    // to the next one, which replaces it. (A jump of one interval stays well inside the lease.)
    await cluster.jumpServerClock(5_000);
    await waitFor("an execution inside ship", async () =>
      (await client.listExecutions({ schedule_id: "replace", status: "RUNNING" })).executions.find((x) =>
        what(x.execution_id).includes("run ship"),
      ),
    );
    await cluster.jumpServerClock(5_000);
    // An execution replaced while its worker was inside `ship` (one replaced before it got there
    // takes the ordinary path, which test/worker/cancel.test.ts covers).
    const id = await waitFor("an execution replaced during ship", async () => {
      const page = await client.listExecutions({ schedule_id: "replace" });
      return page.executions
        .filter((x) => x.cancel_reason === reason && x.status === "RUNNING")
        .map((x) => x.execution_id)
        .find((x) => what(x).includes("run ship"));
    });
    await client.pauseSchedule("replace");
    openGate(id);
    const e = await ended(client, id);
    expect(e).toMatchObject({ status: "CANCELLED", cancel_reason: reason });
    expect(what(id)).toEqual(["run ship", "compensate ship", "compensate reserve", `onCancel ${reason}`]);
    const types = (await client.executionEvents(id)).map((x) => x.type);
    expect(types.slice(-6)).toEqual([
      "StepCompleted",
      "CompletionAfterCancel",
      "CompensationStarted",
      "CompensationCompleted",
      "CompensationCompleted",
      "WorkflowCancelled",
    ]);
  });
});
