/**
 * `stuck` (GET /v1/workers, docs/api.md): a live worker whose last poll had no free slot and that
 * holds no task. A report that ends one of its tasks frees a slot, and the worker polls again at
 * once: until then its last poll's "no free slot" is stale, and a healthy worker between the two
 * read stuck (9 of 748 samples of a worker running 150 ms tasks back to back, a tester).
 */
import { expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { WorkerRegistry } from "../../src/engine/workers.js";
import { describeEachDialect, useStore } from "../helpers/db.js";

describeEachDialect("a worker with no free slot", (dialect) => {
  const db = useStore(dialect);

  it("is stuck while it holds no task and has reported nothing since that poll", async () => {
    const clock = new ManualClock(Date.UTC(2026, 11, 6, 17, 0, 0));
    const workers = new WorkerRegistry(db.store, clock);
    const stuck = async () => (await workers.list()).map((w) => [w.worker_id, w.free_slots, w.stuck]);
    await workers.seen("w", [{ name: "Report", version: "1.0.0" }]);
    workers.polled("w", 0);
    expect(await stuck()).toEqual([["w", 0, true]]);
    // Its report of a task's end: it polls again at once, with the slot that report freed.
    workers.reported("w");
    expect(await stuck()).toEqual([["w", 0, false]]);
    // A release of code that keeps its slot brings no poll: stuck again a little later.
    clock.advance(2_000);
    expect(await stuck()).toEqual([["w", 0, true]]);
    workers.reported("w");
    workers.polled("w", 1);
    expect(await stuck()).toEqual([["w", 1, false]]);
    workers.polled("w", 0);
    expect(await stuck()).toEqual([["w", 0, true]]);
  });
});
