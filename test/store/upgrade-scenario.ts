/**
 * What every release fixture holds and how it must fire after the upgrade (the SQLite and the
 * PostgreSQL fixtures were made by the same script steps: scripts/make-upgrade-fixture*.ts).
 */
import { expect } from "vitest";
import type { Store } from "../../src/store/store.js";
import { makeHarness } from "../scheduler/harness.js";

export async function firesAsTheReleaseDid(store: Store): Promise<void> {
  // What the release left: two schedules, 19:00 completed, 19:10 running, the ledger.
  expect((await store.getExecution("every-10m:2026-11-15T19:00:00Z"))?.status).toBe("COMPLETED");
  expect((await store.getExecution("every-10m:2026-11-15T19:10:00Z"))?.status).toBe("RUNNING");
  expect((await store.listOccurrences("every-10m", { limit: 10 })).map((o) => o.kind)).toEqual(["started", "started"]);

  const h = await makeHarness(store, { now: "2026-11-15T19:10:00.100Z" });
  await h.executions.complete("every-10m:2026-11-15T19:10:00Z", {});
  await h.fireAt("2026-11-15T19:20:00.100Z");
  await h.fireAt("2026-11-15T20:00:00.100Z");
  await h.fireAt("2026-11-15T20:00:00.200Z");
  const ids = (await store.listExecutions({ limit: 100 })).map((e) => e.executionId).sort();
  expect(ids).toEqual([
    "berlin-hourly:2026-11-15T19:00:00Z",
    "berlin-hourly:2026-11-15T20:00:00Z",
    "every-10m:2026-11-15T19:00:00Z",
    "every-10m:2026-11-15T19:10:00Z",
    "every-10m:2026-11-15T19:20:00Z",
    // 19:30 … 19:50 were missed (the clock jumped past them) and 20:00 skipped: 19:20 still runs.
  ]);
  const ledger = await store.listOccurrences("every-10m", { limit: 100 });
  expect(ledger.filter((o) => o.kind === "skipped").reduce((n, o) => n + o.count, 0)).toBe(4);
}
