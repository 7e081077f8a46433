/**
 * A retry runs with the timeouts its start request gave (docs/outcomes.md § Retry): it took the
 * workflow's defaults, or none, and a tester's start with `"run_timeout": "3s"` timed out while its
 * retry ran an 8 s step to COMPLETED. A timeout the request did not give still comes from the
 * workflow's defaults as they are at the retry.
 */
import { expect, it } from "vitest";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { engineAt } from "../helpers/engine.js";

describeEachDialect("a retry's timeouts", (dialect) => {
  const db = useStore(dialect);

  it("are those the start request gave, the others the workflow's", async () => {
    const t0 = Date.UTC(2026, 11, 7, 19, 0, 0);
    const { clock, executions, workflows } = await engineAt(db.store, t0, "Order");
    await executions.start({ executionId: "given", workflow: "Order", timeouts: { runTimeout: "3s" } });
    expect(await db.store.getExecutionDeadlines("given")).toEqual({ startDeadlineMs: null, runDeadlineMs: t0 + 3000 });
    await executions.cancel("given", { reason: "stop" });
    expect((await executions.get("given")).status).toBe("CANCELLED");
    await workflows.updateSettings("Order", { start_timeout: "1m", run_timeout: "1h" });
    clock.advance(60_000);
    await executions.retry("given");
    expect(await db.store.getExecutionDeadlines("given")).toEqual({
      startDeadlineMs: t0 + 60_000 + 60_000,
      runDeadlineMs: t0 + 60_000 + 3000,
    });
  });
});
