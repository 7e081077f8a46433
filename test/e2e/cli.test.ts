/**
 * The seed's walkthrough against a real `orbit server`, driven by the real CLI. Times come from the
 * system clock, so they are checked by rule (Berlin 02:00, multiples of 10 s), not by value.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type CliRun,
  e2eTitle,
  freePort,
  HAS_SERVER,
  localHourMinute,
  type OrbitServer,
  orbit,
  startOrbitServer,
  waitFor,
} from "./harness.js";

const INPUT = (id: string): string =>
  `{"order_id": "${id}", "customer_id": "cust-1", "amount": 120.0, "items": [{"sku": "BOOK-1", "quantity": 1}]}`;
const INPUT_JSON = (id: string): string =>
  `{"order_id":"${id}","customer_id":"cust-1","amount":120.0,"items":[{"sku":"BOOK-1","quantity":1}]}`;

describe.skipIf(!HAS_SERVER)(e2eTitle("orbit CLI against a real server (e2e)"), () => {
  let server: OrbitServer;
  const cli = (...args: string[]): Promise<CliRun> => orbit([...args, "--server", server.url]);
  let manualId = "";

  beforeAll(async () => {
    server = await startOrbitServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("prints where it listens and what it stores in, then where the web UI is", async () => {
    expect(server.banner).toMatch(/^orbit server listening on http:\/\/127\.0\.0\.1:\d+ \(sqlite .*orbit\.db\)$/);
    // The UI is the newcomer's first stop; the line named only the API's address (a tester's report).
    await waitFor(async () => (server.output().includes("for the web UI") ? true : undefined), 5_000, "the UI line");
    expect(server.output()).toContain(`${server.banner}\nopen ${server.url}/ for the web UI\n`);
    expect((await fetch(`${server.url}/`)).headers.get("content-type")).toMatch(/^text\/html/);
  });

  it("registers a workflow (again: already registered)", async () => {
    const args = ["workflow", "register", "--name", "OrderProcessing", "--version", "1.0.0", "--description", "Orders"];
    expect(await cli(...args)).toEqual({ code: 0, stdout: "registered OrderProcessing@1.0.0\n", stderr: "" });
    expect((await cli(...args)).stdout).toBe("already registered OrderProcessing@1.0.0\n");
    expect((await cli("workflow", "list")).stdout).toBe(
      "NAME                     VERSION    DESCRIPTION\nOrderProcessing          1.0.0      Orders\n",
    );
  });

  it("creates the seed's nightly-orders and prints the seed's block", async () => {
    const r = await cli(
      ...["schedule", "create", "nightly-orders", "--workflow", "OrderProcessing", "--cron", "0 2 * * *"],
      ...["--timezone", "Europe/Berlin", "--input", INPUT("N-1"), "--description", "Nightly reconciliation order"],
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const lines = r.stdout.split("\n");
    expect(lines.slice(0, 9)).toEqual([
      'active nightly-orders  cron "0 2 * * *" Europe/Berlin',
      "  workflow:   OrderProcessing (latest version)",
      `  input:      ${INPUT_JSON("N-1")}`,
      "  overlap:    skip   catchup: skip_missed",
      "  description: Nightly reconciliation order",
      "  fired:      0   skipped: 0",
      "  last fire:  -",
      "  last run:   -",
      "  next fires:",
    ]);
    const fires = lines.slice(9, 14).map((l) => l.slice(4));
    expect(lines.slice(9, 14).every((l) => l.startsWith("    "))).toBe(true);
    for (const t of fires) {
      // 02:00 in Berlin is 01:00:00Z in winter, 00:00:00Z in summer (03:00 on the spring-forward night).
      expect(t).toMatch(/^\d{4}-\d\d-\d\dT0[01]:00:00Z$/);
      expect(["02:00", "03:00"]).toContain(localHourMinute(t, "Europe/Berlin"));
    }
    expect(lines.slice(14)).toEqual([""]);
  });

  it("creates the seed's orders-every-10s, aligned to multiples of 10 s", async () => {
    const r = await cli(
      ...["schedule", "create", "orders-every-10s", "--workflow", "OrderProcessing", "--interval", "10s"],
      ...["--input", INPUT("R-1")],
    );
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")[0]).toBe("active orders-every-10s  every 10s");
    const fires = r.stdout
      .split("\n")
      .slice(8, 13)
      .map((l) => Date.parse(l.trim()));
    expect(fires.every((ms) => ms % 10_000 === 0)).toBe(true);
    expect(fires.slice(1).map((ms, i) => ms - (fires[i] as number))).toEqual([10_000, 10_000, 10_000, 10_000]);
  });

  it("lists both in the seed's columns", async () => {
    const r = await cli("schedule", "list");
    const [header, nightly, tens] = r.stdout.split("\n");
    expect(header).toBe(
      "SCHEDULE                 WORKFLOW             TIMING                           STATE    NEXT FIRE              LAST EXECUTION",
    );
    expect(nightly).toMatch(
      /^nightly-orders {11}OrderProcessing {6}cron "0 2 \* \* \*" Europe\/Berlin {3}active {3}\d{4}-\d\d-\d\dT0[01]:00:00Z {3}-$/,
    );
    // Before its first fire, no last execution; after it, that run waits for a worker this test
    // never starts, and the list says so (it read as a flake when the fire came first, under load).
    expect(tens).toMatch(
      /^orders-every-10s {9}OrderProcessing {6}every 10s {24}active {3}\S+\d0Z {3}(-|orders-every-10s:\S+\d0Z \(NO WORKER\))$/,
    );
  });

  it("filters the list by workflow, in the Name@version form it prints, and says when nothing matches", async () => {
    await cli(
      "schedule",
      "create",
      "pinned-orders",
      "--workflow",
      "OrderProcessing@1.0.0",
      "--cron",
      "0 3 * * *",
      "--paused",
    );
    try {
      const pinned = await cli("schedule", "list", "--workflow", "OrderProcessing@1.0.0");
      expect(pinned.stdout.split("\n").slice(1, -1)).toEqual([
        expect.stringMatching(/^pinned-orders +OrderProcessing@1\.0\.0 /),
      ]);
      expect((await cli("schedule", "list", "--workflow", "OrderProcessing")).stdout.split("\n")).toHaveLength(5);
      const none = await cli("schedule", "list", "--workflow", "orderprocessing", "--state", "paused");
      expect(none.code).toBe(0);
      expect(none.stdout.split("\n")).toHaveLength(2); // the header alone
      expect(none.stderr).toBe("no schedule matches --workflow orderprocessing --state paused\n");
    } finally {
      await cli("schedule", "delete", "pinned-orders");
    }
  });

  it("triggers: started, then not started while it runs (both exit 0)", async () => {
    const first = await cli("schedule", "trigger", "nightly-orders");
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^started execution nightly-orders:manual:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\n$/);
    manualId = first.stdout.trim().replace("started execution ", "");
    const second = await cli("schedule", "trigger", "nightly-orders");
    expect(second).toEqual({
      code: 0,
      stdout: "not started: the previous execution of nightly-orders is still running (overlap: skip)\n",
      stderr: "",
    });
  });

  it("fires orders-every-10s by itself and lists the execution in ps", async () => {
    const id = await waitFor(
      async () => {
        const r = await cli("ps", "--schedule", "orders-every-10s", "--json");
        const page = JSON.parse(r.stdout) as { executions: Array<{ execution_id: string }> };
        return page.executions[0]?.execution_id;
      },
      25_000,
      "orders-every-10s to fire",
    );
    expect(id).toMatch(/^orders-every-10s:\d{4}-\d\d-\d\dT\d\d:\d\d:\d0Z$/);
    const ps = await cli("ps", "--workflow", "OrderProcessing");
    const lines = ps.stdout.split("\n");
    expect(lines[0]).toBe(
      "EXECUTION                              WORKFLOW                 VERSION    STATUS        AGE",
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^orders-every-10s:\S+Z {2}OrderProcessing {10}1\.0\.0 {6}RUNNING {7}(\d+ms|\d+\.\ds|\dm\d\ds)$/,
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(new RegExp(`^${manualId} OrderProcessing {10}1\\.0\\.0 {6}RUNNING`)),
    );
  });

  it("shows, cancels and shows again an execution", async () => {
    const status = await cli("status", manualId);
    expect(status.stdout).toMatch(
      new RegExp(
        `^RUNNING ${manualId} {2}OrderProcessing@1\\.0\\.0\\n {2}schedule: nightly-orders\\n {2}elapsed: \\S+\\n {2}waiting: no worker polls workflow OrderProcessing \\(none seen in the last 60 s\\): start a worker that runs OrderProcessing@1\\.0\\.0\\n$`,
      ),
    );
    expect((await cli("cancel", manualId, "--reason", "operator")).stdout).toBe(`cancelled ${manualId}\n`);
    const after = (await cli("status", manualId)).stdout.split("\n");
    expect(after[0]).toBe(`CANCELLED ${manualId}  OrderProcessing@1.0.0`);
    expect(after[3]).toBe("  cancel reason: operator");
  });

  it("pauses, resumes and updates, fenced by revision", async () => {
    expect((await cli("schedule", "pause", "nightly-orders")).stdout).toBe("paused nightly-orders\n");
    expect((await cli("schedule", "get", "nightly-orders")).stdout).toMatch(/^paused nightly-orders {2}cron/);
    expect((await cli("schedule", "resume", "nightly-orders")).stdout).toMatch(
      /^resumed nightly-orders \(next fire \d{4}-\d\d-\d\dT0[01]:00:00Z\)\n$/,
    );
    const stale = await cli("schedule", "update", "nightly-orders", "--description", "x", "--if-match", "1");
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/^orbit: .*revision/);
    const { revision } = JSON.parse((await cli("schedule", "get", "nightly-orders", "--json")).stdout) as {
      revision: number;
    };
    const r = await cli(
      "schedule",
      "update",
      "nightly-orders",
      "--description",
      "Half past",
      "--if-match",
      `${revision}`,
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("  description: Half past\n");
    expect(r.stdout).toContain(`  last run:   ${manualId}\n`);
  });

  it("lists the ledger, newest first", async () => {
    const lines = (await cli("schedule", "occurrences", "nightly-orders")).stdout.split("\n");
    expect(lines[0]).toBe("RECORDED                  KIND         OCCURRENCE                DETAIL");
    expect(lines[1]).toMatch(/^\S+Z +skipped {6}- {25}overlap$/);
    expect(lines[2]).toMatch(new RegExp(`^\\S+Z +started {6}- {25}${manualId} {2}CANCELLED$`));
  });

  it("refuses a bad cron (exit 1, the seed's message), a missing schedule, and bad usage (exit 2)", async () => {
    const bad = await cli("schedule", "create", "bad", "--workflow", "OrderProcessing", "--cron", "0 25 * * *");
    expect(bad).toEqual({
      code: 1,
      stdout: "",
      stderr: "orbit: cron `0 25 * * *`: `25` is out of range for the hour field (0-23)\n",
    });
    const missing = await cli("schedule", "get", "no-such-schedule");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^orbit: .*no-such-schedule/);
    const usage = await cli("schedule", "list", "--colour");
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("orbit: unknown option '--colour'");
  });

  it("deletes a schedule", async () => {
    expect((await cli("schedule", "delete", "orders-every-10s")).stdout).toBe("deleted orders-every-10s\n");
    expect((await cli("schedule", "get", "orders-every-10s")).code).toBe(1);
  });
});

describe("orbit CLI without a server (e2e)", () => {
  it("exits 1 with a clear message when nothing listens", async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const r = await orbit(["schedule", "list", "--server", url]);
    expect(r).toEqual({
      code: 1,
      stdout: "",
      stderr: `orbit: cannot reach the Orbit server at ${url} (is \`orbit server\` running?)\n`,
    });
  });
});
