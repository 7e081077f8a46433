/**
 * Schedules sharing a concurrency key and a cadence take turns (docs/scheduling.md § Concurrency
 * keys): at an instant both come due with the key free, the one started least recently fires
 * first. By schedule id alone the first took the key every time and the second never ran (a
 * tester: 8 of 8 of its occurrences skipped for `concurrency`).
 */
import { expect, it } from "vitest";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { makeHarness } from "./harness.js";

describeEachDialect("scheduler: schedules sharing a concurrency key", (dialect) => {
  const db = useStore(dialect);

  it("take turns under skip when both come due as the key's holder ends", async () => {
    const h = await makeHarness(db.store, { now: "2026-11-15T00:00:30Z" });
    const base = { workflow: "OrderProcessing", interval: "1m", concurrency_key: "k", overlap: "skip" };
    for (const id of ["a", "b"]) await h.scheduler.schedules.create({ ...base, schedule_id: id });
    const starts: string[] = [];
    for (const minute of ["01", "02", "03", "04"]) {
      await h.fireAt(`2026-11-15T00:${minute}:00Z`);
      const running = (await db.store.listExecutions({ status: "RUNNING", limit: 10 })).map((e) => e.executionId);
      expect(running).toHaveLength(1);
      starts.push(running[0] as string);
      await h.executions.complete(running[0] as string, {});
    }
    expect(starts).toEqual([
      "a:2026-11-15T00:01:00Z",
      "b:2026-11-15T00:02:00Z",
      "a:2026-11-15T00:03:00Z",
      "b:2026-11-15T00:04:00Z",
    ]);
    const ledger = async (id: string) => (await db.store.listOccurrences(id, { limit: 10 })).map((r) => r.reason);
    // Newest first.
    expect(await ledger("a")).toEqual(["concurrency", null, "concurrency", null]);
    expect(await ledger("b")).toEqual([null, "concurrency", null, "concurrency"]);
  });
});
