/**
 * Several servers (separate stores, separate connections) racing on one PostgreSQL database.
 * SQLite has one connection per process; its serialisation is covered by the store contract.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Executions } from "../../src/engine/executions.js";
import { Workflows } from "../../src/engine/workflows.js";
import type { Store } from "../../src/store/store.js";
import { ManualClock, postgresDialect, type TestLocation } from "../helpers/db.js";

const SERVERS = 8;

if (!postgresDialect.enabled) console.warn(`skipped: "concurrent servers [postgres]": ${postgresDialect.skipReason}`);

describe.skipIf(!postgresDialect.enabled)("concurrent servers [postgres]", () => {
  let location: TestLocation;
  let stores: Store[];
  const clock = new ManualClock();

  beforeEach(async () => {
    location = await postgresDialect.createLocation();
    stores = await Promise.all(Array.from({ length: SERVERS }, () => location.open()));
    await new Workflows({ store: stores[0]!, clock }).register({ name: "W", version: "1.0.0" });
  });
  afterEach(() => location.destroy());

  const engines = (max?: number) =>
    stores.map((store) => {
      const workflows = new Workflows({ store, clock });
      return new Executions({ store, clock, workflows, ...(max ? { maxActiveExecutions: max } : {}) });
    });

  it("starts one execution id once, whichever server wins", async () => {
    for (let round = 0; round < 5; round++) {
      const id = `race-${round}`;
      const results = await Promise.all(
        engines().map((e) => e.start({ executionId: id, workflow: "W", input: { round } })),
      );
      expect(results.filter((r) => r.created)).toHaveLength(1);
      for (const r of results) expect(r.execution.executionId).toBe(id);
      expect(await stores[0]!.listEvents(id)).toHaveLength(1);
    }
  });

  it("admits no more than maxActiveExecutions across servers", async () => {
    const results = await Promise.allSettled(
      engines(3).map((e, i) => e.start({ executionId: `m${i}`, workflow: "W" })),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(3);
    for (const r of results) {
      if (r.status === "rejected") expect((r.reason as { code: string }).code).toBe("RESOURCE_EXHAUSTED");
    }
    expect(await stores[0]!.countActiveExecutions()).toBe(3);
  });
});
