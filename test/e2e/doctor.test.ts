/**
 * `orbit doctor` through the real CLI against a real `orbit server` process: nothing listening, a
 * fresh server, a scheduled workflow no worker polls (then a real Worker polling it), a server with
 * access control without and with a token. Exit 1 exactly when a check fails.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineWorkflow, OrbitClient, Worker } from "../../src/index.js";
import {
  type CliRun,
  e2eTitle,
  freePort,
  HAS_SERVER,
  type OrbitServer,
  orbit,
  startOrbitServer,
  waitFor,
} from "./harness.js";

/** `{name: status}` of the report's check lines. */
const statuses = (r: CliRun): Record<string, string> =>
  Object.fromEntries(
    r.stdout
      .split("\n")
      .map((line) => /^(ok|warn|fail) +(\S+(?: \S+)?) {2}/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[2] as string, m[1] as string]),
  );

describe.skipIf(!HAS_SERVER)(e2eTitle("orbit doctor (e2e)"), () => {
  it("fails the server check with a fix when nothing listens", async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const r = await orbit(["doctor", "--server", url]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^fail {2}server +cannot reach the Orbit server at http:\/\/127\.0\.0\.1:\d+/m);
    expect(r.stdout).toContain(
      `fix: start \`orbit server\`, or point the CLI at yours with --server URL or ORBIT_SERVER (now ${url})`,
    );
    expect(r.stdout).toMatch(/0 ok, 0 warning\(s\), 2 failed\n$/);
  });

  describe("a server without access control", () => {
    let server: OrbitServer;
    let worker: Worker | undefined;
    let working: Promise<void> | undefined;
    const cli = (...args: string[]): Promise<CliRun> => orbit([...args, "--server", server.url]);
    beforeAll(async () => {
      server = await startOrbitServer();
    });
    afterAll(async () => {
      await worker?.close();
      await working;
      if (server !== undefined && (await server.stop()) !== 0)
        throw new Error("orbit server did not exit 0 on SIGTERM");
    });

    it("passes every check on a fresh server (exit 0)", async () => {
      const r = await cli("doctor");
      expect(statuses(r)).toEqual({
        server: "ok",
        token: "ok",
        database: "ok",
        migrations: "ok",
        clock: "ok",
        workflows: "ok",
        workers: "ok",
        schedules: "ok",
        "local clock": "ok",
      });
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^ok +server +http:\/\/127\.0\.0\.1:\d+ answers; ready \(role single\)$/m);
      expect(r.stdout).toMatch(/^ok +migrations +current: \d+ applied, newest \d{4}_\w+$/m);
    });

    it("fails the workers check while no worker polls a scheduled workflow; passes once a worker does", async () => {
      await cli("workflow", "register", "--name", "Report", "--version", "1.0.0");
      await cli("schedule", "create", "weekly-report", "--workflow", "Report", "--cron", "0 6 * * MON");
      const before = await cli("doctor");
      expect(before.code).toBe(1);
      expect(statuses(before).workers).toBe("fail");
      expect(before.stdout).toMatch(
        /^fail +workers +no live worker \(seen in the last 60 s\) polls: Report@1\.0\.0 \(latest\), 1 schedule: weekly-report$/m,
      );
      expect(before.stdout).toMatch(/fix: start a worker with these workflows/);

      const Report = defineWorkflow({ name: "Report", version: "1.0.0", run: async () => ({ ok: true }) });
      worker = new Worker({ server: server.url, workflows: [Report] });
      working = worker.run();
      const client = new OrbitClient({ baseUrl: server.url });
      await waitFor(
        async () => ((await client.listWorkers()).length > 0 ? true : undefined),
        20_000,
        "the worker's first poll",
      );
      const after = await cli("doctor");
      expect(statuses(after).workers).toBe("ok");
      expect(after.code).toBe(0);
    });
  });

  describe("a server with access control", () => {
    let server: OrbitServer;
    let dir: string;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "orbit-doctor-"));
      const config = join(dir, "orbit.yaml");
      const sha = createHash("sha256").update("ops-token").digest("hex");
      writeFileSync(
        config,
        `identities:\n  - name: ops\n    token_sha256: ${sha}\n    kind: client\n    allow:\n      - workflows: "*"\n        actions: [schedule, start, read, cancel]\n`,
      );
      server = await startOrbitServer(["--config", config]);
    });
    afterAll(async () => {
      await server?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it("fails the token check without a token or with a wrong one, with a fix; passes with the right one", async () => {
      const none = await orbit(["doctor", "--server", server.url]);
      expect(none.code).toBe(1);
      expect(none.stdout).toMatch(/^fail +token +the server refused a request without a token: /m);
      expect(none.stdout).toContain("fix: this server has access control: pass --token or set ORBIT_TOKEN");
      const wrong = await orbit(["doctor", "--server", server.url, "--token", "nope"]);
      expect(statuses(wrong).token).toBe("fail");
      const right = await orbit(["doctor", "--server", server.url], { ORBIT_TOKEN: "ops-token" });
      expect(right.stdout).toMatch(/^ok +token +accepted: client "ops"$/m);
      expect(right.code).toBe(0);
    });
  });
});
