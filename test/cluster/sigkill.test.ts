/**
 * The seed's end-to-end check on a cluster (docs/cluster.md): two `orbit server` processes on one
 * PostgreSQL schema fire a 1-second schedule; one of them (the leader, in active-standby) is killed
 * with SIGKILL and restarted. Every occurrence between the first and the last execution was started
 * exactly once or counted skipped. The failover time is printed, not asserted (goal: under 5 s).
 */
import { expect, it } from "vitest";
import { checkLedger } from "../../scripts/chaos/ledger.js";
import { findLeader, type ServerProcess } from "../../scripts/chaos/procs.js";
import { OrbitClient } from "../../src/client/client.js";
import type { ClusterMode } from "../../src/server/options.js";
import { CLUSTER_DB, describeCluster, eventually, newestExecutionMs, useServerPair } from "./support.js";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

for (const mode of ["shared", "active-standby"] as ClusterMode[]) {
  describeCluster(`cluster ${mode}: SIGKILL one of two servers`, () => {
    const pair = useServerPair();

    it("every occurrence between the first and the last execution started exactly once or counted skipped", async () => {
      const { schema, servers } = await pair.start(mode);
      const [a, b] = servers as [ServerProcess, ServerProcess];
      const client = new OrbitClient({ baseUrl: a.url });
      await client.registerWorkflow({ name: "Tick", version: "1.0.0" });
      // Created through the second server: in active-standby that may be the standby.
      const viaB = new OrbitClient({ baseUrl: b.url });
      await viaB.createSchedule({ schedule_id: "tick-1s", workflow: "Tick", interval: "1s", overlap: "allow" });
      await viaB.createSchedule({ schedule_id: "tick-1s-skip", workflow: "Tick", interval: "1s", overlap: "skip" });
      await eventually(async () => (await newestExecutionMs(schema)) > 0, 10_000);
      await sleep(2000);

      // Kill the leader (active-standby) or either server (shared), mid-run.
      const leader =
        mode === "active-standby" ? (await eventually(async () => (await findLeader(servers)) + 1, 5000)) - 1 : 0;
      const victim = servers[leader] as ServerProcess;
      const killedAt = Date.now();
      await victim.kill();
      const next = await eventually(async () => {
        const t = await newestExecutionMs(schema);
        return t > killedAt ? t : null;
      }, 15_000);
      console.log(
        `cluster ${mode}: next execution ${next - killedAt} ms after SIGKILL of ${mode === "active-standby" ? "the leader" : "a server"}`,
      );
      if (mode === "active-standby") {
        expect(await findLeader(servers)).toBe(1 - leader);
      }
      await sleep(2000);
      await victim.start();
      await sleep(3000);

      const pausedAt = Date.now();
      await client.pauseSchedule("tick-1s");
      await client.pauseSchedule("tick-1s-skip");
      const summary = await checkLedger({ database: CLUSTER_DB, schema, accountedUntilMs: pausedAt - 3000 });
      expect(summary.violations).toEqual([]);
      const tick = summary.schedules.find((s) => s.scheduleId === "tick-1s");
      expect(tick?.started).toBeGreaterThanOrEqual(8);
      expect(tick?.checked).toBe(tick?.started);
      expect(servers.every((s) => s.unexpectedExits === 0)).toBe(true);
    }, 45_000);
  });
}
