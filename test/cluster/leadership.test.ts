/**
 * Active-standby in one process (docs/cluster.md): exactly one of two servers leads and /readyz says which;
 * a schedule created through the standby wakes the leader's idle firing loop at once (NOTIFY
 * orbit_schedules, migration 0004) instead of after its 30-second idle sleep; a leader whose lock
 * connection is cut stops leading at once and one server leads again within seconds; a leadership
 * closed while its first poll connects does not take the lock afterwards.
 */
import { afterEach, expect, it } from "vitest";
import { OrbitClient } from "../../src/client/client.js";
import { Leadership } from "../../src/server/leadership.js";
import { type RunningServer, startServer } from "../../src/server/server.js";
import {
  CLUSTER_DB,
  createSchema,
  describeCluster,
  dropSchema,
  eventually,
  newestExecutionMs,
  query,
} from "./support.js";

async function role(server: RunningServer): Promise<string | undefined> {
  const res = await fetch(`${server.url}/readyz`);
  return ((await res.json()) as { role?: string }).role;
}

async function roles(servers: RunningServer[]): Promise<(string | undefined)[]> {
  return Promise.all(servers.map(role));
}

describeCluster("cluster active-standby in one process", () => {
  let schema = "";
  let servers: RunningServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.map((s) => s.close()));
    servers = [];
    if (schema) await dropSchema(schema);
  });

  async function start(n: number, cluster: "active-standby" | "shared"): Promise<void> {
    schema = await createSchema();
    for (let i = 0; i < n; i++) {
      servers.push(
        await startServer({ database: CLUSTER_DB, databaseSchema: schema, cluster, port: 0, logger: "silent" }),
      );
    }
  }

  it("one leader; a schedule created through the standby fires on the leader within about a second", async () => {
    await start(2, "active-standby");
    const got = await eventually(async () => {
      const r = await roles(servers);
      return r.filter((x) => x === "leader").length === 1 ? r : null;
    }, 5000);
    expect([...got].sort()).toEqual(["leader", "standby"]);
    const standby = servers[got.indexOf("standby")] as RunningServer;
    const client = new OrbitClient({ baseUrl: standby.url });
    await client.registerWorkflow({ name: "Tick", version: "1.0.0" });
    const created = Date.now();
    await client.createSchedule({ schedule_id: "tick", workflow: "Tick", interval: "1s" });
    const first = await eventually(async () => {
      const t = await newestExecutionMs(schema);
      return t > 0 ? t : null;
    }, 20_000);
    console.log(`active-standby: first execution ${first - created} ms after the schedule was created on the standby`);
    // Woken by the standby's notification, not the leader's 30 s idle sleep (IDLE_SLEEP_MS): a
    // bound half that long tells the two apart on a loaded machine too.
    expect(first - created).toBeLessThan(15_000);
  });

  it("a shared server wakes when another server creates a schedule", async () => {
    await start(2, "shared");
    const client = new OrbitClient({ baseUrl: (servers[1] as RunningServer).url });
    await client.registerWorkflow({ name: "Tick", version: "1.0.0" });
    await client.createSchedule({ schedule_id: "tick", workflow: "Tick", interval: "1s" });
    await eventually(async () => (await newestExecutionMs(schema)) > 0, 5000);
    expect(await roles(servers)).toEqual(["shared", "shared"]);
  });

  it("a leader whose lock connection dies stops leading at once; one server leads again within seconds", async () => {
    await start(2, "active-standby");
    const before = await eventually(async () => {
      const r = await roles(servers);
      return r.includes("leader") ? r : null;
    }, 5000);
    const leader = before.indexOf("leader");
    // The session holding the leadership lock (hashtext() is int4; as a bigint key, objid is its low 32 bits).
    const cut = Date.now();
    const killed = await query<{ ok: boolean }>(
      `SELECT pg_terminate_backend(pid) AS ok FROM pg_locks
        WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND objid::bigint = (hashtext('orbit-leader:' || $1)::bigint & 4294967295) AND granted`,
      [schema],
    );
    expect(killed.map((k) => k.ok)).toEqual([true]);
    await eventually(async () => (await role(servers[leader] as RunningServer)) === "standby", 3000);
    const lost = Date.now() - cut;
    await eventually(async () => (await roles(servers)).includes("leader"), 5000);
    console.log(
      `active-standby: old leader stepped down ${lost} ms after its lock connection was cut; a leader again after ${Date.now() - cut} ms`,
    );
    expect((await roles(servers)).filter((r) => r === "leader")).toHaveLength(1);
  });
});

describeCluster("leadership's connection in an outage", () => {
  it("reports the failure and then each poll that reaches the database again (the log's works-again line)", async () => {
    const schema = await createSchema();
    const calls: string[] = [];
    const leadership = new Leadership({
      connectionString: CLUSTER_DB,
      searchPath: schema,
      onError: () => calls.push("error"),
      onOk: () => calls.push("ok"),
    });
    try {
      await leadership.start();
      expect(leadership.isLeader).toBe(true);
      expect(calls).toEqual(["ok"]);
      await query(
        `SELECT pg_terminate_backend(pid) FROM pg_locks
          WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND objid::bigint = (hashtext('orbit-leader:' || $1)::bigint & 4294967295) AND granted`,
        [schema],
      );
      // Before, only the failures were reported (a warning with its stack every second), and no
      // line said that the connection worked again.
      await eventually(
        async () => (calls.lastIndexOf("ok") > calls.indexOf("error") && calls.includes("error") ? true : null),
        5000,
      );
      expect(leadership.isLeader).toBe(true);
    } finally {
      await leadership.close();
      await dropSchema(schema);
    }
  });
});

describeCluster("leadership closed while its first poll connects", () => {
  it("does not take the lock after close(): another server can lead", async () => {
    const schema = await createSchema();
    try {
      for (let round = 0; round < 5; round++) {
        const closing = new Leadership({ connectionString: CLUSTER_DB, searchPath: schema, onError: () => undefined });
        const started = closing.start();
        await closing.close(); // during the connect (or the driver's load) of the first poll
        await started;
        expect(closing.isLeader).toBe(false);
        const next = new Leadership({ connectionString: CLUSTER_DB, searchPath: schema, onError: () => undefined });
        await next.start();
        expect(next.isLeader, `round ${round}: the closed one kept the lock`).toBe(true);
        await next.close();
      }
    } finally {
      await dropSchema(schema);
    }
  });
});
