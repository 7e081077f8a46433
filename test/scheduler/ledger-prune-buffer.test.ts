/**
 * The ledger's bound under a buffer policy (src/scheduler/fire-plan.ts prunesNow, docs/operations.md
 * § Retention): a buffered occurrence writes two rows (`buffered`, then its start), and the prune
 * was triggered by decisions (`fired` + `skipped`) alone, so a `buffer_all` schedule whose own run
 * kept going buffered without counting: a tester's ledger held 1,142 rows with N = 1,000, the help
 * saying N + 63. Now at most N + 63 on both stores, whether the buffer grows or drains.
 */
import { expect, it } from "vitest";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { makeHarness, ORDER_INPUT } from "./harness.js";

const N = 3;

describeEachDialect("ledger pruning of a buffer schedule", (dialect) => {
  const db = useStore(dialect);

  it("holds at most N + 63 rows while its buffer grows, and while it drains", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:00.500Z", ledgerRetention: N });
    await h.scheduler.schedules.create({
      schedule_id: "b",
      workflow: "OrderProcessing",
      interval: "1s",
      overlap: "buffer_all",
      input: ORDER_INPUT,
    });
    let most = 0;
    let kinds = new Set<string>();
    const start = Date.parse("2026-11-15T00:00:01Z");
    for (let s = 0; s < 200; s++) {
      // No worker: the first run never ends, and the buffer grows for 130 s. Then each run is
      // cancelled a second after it starts, so the buffer drains one start per two seconds.
      if (s >= 130 && s % 2 === 0) {
        const last = (await db.store.getSchedule("b"))?.lastExecutionId;
        if (last != null) await h.executions.cancel(last, { reason: "test" });
      }
      await h.fireAt(new Date(start + s * 1000).toISOString());
      const rows = await db.store.listOccurrences("b", { limit: 10_000 });
      most = Math.max(most, rows.length);
      kinds = new Set([...kinds, ...rows.map((r) => r.kind)]);
    }
    const row = await db.store.getSchedule("b");
    // The schedule did buffer and drain (not a run of plain starts).
    expect(row?.buffered.length).toBeGreaterThan(90);
    expect(row?.fired).toBeGreaterThan(30);
    expect([...kinds].sort()).toEqual(["buffered", "started"]);
    // Before: 130 rows (the buffer's alone were never counted), then more.
    expect(most).toBeLessThanOrEqual(N + 63);
  });
});
