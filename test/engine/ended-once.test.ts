/**
 * The scheduler is told an execution ended only by the transaction that ended it. Told by its end
 * time equal to the transaction's clock, two servers' timeout sweepers on one deadline (shared
 * mode, the same database clock) both recorded the outcome and sent its webhook twice (a tester).
 */
import { expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import type { Execution } from "../../src/domain/execution.js";
import { Executions } from "../../src/engine/executions.js";
import { timeOutExecution } from "../../src/engine/timeouts.js";
import { Workflows } from "../../src/engine/workflows.js";
import { describeEachDialect, useStore } from "../helpers/db.js";

describeEachDialect("an execution's end, told once", (dialect) => {
  const db = useStore(dialect);

  it("is told by the sweep that timed it out, not by a second sweep at the same instant", async () => {
    const clock = new ManualClock(Date.UTC(2026, 11, 7, 7, 0, 0));
    const workflows = new Workflows({ store: db.store, clock });
    const told: string[] = [];
    const ended: string[] = [];
    const executions = new Executions({
      store: db.store,
      clock,
      workflows,
      onEnded: async (_tx, es: readonly Execution[]) => void told.push(...es.map((e) => e.executionId)),
    });
    executions.subscribeEnded((e) => ended.push(e.executionId));
    await workflows.register({ name: "Orphan", version: "1.0.0" });
    await executions.start({ executionId: "o", workflow: "Orphan", timeouts: { startTimeout: "1s" } });
    clock.advance(1001);
    // Two servers' sweepers on the same deadline, at the same instant of the database's clock.
    const sweep = () => executions.runTransition((t, now) => timeOutExecution(t, "o", "start_timeout", now));
    expect((await sweep()).status).toBe("FAILED");
    expect((await sweep()).status).toBe("FAILED");
    expect(told).toEqual(["o"]);
    expect(ended).toEqual(["o"]);
  });
});
