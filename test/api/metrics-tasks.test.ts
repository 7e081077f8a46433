/**
 * The worker backlog on /metrics (src/api/metrics-tasks.ts, docs/server.md § Metrics): the tasks
 * ready to run that no worker took, by workflow, and how long the oldest waited. Before, a workflow
 * no worker polled showed only a growing `orbit_executions{status="RUNNING"}`, the same as long
 * runs. A real server; on SQLite, and on PostgreSQL when ORBIT_TEST_DATABASE_URL is set.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { adminQuery, PG_URL } from "../helpers/db.js";
import { startTestServer, type TestServer } from "./helpers.js";
import { seriesValue } from "./metrics-fakes.js";

if (!PG_URL) console.warn("skipped: test/api/metrics-tasks.test.ts on PostgreSQL: ORBIT_TEST_DATABASE_URL is not set");

const dialects = [
  { name: "sqlite", enabled: true },
  { name: "postgres", enabled: PG_URL !== undefined },
];

describe.each(dialects)("/metrics worker backlog on $name", ({ name, enabled }) => {
  let t: TestServer | undefined;
  const schema = `orbit_mtasks_${randomBytes(5).toString("hex")}`;

  afterEach(async () => {
    await t?.stop();
    t = undefined;
    if (name === "postgres") await adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });

  it.skipIf(!enabled)("counts the tasks no worker took, by workflow, and how long the oldest waited", async () => {
    if (name === "postgres") {
      await adminQuery(`CREATE SCHEMA ${schema}`);
      t = await startTestServer({ database: PG_URL as string, databaseSchema: schema });
    } else t = await startTestServer();
    const s = t;
    const scrape = async (): Promise<string> => (await fetch(`${s.server.url}/metrics`)).text();
    for (const w of ["Billing", "Reports"]) await s.ok("POST", "/v1/workflows", { name: w, version: "1.0.0" });

    // Registered, nothing waiting: a 0 for each, not a missing series.
    let text = await scrape();
    expect(seriesValue(text, 'orbit_tasks_ready{workflow="Billing"}')).toBe("0");
    expect(seriesValue(text, 'orbit_tasks_ready_oldest_seconds{workflow="Reports"}')).toBe("0");
    expect(seriesValue(text, 'orbit_scrape_read_success{metric="orbit_tasks_ready"}')).toBe("1");

    // Three Billing runs start and no worker polls Billing: they wait, and the wait grows with time.
    for (const i of [1, 2, 3]) {
      await s.ok("POST", "/v1/executions", { workflow: "Billing", execution_id: `b-${i}`, input: {} });
      s.clock.advance(30_000);
    }
    text = await scrape();
    expect(seriesValue(text, 'orbit_tasks_ready{workflow="Billing"}')).toBe("3");
    expect(seriesValue(text, 'orbit_tasks_ready_oldest_seconds{workflow="Billing"}')).toBe("90");
    expect(seriesValue(text, 'orbit_tasks_ready{workflow="Reports"}')).toBe("0");

    // A worker takes two: the backlog is the one left, and its wait is its own.
    const polled = await s.ok("POST", "/v1/worker/poll", {
      worker_id: "w",
      workflows: [{ name: "Billing", version: "1.0.0", max_attempts: 1, backoff_ms: 0 }],
      max_tasks: 2,
      wait_ms: 0,
    });
    expect(polled.tasks).toHaveLength(2);
    text = await scrape();
    expect(seriesValue(text, 'orbit_tasks_ready{workflow="Billing"}')).toBe("1");
    expect(seriesValue(text, 'orbit_tasks_ready_oldest_seconds{workflow="Billing"}')).toBe("30");
  });
});
