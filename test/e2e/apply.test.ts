/**
 * `orbit schedule apply` against a real server: dry run, create, unchanged, update, prune scoped to
 * the apply set (--owner), all or nothing; and a clean stop.
 */
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
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

  it("needs one file: none, or two different ones, is bad usage (exit 2)", async () => {
    const none = await cli("schedule", "apply");
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^orbit: give the file to apply: orbit schedule apply -f FILE\n/);
    const two = await cli("schedule", "apply", file, "-f", `${file}.other`);
    expect(two.code).toBe(2);
    expect(two.stderr).toMatch(/two files given \(.*schedules\.yaml and .*schedules\.yaml\.other\)/);
    // -f twice: the second took the first's place, and --prune deleted the first file's schedules.
    const twice = await cli("schedule", "apply", "-f", file, "-f", `${file}.other`, "--prune", "--dry-run");
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/two files given \(.*schedules\.yaml and .*schedules\.yaml\.other\)/);
    const owners = await cli("schedule", "apply", "-f", file, "--owner", "a", "--owner", "b", "--prune");
    expect(owners.code).toBe(2);
    expect(owners.stderr).toMatch(/two owners given \(a and b\); an apply set has one owner/);
    // A malformed --selector is bad usage too (it exited 1, as a refusal).
    const selector = await cli("schedule", "apply", "-f", file, "--selector", "bad");
    expect(selector.code).toBe(2);
    expect(selector.stderr).toMatch(/--selector "bad" is not key=value/);
    expect((await cli("schedule", "list")).stdout.split("\n")).toHaveLength(3);
  });

  it("says what it would do with --dry-run and changes nothing", async () => {
    const r = await cli("schedule", "apply", "-f", file, "--owner", "shop", "--prune", "--dry-run");
    expect(r).toEqual({
      code: 0,
      stdout: [
        "would create nightly-orders",
        "would create weekly-report",
        "dry run, nothing changed: 2 created, 0 updated, 0 unchanged, 0 deleted",
        "",
      ].join("\n"),
      stderr: "",
    });
    expect((await cli("schedule", "list")).stdout.split("\n")).toHaveLength(3);
  });

  it("creates, then finds everything unchanged", async () => {
    expect((await cli("schedule", "apply", "-f", file, "--owner", "shop")).stdout).toBe(
      "created nightly-orders\ncreated weekly-report\n2 created, 0 updated, 0 unchanged, 0 deleted\n",
    );
    // The file may also be given alone, as most tools take it.
    expect((await cli("schedule", "apply", file, "--owner", "shop")).stdout).toBe(
      "unchanged nightly-orders\nunchanged weekly-report\n0 created, 0 updated, 2 unchanged, 0 deleted\n",
    );
    expect((await cli("schedule", "get", "weekly-report")).stdout).toMatch(/labels: +orbit\/owner=shop/);
    // The input as written in the file, as a create or a JSON body keeps it (it was "amount":120).
    expect((await cli("schedule", "get", "nightly-orders")).stdout).toContain(
      'input:      {"order_id":"N-1","customer_id":"cust-1","amount":120.0,"items":[{"sku":"BOOK-1","quantity":1}]}',
    );
  });

  it("updates only what changed; --prune deletes this set's schedules only (not hand-made ones)", async () => {
    writeFileSync(file, FILE.replace('"0 6 * * MON"', '"0 7 * * MON"'));
    const r = await cli("schedule", "apply", "-f", file, "--owner", "shop", "--prune");
    expect(r.stdout).toBe(
      'unchanged nightly-orders\nupdated weekly-report\n  cron: "0 6 * * MON" → "0 7 * * MON"\n0 created, 1 updated, 1 unchanged, 0 deleted\n',
    );
    expect((await cli("schedule", "get", "weekly-report")).stdout.split("\n")[0]).toBe(
      'active weekly-report  cron "0 7 * * MON" UTC',
    );
    // The file drops weekly-report: the dry run says it would go, the real run deletes it; the
    // hand-made orders-every-10s stays through both.
    writeFileSync(file, FILE.slice(0, FILE.indexOf("  - schedule_id: weekly-report")));
    const dry = await cli("schedule", "apply", "-f", file, "--owner", "shop", "--prune", "--dry-run");
    expect(dry.stdout).toBe(
      "unchanged nightly-orders\nwould delete weekly-report\ndry run, nothing changed: 0 created, 0 updated, 1 unchanged, 1 deleted\n",
    );
    const real = await cli("schedule", "apply", "-f", file, "--owner", "shop", "--prune");
    expect(real.stdout).toBe(
      "unchanged nightly-orders\ndeleted weekly-report\n0 created, 0 updated, 1 unchanged, 1 deleted\n",
    );
    const list = (await cli("schedule", "list")).stdout;
    expect(list).toContain("orders-every-10s");
    expect(list).not.toContain("weekly-report");
    // Another apply set cannot prune or take over shop's schedules.
    const other = await cli("schedule", "apply", "-f", file, "--owner", "reports", "--prune");
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(
      /^orbit: schedules\[0\] \(nightly-orders\): schedule nightly-orders belongs to another apply set/,
    );
    // Without --owner the set is orbit/owner=default, which shop's schedules are not in.
    expect((await cli("schedule", "apply", "-f", file, "--prune")).stderr).toMatch(
      /belongs to another apply set \(orbit\/owner=shop, not default\): apply it with --owner shop,/,
    );
  });

  it("--prune alone prunes what earlier applies without --owner made, never a hand-made schedule", async () => {
    const plain = join(dirname(file), "plain.yaml");
    const entry = (id: string) => `  - schedule_id: ${id}\n    workflow: OrderProcessing\n    interval: 1h\n`;
    writeFileSync(plain, `schedules:\n${entry("plain-a")}${entry("plain-b")}`);
    expect((await cli("schedule", "apply", "-f", plain)).stdout).toBe(
      "created plain-a\ncreated plain-b\n2 created, 0 updated, 0 unchanged, 0 deleted\n",
    );
    writeFileSync(plain, `schedules:\n${entry("plain-a")}`);
    expect(await cli("schedule", "apply", "-f", plain, "--prune")).toEqual({
      code: 0,
      stdout: "unchanged plain-a\ndeleted plain-b\n0 created, 0 updated, 1 unchanged, 1 deleted\n",
      stderr: "",
    });
    const list = (await cli("schedule", "list")).stdout;
    expect(list).toContain("orders-every-10s");
    expect(list).toContain("nightly-orders");
    expect(list).not.toContain("plain-b");
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

  it("rolls back an update made before a refused entry (one transaction)", async () => {
    writeFileSync(
      file,
      [
        "- {schedule_id: nightly-orders, workflow: OrderProcessing, cron: '0 4 * * *'}",
        "- {schedule_id: broken, workflow: OrderProcessing, cron: '0 3 * * *', overlap: sometimes}",
        "",
      ].join("\n"),
    );
    const r = await cli("schedule", "apply", "-f", file, "--owner", "shop");
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^orbit: schedules\[1\] \(broken\): overlap "sometimes"/);
    expect((await cli("schedule", "get", "nightly-orders")).stdout.split("\n")[0]).toContain('"0 2 * * *"');
  });

  it("declares workflows with kind: workflow; refuses an unregistered one unless --allow-unregistered", async () => {
    writeFileSync(
      file,
      [
        "- {kind: workflow, name: Report, version: 1.0.0, input_schema: {type: object, required: [day]}}",
        "- {schedule_id: report, workflow: Report, cron: '0 6 * * MON', input: {day: mon}}",
        "",
      ].join("\n"),
    );
    expect((await cli("schedule", "apply", "-f", file, "--owner", "reports", "--dry-run")).stdout).toBe(
      "would register workflow Report@1.0.0\nwould create report\ndry run, nothing changed: 1 created, 0 updated, 0 unchanged, 0 deleted, 1 workflows registered\n",
    );
    expect((await cli("schedule", "apply", "-f", file, "--owner", "reports")).stdout).toBe(
      "registered workflow Report@1.0.0\ncreated report\n1 created, 0 updated, 0 unchanged, 0 deleted, 1 workflows registered\n",
    );
    expect((await cli("workflow", "list")).stdout).toContain("Report");

    writeFileSync(file, "- {schedule_id: later, workflow: NotYet, interval: 1h}\n");
    const refused = await cli("schedule", "apply", "-f", file, "--owner", "reports");
    expect(refused).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "orbit: schedules[0] (later): workflow NotYet is not registered: start a worker that runs it (a worker registers its workflows), or orbit workflow register NotYet@<version>\n",
    });
    const allowed = await cli("schedule", "apply", "-f", file, "--owner", "reports", "--allow-unregistered");
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toBe(
      "created later (waiting: workflow NotYet is not registered: start a worker that runs it (a worker registers its workflows), or orbit workflow register NotYet@<version>; no execution starts until it is (applied with --allow-unregistered))\n1 created, 0 updated, 0 unchanged, 0 deleted\n",
    );
    expect((await cli("schedule", "get", "later")).stdout).toMatch(/last error: +workflow NotYet is not registered/);
  });
});

describe("orbit server flags (e2e)", () => {
  it("refuses bad flags with exit 2 before starting", async () => {
    const r = await orbit(["server", "--port", "70000"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--port <port>.*'70000' is invalid/);
  });
});
