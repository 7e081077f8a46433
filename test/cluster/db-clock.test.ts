/**
 * Issue 10 item 6: in `--cluster shared` every instant that decides scheduling comes from the
 * database clock, at create, update and resume time too (docs/cluster.md § shared: every server
 * fires). The server's own clock is injected 20 s ahead of PostgreSQL's; a `start_at` 15 s in the
 * database's future must stay the first fire, and created_at / updated_at are the database's time.
 * Since a cluster server keeps the database's time (docs/cluster.md § One time for the cluster),
 * the host clock is corrected at start as well; the last test checks that correction on its own.
 */
import { afterEach, expect, it } from "vitest";
import { OrbitClient } from "../../src/client/client.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { type RunningServer, startServer } from "../../src/server/server.js";
import { formatInstant } from "../../src/time/format.js";
import { CLUSTER_DB, createSchema, describeCluster, dropSchema, query } from "./support.js";

const AHEAD_MS = 20_000;

async function databaseNow(): Promise<number> {
  const rows = await query<{ t: string }>("SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint AS t");
  return Number(rows[0]?.t);
}

describeCluster("shared mode decides with the database clock", () => {
  let schema = "";
  let server: RunningServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
    if (schema) await dropSchema(schema);
  });

  /** A shared server on a fresh schema whose host clock is `hostOffsetMs` off the database's, and the database's time before it started. */
  async function startShared(hostOffsetMs: number): Promise<{ before: number; url: string; client: OrbitClient }> {
    schema = await createSchema();
    const before = await databaseNow();
    server = await startServer({
      database: CLUSTER_DB,
      databaseSchema: schema,
      cluster: "shared",
      port: 0,
      logger: "silent",
      clock: new ManualClock(before + hostOffsetMs),
    });
    return { before, url: server.url, client: new OrbitClient({ baseUrl: server.url }) };
  }

  it("a start_at 15 s ahead of the database stays the first fire on a server 20 s ahead", async () => {
    const { before, client } = await startShared(AHEAD_MS);
    await client.registerWorkflow({ name: "Tick", version: "1.0.0" });
    const startAt = Math.ceil((before + 15_000) / 1000) * 1000;
    const inDbTime = (instant: string, from: number, to: number) => {
      const ms = Date.parse(instant);
      expect(ms).toBeGreaterThanOrEqual(from);
      expect(ms).toBeLessThanOrEqual(to);
    };

    const created = await client.createSchedule({
      schedule_id: "hourly",
      workflow: "Tick",
      interval: "1h",
      start_at: formatInstant(startAt),
    });
    let after = await databaseNow();
    expect(created.next_fire_at).toBe(formatInstant(startAt));
    inDbTime(created.created_at, before, after);
    inDbTime(created.updated_at, before, after);

    // An update recomputes the next fire from the database's now, and stamps its time.
    const t1 = await databaseNow();
    const updated = await client.updateSchedule("hourly", { description: "still starts at start_at" });
    after = await databaseNow();
    expect(updated.next_fire_at).toBe(formatInstant(startAt));
    inDbTime(updated.updated_at, t1, after);

    // So does a resume.
    await client.pauseSchedule("hourly");
    const t2 = await databaseNow();
    const resumed = await client.resumeSchedule("hourly");
    after = await databaseNow();
    expect(resumed.next_fire_at).toBe(formatInstant(startAt));
    inDbTime(resumed.updated_at, t2, after);
    expect((await client.getSchedule("hourly")).next_fire_at).toBe(formatInstant(startAt));
  });

  it("a server whose host clock is 40 s behind leases and stamps in the database's time (docs/cluster.md § One time for the cluster)", async () => {
    const { before, url, client } = await startShared(-40_000);
    await client.registerWorkflow({ name: "Slow", version: "1.0.0" });
    const started = await client.startExecution({ workflow: "Slow", input: {} });
    const res = await fetch(`${url}/v1/worker/poll`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        worker_id: "w-behind",
        workflows: [{ name: "Slow", version: "1.0.0", max_attempts: 1, backoff_ms: 1000 }],
        max_tasks: 1,
        wait_ms: 0,
      }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { tasks: unknown[] }).tasks).toHaveLength(1);
    const after = await databaseNow();

    // By the host's clock the lease would end 10 s before the database's now: every other server's
    // reaper would take it at once, and the step would run again elsewhere.
    const [task] = await query<{ lease_until_ms: string }>("SELECT lease_until_ms FROM orbit_worker_tasks", [], schema);
    expect(Number(task?.lease_until_ms)).toBeGreaterThanOrEqual(before + 29_000);
    expect(Number(task?.lease_until_ms)).toBeLessThanOrEqual(after + 31_000);
    const created = Date.parse(started.value.created_at);
    expect(created).toBeGreaterThanOrEqual(before - 1_000);
    expect(created).toBeLessThanOrEqual(after);

    // Doctor tells the host's clock, and that this server corrects for it.
    const clock = (await client.doctor()).checks.find((c) => c.name === "clock");
    expect(clock?.status).toBe("warn");
    expect(clock?.message).toMatch(
      /^this host's clock is (39|40|41)\d{3} ms behind the database's; this server keeps the database's time \(--cluster\)$/,
    );
  });
});
