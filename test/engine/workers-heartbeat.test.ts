/**
 * A worker heard only by heartbeats (busy at full concurrency) on a server that never saw it poll —
 * restarted, or behind a load balancer that sends its polls elsewhere — stays live: the heartbeat
 * refreshes its row, read for what it runs. Before, it was dropped and the worker listed gone while
 * it ran tasks (docs/outcomes.md § Workers and stalls).
 */
import { expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { WorkerRegistry } from "../../src/engine/workers.js";
import { describeEachDialect, useStore } from "../helpers/db.js";

describeEachDialect("heartbeats of a worker this server never saw poll", (dialect) => {
  const db = useStore(dialect);

  it("keep it live, with the workflows its row holds", async () => {
    const clock = new ManualClock(Date.UTC(2026, 11, 5, 19, 0, 0));
    await new WorkerRegistry(db.store, clock).seen("w-busy", [{ name: "Report", version: "1.0.0" }]);
    // The server restarts: a new registry, and the worker only heartbeats from now on.
    const restarted = new WorkerRegistry(db.store, clock);
    clock.advance(50_000);
    await restarted.seen("w-busy");
    clock.advance(50_000); // 100 s after its last poll, 50 s after the heartbeat
    const [w] = await restarted.list();
    expect(w).toMatchObject({ worker_id: "w-busy", status: "live", workflows: [{ name: "Report", version: "1.0.0" }] });
    // One that left stays gone, heartbeat or not.
    await restarted.left("w-busy");
    await new WorkerRegistry(db.store, clock).seen("w-busy");
    expect((await restarted.list())[0]?.status).toBe("gone");
  });
});
