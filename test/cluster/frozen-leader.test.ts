/**
 * A leader frozen rather than dead (docs/cluster.md § active-standby: leadership): SIGSTOP keeps
 * its sockets open, so PostgreSQL sees no connection drop. The lock connection's
 * `idle_session_timeout` ends its session, and a standby takes over; thawed, the old leader finds
 * its lock connection gone and stays a standby. Every occurrence is still started once.
 */
import { expect, it } from "vitest";
import { checkLedger } from "../../scripts/chaos/ledger.js";
import { findLeader, type ServerProcess } from "../../scripts/chaos/procs.js";
import { OrbitClient } from "../../src/client/client.js";
import { LEADERSHIP_IDLE_LIMIT_MS } from "../../src/server/leadership.js";
import { CLUSTER_DB, describeCluster, eventually, newestExecutionMs, useServerPair } from "./support.js";

describeCluster("cluster active-standby: a frozen leader", () => {
  const pair = useServerPair();

  it("a standby leads and fires within the idle limit of a SIGSTOP; the thawed leader stays a standby", async () => {
    const { schema, servers } = await pair.start("active-standby");
    const client = new OrbitClient({ baseUrl: (servers[0] as ServerProcess).url });
    await client.registerWorkflow({ name: "Tick", version: "1.0.0" });
    await client.createSchedule({ schedule_id: "tick-1s", workflow: "Tick", interval: "1s", overlap: "allow" });
    await eventually(async () => (await newestExecutionMs(schema)) > 0, 10_000);
    const leader = (await eventually(async () => (await findLeader(servers)) + 1, 5000)) - 1;
    const frozen = servers[leader] as ServerProcess;
    const standby = servers[1 - leader] as ServerProcess;

    frozen.freeze();
    const frozenAt = Date.now();
    // Before, nothing fired until the frozen process ran again or its socket died (hours of TCP
    // keepalive): the lock stayed with its session.
    await eventually(async () => (await standby.role()) === "leader", LEADERSHIP_IDLE_LIMIT_MS + 10_000);
    const next = await eventually(async () => {
      const t = await newestExecutionMs(schema);
      return t > frozenAt ? t : null;
    }, 10_000);
    console.log(`frozen leader: the standby fired ${next - frozenAt} ms after SIGSTOP`);

    frozen.thaw();
    // Thawed, its lock connection is gone: it steps down and does not lead beside the new leader.
    await eventually(async () => (await frozen.role()) === "standby", 10_000);
    expect(await findLeader(servers)).toBe(1 - leader);

    const pausedAt = Date.now();
    await new OrbitClient({ baseUrl: standby.url }).pauseSchedule("tick-1s");
    const summary = await checkLedger({ database: CLUSTER_DB, schema, accountedUntilMs: pausedAt - 3000 });
    expect(summary.violations).toEqual([]);
    expect(servers.every((s) => s.unexpectedExits === 0)).toBe(true);
  }, 60_000);
});
