/** `orbit schedule apply` against a real server: dry run, create, unchanged, update, prune; and a clean stop. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliRun, e2eTitle, HAS_SERVER, type OrbitServer, orbit, startOrbitServer } from "./harness.js";

const FILE = `schedules:
  - schedule_id: nightly-orders
    workflow: OrderProcessing
    cron: "0 2 * * *"
    timezone: Europe/Berlin
    input: {order_id: N-1, customer_id: cust-1, amount: 120.0, items: [{sku: BOOK-1, quantity: 1}]}
    description: Nightly reconciliation order
  - schedule_id: weekly-report
    workflow: OrderProcessing
    cron: "0 6 * * MON"
`;

describe.skipIf(!HAS_SERVER)(e2eTitle("orbit schedule apply (e2e)"), () => {
  let server: OrbitServer;
  let file = "";
  const cli = (...args: string[]): Promise<CliRun> => orbit([...args, "--server", server.url]);

  beforeAll(async () => {
    server = await startOrbitServer();
    file = join(server.dataDir, "schedules.yaml");
    writeFileSync(file, FILE);
    await cli("workflow", "register", "--name", "OrderProcessing", "--version", "1.0.0");
    await cli("schedule", "create", "orders-every-10s", "--workflow", "OrderProcessing", "--interval", "10s");
  });
  afterAll(async () => {
    if (server !== undefined && (await server.stop()) !== 0) throw new Error("orbit server did not exit 0 on SIGTERM");
  });

  it("says what it would do with --dry-run and changes nothing", async () => {
    const r = await cli("schedule", "apply", "-f", file, "--prune", "--dry-run");
    expect(r).toEqual({
      code: 0,
      stdout: [
        "would create nightly-orders",
        "would create weekly-report",
        "would delete orders-every-10s",
        "dry run, nothing changed: 2 created, 0 updated, 0 unchanged, 1 deleted",
        "",
      ].join("\n"),
      stderr: "",
    });
    expect((await cli("schedule", "list")).stdout.split("\n")).toHaveLength(3);
  });

  it("creates, then finds everything unchanged", async () => {
    expect((await cli("schedule", "apply", "-f", file)).stdout).toBe(
      "created nightly-orders\ncreated weekly-report\n2 created, 0 updated, 0 unchanged, 0 deleted\n",
    );
    expect((await cli("schedule", "apply", "-f", file)).stdout).toBe(
      "unchanged nightly-orders\nunchanged weekly-report\n0 created, 0 updated, 2 unchanged, 0 deleted\n",
    );
  });

  it("updates only what changed and prunes what the file does not name", async () => {
    writeFileSync(file, FILE.replace('"0 6 * * MON"', '"0 7 * * MON"'));
    const r = await cli("schedule", "apply", "-f", file, "--prune");
    expect(r.stdout).toBe(
      'unchanged nightly-orders\nupdated weekly-report\n  cron: "0 6 * * MON" → "0 7 * * MON"\ndeleted orders-every-10s\n0 created, 1 updated, 1 unchanged, 1 deleted\n',
    );
    expect((await cli("schedule", "get", "weekly-report")).stdout.split("\n")[0]).toBe(
      'active weekly-report  cron "0 7 * * MON" UTC',
    );
    expect((await cli("schedule", "list")).stdout).not.toContain("orders-every-10s");
  });

  it("stops at the server's refusal with exit 1", async () => {
    writeFileSync(file, "- {schedule_id: broken, workflow: OrderProcessing, cron: '0 25 * * *'}\n");
    const r = await cli("schedule", "apply", "-f", file);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      "orbit: schedules[0] (broken): cron `0 25 * * *`: `25` is out of range for the hour field (0-23)\n",
    );
  });

  it("--dry-run refuses what the real run would refuse (an unknown zone), and a bad entry stops the whole file", async () => {
    writeFileSync(
      file,
      [
        "- {schedule_id: fine, workflow: OrderProcessing, cron: '0 3 * * *'}",
        "- {schedule_id: typo, workflow: OrderProcessing, cron: '0 3 * * *', timezone: Europe/Pariss}",
        "",
      ].join("\n"),
    );
    const dry = await cli("schedule", "apply", "-f", file, "--dry-run");
    const real = await cli("schedule", "apply", "-f", file);
    for (const r of [dry, real]) {
      expect(r.code).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(/^orbit: schedules\[1\] \(typo\): .*Europe\/Pariss/);
    }
    // All or nothing: the valid entry before the bad one was not created either.
    expect((await cli("schedule", "list")).stdout).not.toMatch(/\bfine\b/);
  });
});

describe("orbit server flags (e2e)", () => {
  it("refuses bad flags with exit 2 before starting", async () => {
    const r = await orbit(["server", "--port", "70000"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--port <port>.*'70000' is invalid/);
  });
});
