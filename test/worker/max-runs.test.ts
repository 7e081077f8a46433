/**
 * max_runs end to end (docs/outcomes.md § Run-count limit): a schedule created by the CLI with
 * `--max-runs 2` on a 1-second interval starts two occurrences, which a worker process completes,
 * then ends: state ended, remaining_runs 0, shown so by `orbit schedule get` and `list`; a manual
 * trigger still starts and does not count.
 */
import { expect, it } from "vitest";
import { orbit } from "../e2e/harness.js";
import { describeEachDialect } from "../helpers/db.js";
import { useWorkerCluster, waitFor } from "./harness.js";

describeEachDialect("max_runs with a worker", (dialect) => {
  const cluster = useWorkerCluster(dialect, { leaseMs: 5000 });

  it("ends after two starts", async () => {
    const { client } = cluster;
    const env = { ORBIT_SERVER: cluster.url };
    await cluster.startWorker("A");
    const created = await orbit(
      ["schedule", "create", "twice", "--workflow", "Checkout", "--interval", "1s", "--input", '{"ok": true}'].concat([
        "--overlap",
        "allow",
        "--max-runs",
        "2",
      ]),
      env,
    );
    expect(created.code).toBe(0);
    const ended = await waitFor("the schedule ends", async () => {
      const s = await client.getSchedule("twice");
      return s.state === "ended" ? s : undefined;
    });
    expect(ended).toMatchObject({ max_runs: 2, remaining_runs: 0, next_fire_at: null, next_fire_times: [] });
    const { occurrences } = await client.listOccurrences("twice");
    // Two started; on a machine loaded enough to stall the loop past an occurrence, the older of two
    // late ones is recorded missed (only the freshest late one starts) and does not count.
    const started = occurrences.filter((o) => o.kind === "started");
    expect(started).toHaveLength(2);
    for (const o of occurrences.filter((o) => o.kind !== "started"))
      expect(o).toMatchObject({ kind: "skipped", reason: "missed" });
    const ids = started.map((o) => o.execution_id as string);
    for (const id of ids) {
      await waitFor(`${id} completes`, async () => (await client.getExecution(id)).status === "COMPLETED");
    }

    const get = await orbit(["schedule", "get", "twice"], env);
    expect(get.stdout).toMatch(/max runs: +2 \(all started: the schedule ended\)/);
    const list = await orbit(["schedule", "list"], env);
    expect(list.stdout).toMatch(/^twice .* ended /m);

    // A trigger is an explicit request: it starts, and the schedule stays ended with nothing left.
    const { execution_id } = await client.triggerSchedule("twice");
    await waitFor(
      "the trigger completes",
      async () => (await client.getExecution(execution_id!)).status === "COMPLETED",
    );
    expect(await client.getSchedule("twice")).toMatchObject({ state: "ended", remaining_runs: 0, fired: 3 });
    expect((await client.listOccurrences("twice")).occurrences.filter((o) => o.kind !== "started")).toEqual([]);
  }, 240_000);
});
