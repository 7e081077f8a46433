/**
 * Deprecated workflow versions (docs/outcomes.md § Deprecated versions), for real: a version no
 * worker runs is deprecated with `orbit workflow deprecate`, and a schedule on "latest" then starts
 * the newest version that is not deprecated, which a worker runs to the end. Undeprecate brings it
 * back; with every version deprecated "latest" is refused, and a pinned version still starts.
 */
import { expect, it } from "vitest";
import { OrbitError } from "../../src/domain/errors.js";
import { orbit } from "../e2e/harness.js";
import { describeEachDialect } from "../helpers/db.js";
import { useWorkerCluster, waitFor } from "./harness.js";

describeEachDialect("deprecated workflow versions", (dialect) => {
  const cluster = useWorkerCluster(dialect, { leaseMs: 5000 });

  it("latest skips deprecated versions", async () => {
    const { client } = cluster;
    const env = { ORBIT_SERVER: cluster.url };
    await cluster.startWorker("A"); // runs Checkout@1.0.0
    const schema = { type: "object", properties: { ok: { type: "boolean", default: false } } };
    await client.registerWorkflow({ name: "Checkout", version: "2.0.0", input_schema: schema });

    const deprecated = await orbit(["workflow", "deprecate", "Checkout", "2.0.0"], env);
    expect(deprecated.stdout).toBe("deprecated Checkout@2.0.0\n");
    expect(deprecated.code).toBe(0);
    const list = await orbit(["workflow", "list"], env);
    expect(list.stdout).toMatch(/Checkout +2\.0\.0 +\[deprecated\]\n/);
    const versions = (await client.getWorkflow("Checkout")).versions;
    expect(versions.map((v) => [v.version, v.deprecated_at !== null])).toEqual([
      ["2.0.0", true],
      ["1.0.0", false],
    ]);

    await client.createSchedule({ schedule_id: "pay", workflow: "Checkout", input: { ok: true }, interval: "1h" });
    const { execution_id } = await client.triggerSchedule("pay");
    const done = await waitFor("the scheduled run completes", async () => {
      const e = await client.getExecution(execution_id!);
      return e.status === "COMPLETED" ? e : undefined;
    });
    expect(done).toMatchObject({ version: "1.0.0", result: { paid: true } });
    expect((await client.startExecution({ workflow: "Checkout", input: { ok: true } })).value.version).toBe("1.0.0");
    // A pinned version still starts.
    const pinned = await client.startExecution({ workflow: "Checkout", version: "2.0.0", input: {} });
    expect(pinned.value.version).toBe("2.0.0");

    // Undeprecated: latest is 2.0.0 again.
    const back = await orbit(["workflow", "undeprecate", "Checkout", "2.0.0", "--json"], env);
    expect(JSON.parse(back.stdout)).toMatchObject({ name: "Checkout", version: "2.0.0", deprecated_at: null });
    expect((await client.startExecution({ workflow: "Checkout", input: {} })).value.version).toBe("2.0.0");

    // Every version deprecated: "latest" is refused, naming why; nothing is started.
    await client.deprecateWorkflow("Checkout", "2.0.0");
    await client.deprecateWorkflow("Checkout", "1.0.0");
    const before = (await client.listExecutions({ workflow: "Checkout" })).executions.length;
    const refused = await client.startExecution({ workflow: "Checkout", input: {} }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OrbitError);
    expect((refused as OrbitError).message).toBe(
      "every version of workflow Checkout is deprecated (2.0.0, 1.0.0): undeprecate one, register a new one, or pin a version",
    );
    expect((await client.listExecutions({ workflow: "Checkout" })).executions).toHaveLength(before);

    // Unknown versions are 404 and change nothing.
    const missing = await orbit(["workflow", "deprecate", "Checkout", "9.9.9"], env);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("workflow Checkout@9.9.9 is not registered");
  }, 240_000);
});
