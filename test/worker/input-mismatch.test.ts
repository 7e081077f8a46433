/**
 * A worker whose definition's input schema differs from the one the server registered for the same
 * version (docs/outcomes.md § Input schema mismatch), for real: the worker starts anyway (it used to
 * crash on the 409 of its registration), fails a task whose input its schema refuses — FAILED,
 * `InputSchemaMismatch`, the path and the rule named, not retried — and keeps running the others.
 */
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { describeEachDialect } from "../helpers/db.js";
import { useWorkerCluster, waitFor } from "./harness.js";

describeEachDialect("input schema mismatch", (dialect) => {
  const cluster = useWorkerCluster(dialect, { leaseMs: 5000 });

  it("fails the task that does not match, not the worker", async () => {
    const { client } = cluster;
    // The server's Typed@1.0.0 takes an amount that is a number or a string; the worker's wants a number.
    await client.registerWorkflow({
      name: "Typed",
      version: "1.0.0",
      input_schema: { type: "object", properties: { amount: { type: ["number", "string"] } } },
    });
    const log = cluster.file("worker.log");
    const worker = await cluster.startWorker("A", { ORBIT_TEST_WORKER_LOG: log });
    const ended = (id: string) =>
      waitFor(`execution ${id} ends`, async () => {
        const e = await client.getExecution(id);
        return e.status === "COMPLETED" || e.status === "FAILED" ? e : undefined;
      });

    const bad = await client.startExecution({ workflow: "Typed", input: { amount: "12.50" } });
    const failed = await ended(bad.value.execution_id);
    expect(failed.status).toBe("FAILED");
    expect(failed.attempt).toBe(1); // not retried: the same input would fail the same way
    expect(failed.error).toMatchObject({ type: "InputSchemaMismatch" });
    expect((failed.error as { message: string }).message).toMatch(
      /^input does not match this worker's input schema of Typed@1\.0\.0: \/amount must be number /,
    );
    expect(cluster.marks(bad.value.execution_id)).toEqual([]); // the code never ran

    // The same worker process still runs what matches.
    const good = await client.startExecution({ workflow: "Typed", input: { amount: 12.5 } });
    const completed = await ended(good.value.execution_id);
    expect(completed).toMatchObject({ status: "COMPLETED", result: { charged: "12.50" } });
    expect(worker.proc.exitCode).toBeNull();

    const lines = readFileSync(log, "utf8");
    expect(lines).toContain("warn the server has this workflow version with another input schema");
    expect(lines).toMatch(/error execution failed .*"error":"InputSchemaMismatch: input does not match/);
  }, 240_000);
});
