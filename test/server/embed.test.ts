/**
 * Library mode (docs/operations.md § Embed): startServer, a worker and a schedule in one process,
 * through the package's two entry points (src/index.ts is "orbit-scheduler", src/server/server.ts is
 * "orbit-scheduler/server"); close() in reverse leaves the port free and the database reopenable.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { defineWorkflow, OrbitClient, Worker } from "../../src/index.js";
import { startServer } from "../../src/server/server.js";

const quiet = { info: () => undefined, warn: () => undefined, error: console.error };

describe("embedded server", () => {
  const dir = mkdtempSync(join(tmpdir(), "orbit-embed-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("runs the server, a worker and a schedule in one process and closes cleanly", async () => {
    const server = await startServer({ port: 0, dataDir: dir, logger: "silent" });
    let ran!: (team: string) => void;
    const ranOnce = new Promise<string>((resolve) => (ran = resolve));
    const Report = defineWorkflow<{ team: string }>({
      name: "DailyReport",
      version: "1.0.0",
      async run(ctx, input) {
        const rows = await ctx.step("query", async () => 42);
        ran(input.team);
        return { team: input.team, rows };
      },
    });
    const client = new OrbitClient({ baseUrl: server.url });
    await client.registerWorkflow({ name: Report.name, version: Report.version });
    await client.createSchedule({
      schedule_id: "daily",
      workflow: "DailyReport",
      cron: "0 7 * * *",
      input: { team: "ops" },
    });
    const worker = new Worker({ server: server.url, workflows: [Report], logger: quiet });
    const working = worker.run();
    const execution_id = (await client.triggerSchedule("daily")).execution_id!;
    expect(await ranOnce).toBe("ops");
    let execution = await client.getExecution(execution_id);
    while (execution.status === "RUNNING") execution = await client.getExecution(execution_id);
    expect(execution.status).toBe("COMPLETED");
    expect(execution.result).toEqual({ team: "ops", rows: 42 });
    await worker.close();
    await working;
    await server.close();
    await server.close(); // idempotent
    // The port is free again and the database opens in a new server with the schedule in it.
    await new Promise<void>((resolve, reject) => {
      const probe = createServer().once("error", reject);
      probe.listen(server.port, "127.0.0.1", () => probe.close(() => resolve()));
    });
    const again = await startServer({ port: 0, dataDir: dir, logger: "silent" });
    const reopened = new OrbitClient({ baseUrl: again.url });
    expect((await reopened.getSchedule("daily")).workflow).toBe("DailyReport");
    await again.close();
  });
});
