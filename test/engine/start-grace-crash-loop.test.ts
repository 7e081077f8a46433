/**
 * A server's start gives the leases that lapsed while it was down a full lease (docs/workflows.md §
 * Leases), so live workers can reconnect; but only to the leases of workers the database heard of
 * since the lease's last renewal. Each start of a server restarted every 10 s gave a dead worker's
 * leases another 30 s, and its executions waited until the restarts stopped: up to 16 min in a
 * tester's crash loop of 59 kill -9s.
 */
import { expect, it } from "vitest";
import { TaskReaper } from "../../src/engine/task-reaper.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { engineAt } from "../helpers/engine.js";

const OFFER = [{ name: "W", version: "1.0.0", max_attempts: 3, backoff_ms: 0 }];
const T0 = Date.UTC(2026, 11, 7, 19, 0, 0);

describeEachDialect("a start's grace in a crash loop", (dialect) => {
  const db = useStore(dialect);

  /** A server started at `atMs` over the same database: its reaper's first grace, then one pass. */
  async function restartAt(atMs: number): Promise<{ reaped: number; engine: Awaited<ReturnType<typeof engineAt>> }> {
    const engine = await engineAt(db.store, atMs, "W");
    const reaper = new TaskReaper({ store: db.store, clock: engine.clock, tasks: engine.tasks, outages: { count: 0 } });
    await reaper.graceIfOwed();
    return { reaped: await reaper.reapExpired(), engine };
  }

  it("is not given again to a worker unheard since its last grace; a worker heard since keeps it", async () => {
    const first = await engineAt(db.store, T0, "W");
    for (const id of ["dead", "live"]) await first.executions.start({ executionId: id, workflow: "W" });
    const [a] = await first.tasks.poll({ worker_id: "gone", workflows: OFFER, max_tasks: 1, wait_ms: 0 });
    const [b] = await first.tasks.poll({ worker_id: "back", workflows: OFFER, max_tasks: 1, wait_ms: 0 });
    expect([a?.execution_id, b?.execution_id]).toEqual(["dead", "live"]);
    // Down from T0 + 5 s; the first start, 40 s on: both workers were heard at their lease, both graced.
    expect((await restartAt(T0 + 40_000)).reaped).toBe(0);
    // The second start, 40 s later: "back" polled the first meanwhile, "gone" was never heard again.
    const second = await engineAt(db.store, T0 + 50_000, "W");
    await second.tasks.heartbeat({ workerId: "back", identity: null }, [b!.task_id]);
    const again = await restartAt(T0 + 120_000);
    expect(again.reaped).toBe(1);
    const lease = async (id: string) => (await db.store.getTaskLease(id))?.state;
    expect(await lease(a!.task_id)).toBe("pending");
    expect(await lease(b!.task_id)).toBe("leased");
  });
});
