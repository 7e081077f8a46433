/**
 * The 20th lost lease of an execution ends it (docs/workflows.md § Failures and retries): FAILED
 * `LeaseExpired` when it ran, but CANCELLED when a cancel was answered before, as every other end
 * of a cancelled execution (docs/workflows.md § Cancellation and compensation). A cancelled run
 * whose compensation could never be reported (a thrown value the worker could not read) re-ran
 * every 30 s for ten minutes and then ended FAILED (a tester).
 */
import { expect, it } from "vitest";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { engineAt } from "../helpers/engine.js";

const OFFER = [{ name: "Refund", version: "1.0.0", max_attempts: 3, backoff_ms: 0 }];
const HOLDER = { workerId: "w", identity: null };

describeEachDialect("the last lost lease", (dialect) => {
  const db = useStore(dialect);

  async function loseEveryLease(cancel: boolean) {
    const { clock, executions, tasks } = await engineAt(db.store, Date.UTC(2026, 11, 6, 16, 0, 0), "Refund");
    const id = cancel ? "cancelled-run" : "plain-run";
    await executions.start({ executionId: id, workflow: "Refund" });
    const [first] = await tasks.claim({ worker_id: "w", workflows: OFFER, max_tasks: 1 });
    await tasks.step(first!.task_id, HOLDER, { worker_id: "w", step: "charge", seq: 1, result: 1, compensable: true });
    if (cancel) await executions.cancel(id, { reason: "stop it" });
    for (let attempt = 1; ; attempt++) {
      clock.advance(tasks.leaseMs + 1);
      const requeued = await tasks.reap(first!.task_id);
      if (!requeued) break;
      clock.advance(60 * 60_000); // past any back-off
      const [again] = await tasks.claim({ worker_id: "w", workflows: OFFER, max_tasks: 1 });
      expect(again?.attempt).toBe(attempt + 1);
    }
    return executions.get(id);
  }

  it("ends a cancelled execution CANCELLED, naming the steps not compensated", async () => {
    expect(await loseEveryLease(true)).toMatchObject({
      status: "CANCELLED",
      cancelReason: "stop it",
      error: {
        message:
          "the execution lost its worker 20 times (lease expired); giving up after its cancel: charge not compensated",
        type: "LeaseExpired",
        failures: [
          {
            step: "charge",
            error: { message: "not compensated: its worker lost the lease 20 times", type: "CompensationFailed" },
          },
        ],
      },
    });
  });

  it("ends one that was not cancelled FAILED", async () => {
    expect(await loseEveryLease(false)).toMatchObject({
      status: "FAILED",
      error: { message: "the execution lost its worker 20 times (lease expired); giving up", type: "LeaseExpired" },
    });
  });
});
