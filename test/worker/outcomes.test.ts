/**
 * Outcomes you can see (docs/outcomes.md), for real: a server, a worker process and the CLI. A
 * failing workflow shows failed everywhere (schedule API, list, ledger, CLI), the worker logs each
 * failed attempt at warn and the final failure at error, pause_on_failure pauses after N, and a
 * fix shows as a recovery.
 */
import { existsSync, readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { orbit } from "../e2e/harness.js";
import { describeEachDialect } from "../helpers/db.js";
import { useWorkerCluster, waitFor } from "./harness.js";

describeEachDialect("schedule outcomes with a worker", (dialect) => {
  const cluster = useWorkerCluster(dialect, { leaseMs: 5000 });

  it("shows failures on the schedule, the ledger and the CLI; pauses after N; recovers", async () => {
    const { client } = cluster;
    const log = cluster.file("worker.log");
    await cluster.startWorker("A", { ORBIT_TEST_WORKER_LOG: log });
    await client.createSchedule({
      schedule_id: "checkout",
      workflow: "Checkout",
      interval: "1s",
      pause_on_failure: 2,
    });
    const paused = await waitFor("the schedule pauses itself", async () => {
      const s = await client.getSchedule("checkout");
      return s.paused ? s : undefined;
    });
    const failed = (await client.listExecutions({ schedule_id: "checkout", status: "FAILED" })).executions;
    expect(failed).toHaveLength(2);
    const last = failed[0]!; // newest first
    expect(paused.state).toBe("paused");
    expect(paused.consecutive_failures).toBe(2);
    expect(paused.failures).toBe(2);
    expect(paused.last_outcome).toMatchObject({
      status: "FAILED",
      execution_id: last.execution_id,
      ended_at: last.ended_at,
      error: "card declined",
      error_type: "NonRetryableError",
      // The step that threw, as the execution's error names it (it was left out).
      error_step: "pay",
    });
    expect(paused.last_failure_at).toBe(last.ended_at);
    expect(paused.last_success_at).toBeNull();
    expect(paused.pause_note).toContain(`execution ${last.execution_id} failed: card declined`);
    expect(paused.pause_note).toContain("2 consecutive failures");

    // The list shows the same fields, the ledger links each started row to its final status.
    const [listed] = (await client.listSchedules()).schedules;
    expect(listed?.last_outcome?.status).toBe("FAILED");
    expect(listed?.consecutive_failures).toBe(2);
    const started = (await client.listOccurrences("checkout")).occurrences.filter((o) => o.kind === "started");
    expect(started.length).toBe(2);
    expect(started.every((o) => o.status === "FAILED")).toBe(true);

    // The CLI: a column in `list --wide`, lines in the block, the status in the ledger.
    const env = { ORBIT_SERVER: cluster.url };
    const list = await orbit(["schedule", "list", "--wide"], env);
    expect(list.stdout.split("\n")[0]).toContain("STATE    OUTCOME ");
    expect(list.stdout).toMatch(/checkout .* paused {3}FAILED x2 /);
    const get = await orbit(["schedule", "get", "checkout"], env);
    expect(get.stdout).toContain(`  outcome:    FAILED x2  ${last.execution_id} at ${last.ended_at}\n`);
    expect(get.stdout).toContain("  error:      card declined (in step pay)\n");
    expect(get.stdout).toContain("  last ok:    never\n");
    const ledger = await orbit(["schedule", "occurrences", "checkout"], env);
    expect(ledger.stdout).toContain(`${last.execution_id}  FAILED`);

    // The worker logged each failed attempt at warn and each final failure at error.
    const lines = readFileSync(log, "utf8").split("\n").filter(Boolean);
    const about = (id: string) => lines.filter((l) => l.includes(id));
    expect(about(last.execution_id).map((l) => l.split(" ")[0])).toEqual(["warn", "error"]);
    const final = JSON.parse(about(last.execution_id)[1]!.replace(/^error execution failed /, ""));
    expect(final).toEqual({
      workflow: "Checkout@1.0.0",
      execution_id: last.execution_id,
      run: 1,
      attempt: 2,
      step: "pay",
      error: "NonRetryableError: card declined",
      // Every line about a task carries its ids (docs/operations.md § Monitor).
      task_id: expect.any(String),
      schedule_id: "checkout",
    });

    // Fixed: the next run completes, the counter resets and the outcome says so.
    await client.updateSchedule("checkout", { input: { ok: true } });
    await client.resumeSchedule("checkout");
    const recovered = await waitFor("a completed execution", async () => {
      const s = await client.getSchedule("checkout");
      return s.last_outcome?.status === "COMPLETED" ? s : undefined;
    });
    await client.pauseSchedule("checkout");
    expect(recovered.consecutive_failures).toBe(0);
    expect(recovered.failures).toBe(2);
    expect(recovered.last_success_at).toBe(recovered.last_outcome?.ended_at);
    expect(recovered.last_failure_at).toBe(last.ended_at);
    expect(existsSync(log)).toBe(true);
  }, 240_000);
});
