/**
 * A run past its run_timeout is told to cancel, and its worker has a grace to run the compensations
 * (docs/outcomes.md § Timeouts). A worker that never comes back within it (killed, and not
 * restarted for a minute) leaves the execution to end FAILED with the timeout: its error names
 * every journaled step no worker compensated. It said only "run_timeout exceeded", as if nothing
 * was left to undo (a tester's refunds, lost without a word).
 */
import { expect, it } from "vitest";
import { TIMEOUT_GRACE_MS, timeOutExecution } from "../../src/engine/timeouts.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { engineAt } from "../helpers/engine.js";

const OFFER = [{ name: "Order", version: "1.0.0", max_attempts: 3, backoff_ms: 0 }];
const HOLDER = { workerId: "w", identity: null };

describeEachDialect("a timed-out run whose worker never comes back", (dialect) => {
  const db = useStore(dialect);

  it("ends FAILED after the grace, naming the steps no worker compensated", async () => {
    const { clock, executions, tasks } = await engineAt(db.store, Date.UTC(2026, 11, 6, 16, 0, 0), "Order");
    await executions.start({ executionId: "o-1", workflow: "Order", timeouts: { runTimeout: "3s" } });
    const [task] = await tasks.claim({ worker_id: "w", workflows: OFFER, max_tasks: 1 });
    const step = (name: string, seq: number, compensable: boolean) =>
      tasks.step(task!.task_id, HOLDER, { worker_id: "w", step: name, seq, result: seq, compensable });
    await step("reserve", 1, true);
    await step("lookup", 2, false);
    await step("charge", 3, true);
    // The worker is killed: past the deadline the run is told to cancel; nobody hears it.
    clock.advance(3_001);
    const timeOut = () => db.store.transaction((tx) => timeOutExecution(tx, "o-1", "run_timeout", clock.now()));
    expect((await timeOut()).status).toBe("RUNNING");
    // Past the worker's own 60 s grace (a live worker hands the task back then): still waiting.
    clock.advance(60_001);
    expect((await timeOut()).status).toBe("RUNNING");
    clock.advance(TIMEOUT_GRACE_MS - 60_000);
    const ended = await timeOut();
    const why = "not compensated: its compensation did not run within the timeout's 90 s grace";
    expect(ended).toMatchObject({
      status: "FAILED",
      error: {
        type: "Timeout",
        timeout: "run_timeout",
        message:
          "run_timeout exceeded: the execution did not end by 2026-12-06T16:00:03Z; compensation failed: charge, reserve not compensated within the timeout's 90 s grace",
        failures: [
          { step: "charge", error: { message: why, type: "CompensationFailed" } },
          { step: "reserve", error: { message: why, type: "CompensationFailed" } },
        ],
      },
    });
  });

  it("moves the active executions' deadlines by a step of the host's clock, not the ended ones'", async () => {
    const { clock, executions } = await engineAt(db.store, Date.UTC(2026, 11, 6, 16, 0, 0), "Order");
    await executions.start({ executionId: "long", workflow: "Order", timeouts: { runTimeout: "10m" } });
    await executions.start({ executionId: "done", workflow: "Order", timeouts: { runTimeout: "10m" } });
    await executions.cancel("done", { reason: "over" });
    const before = await db.store.getExecutionDeadlines("done");
    // The host's clock jumps an hour: a 10-minute run_timeout timed out after 34 s (a tester). The
    // step as measured, with the monotonic clock's fractions: PostgreSQL refused them for a bigint.
    expect(await db.store.shiftExecutionDeadlines(3_600_000.311)).toBe(1);
    clock.advance(3_600_000 + 60_000);
    const timeOut = () => db.store.transaction((tx) => timeOutExecution(tx, "long", "run_timeout", clock.now()));
    expect((await timeOut()).status).toBe("RUNNING");
    expect(await db.store.getExecutionDeadlines("long")).toMatchObject({
      runDeadlineMs: Date.UTC(2026, 11, 6, 16, 10, 0) + 3_600_000,
    });
    expect(await db.store.getExecutionDeadlines("done")).toEqual(before);
  });

  it("caps the leases at a lease from the new time when the clock stepped back", async () => {
    const { clock, executions, tasks } = await engineAt(db.store, Date.UTC(2026, 11, 6, 16, 0, 0), "Order");
    for (const id of ["ahead", "renewed"]) await executions.start({ executionId: id, workflow: "Order" });
    // Leased while the clock was an hour ahead: its lease ends an hour late in the new time.
    clock.advance(3_600_000);
    const [ahead] = await tasks.claim({ worker_id: "w", workflows: OFFER, max_tasks: 1 });
    clock.set(clock.now() - 3_600_000);
    // Leased (or renewed) in the new time: left as it is.
    const [renewed] = await tasks.claim({ worker_id: "w", workflows: OFFER, max_tasks: 1 });
    const renewedUntil = (await db.store.getTaskForExecution(renewed!.execution_id))!.leaseUntilMs;
    await db.store.shiftExecutionDeadlines(-3_600_000, clock.now() + 30_000);
    expect((await db.store.getTaskForExecution(ahead!.execution_id))!.leaseUntilMs).toBe(clock.now() + 30_000);
    expect((await db.store.getTaskForExecution(renewed!.execution_id))!.leaseUntilMs).toBe(renewedUntil);
  });
});
