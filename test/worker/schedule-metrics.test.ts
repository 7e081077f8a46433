/**
 * Per-schedule outcome metrics on GET /metrics (docs/outcomes.md § Metrics), for real: a worker
 * process completes one schedule's run and fails another's twice; the scrape shows each schedule's
 * last success, consecutive failures and failures, then, past the label limit
 * (--metrics-schedule-labels, here 2), the same metrics without the schedule label, aggregated; the
 * aggregated failures keep those of deleted schedules.
 */
import { describe, expect, it } from "vitest";
import { startTestServer } from "../api/helpers.js";
import { describeEachDialect } from "../helpers/db.js";
import { useWorkerCluster, waitFor } from "./harness.js";

process.env.ORBIT_TEST_METRICS_SCHEDULE_LABELS = "2"; // read by the server child

describeEachDialect("per-schedule metrics", (dialect) => {
  const cluster = useWorkerCluster(dialect, { leaseMs: 5000 });
  const scrape = async () => (await fetch(`${cluster.url}/metrics`)).text();

  it("labels each schedule up to the limit, aggregates beyond it", async () => {
    const { client } = cluster;
    await cluster.startWorker("A");
    await client.createSchedule({ schedule_id: "good", workflow: "Checkout", input: { ok: true }, interval: "1h" });
    await client.createSchedule({ schedule_id: "bad", workflow: "Checkout", input: {}, interval: "1h" });
    await client.triggerSchedule("good");
    for (const n of [1, 2]) {
      await client.triggerSchedule("bad");
      await waitFor(`failure ${n}`, async () => (await client.getSchedule("bad")).consecutive_failures === n);
    }
    const good = await waitFor("the good run completes", async () => {
      const s = await client.getSchedule("good");
      return s.last_success_at === null ? undefined : s;
    });
    const successSeconds = Date.parse(good.last_success_at as string) / 1000;

    const labelled = await scrape();
    expect(labelled).toMatch(/^# TYPE orbit_schedule_failures_total counter$/m);
    expect(labelled).toMatch(/^orbit_schedule_consecutive_failures\{schedule="bad"\} 2$/m);
    expect(labelled).toMatch(/^orbit_schedule_consecutive_failures\{schedule="good"\} 0$/m);
    expect(labelled).toMatch(/^orbit_schedule_failures_total\{schedule="bad"\} 2$/m);
    expect(labelled).toMatch(/^orbit_schedule_failures_total\{schedule="good"\} 0$/m);
    expect(labelled).toContain(`orbit_schedule_last_success_timestamp_seconds{schedule="good"} ${successSeconds}\n`);
    // No success yet: no series (a 0 would read as "last succeeded in 1970").
    expect(labelled).not.toMatch(/^orbit_schedule_last_success_timestamp_seconds\{schedule="bad"\}/m);

    // A third schedule passes the limit of 2: one unlabelled series each.
    await client.createSchedule({ schedule_id: "idle", workflow: "Checkout", input: {}, interval: "1h" });
    const aggregated = await scrape();
    expect(aggregated).not.toMatch(/^orbit_schedule_\w+\{schedule=/m);
    expect(aggregated).toMatch(/^orbit_schedule_consecutive_failures 2$/m); // the most of any schedule
    expect(aggregated).toMatch(/^orbit_schedule_failures_total 2$/m); // the sum
    expect(aggregated).toContain(`orbit_schedule_last_success_timestamp_seconds ${successSeconds}\n`); // the oldest

    // A deleted schedule's failures stay in the sum: a counter that went down would read as a reset,
    // and rate() as a burst of failures. Created again under its id and deleted again, it counts once.
    await client.createSchedule({ schedule_id: "idle-2", workflow: "Checkout", input: {}, interval: "1h" });
    await client.deleteSchedule("bad");
    expect(await scrape()).toMatch(/^orbit_schedule_failures_total 2$/m);
    await client.createSchedule({ schedule_id: "bad", workflow: "Checkout", input: {}, interval: "1h" });
    await client.deleteSchedule("bad");
    expect(await scrape()).toMatch(/^orbit_schedule_failures_total 2$/m);
  }, 240_000);
});

describe("--metrics-schedule-labels", () => {
  it("is a server option: 0 always aggregates; a bad value refuses to start", async () => {
    const t = await startTestServer({ metricsScheduleLabels: 0 });
    try {
      await t.registerOrders();
      const r = await t.call("GET", "/metrics");
      expect(r.text).toMatch(/^orbit_schedule_consecutive_failures 0$/m);
      expect(r.text).toMatch(/^orbit_schedule_failures_total 0$/m);
      expect(r.text).not.toMatch(/^orbit_schedule_last_success_timestamp_seconds /m);
    } finally {
      await t.stop();
    }
    await expect(startTestServer({ metricsScheduleLabels: -1 })).rejects.toThrow(
      "--metrics-schedule-labels must be a whole number from 0 to 1000000, got -1",
    );
  });
});
