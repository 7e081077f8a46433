/**
 * `npm start` (examples/main.ts, README's first command) takes `--port` and `--data-dir`, so a
 * second one can run beside the first: they were ignored, and the refusal of a second server on
 * ./.orbit said to "give this server another --data-dir", which npm start did not take.
 * It runs examples/dist/main.js, which `npm install`/`npm run build` compiles (as `npm start` does).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { OrbitClient } from "../../src/client/client.js";
import { startServer } from "../../src/server/server.js";
import { e2eTitle, HAS_SERVER, ROOT } from "./harness.js";

const MAIN = join(ROOT, "examples", "dist", "main.js");

interface Started {
  child: ChildProcess;
  /** Everything it printed so far, stdout and stderr. */
  output: () => string;
  exited: Promise<number | null>;
}

function npmStart(args: readonly string[]): Started {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("ORBIT_")));
  const child = spawn(process.execPath, [MAIN, ...args], { cwd: ROOT, env: clean, stdio: ["ignore", "pipe", "pipe"] });
  let text = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => text, exited };
}

/** Resolves with the URL once it says it runs; rejects if it exits first. */
function running(started: Started): Promise<string> {
  return new Promise((resolve, reject) => {
    const look = (): void => {
      const m = /Orbit is running at (http:\/\/\S+) /.exec(started.output());
      if (m?.[1] && started.output().includes("Ctrl-C")) resolve(m[1]);
    };
    started.child.stdout?.on("data", look);
    void started.exited.then((code) => reject(new Error(`npm start exited ${code}:\n${started.output()}`)));
  });
}

describe.skipIf(!HAS_SERVER)(e2eTitle("npm start -- --port N --data-dir D"), () => {
  const dir = mkdtempSync(join(tmpdir(), "orbit-start-"));
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  it("listens on --port, keeps its data in --data-dir, names the server in its hints, and stops on SIGTERM", async () => {
    const data = join(dir, "data");
    const first = npmStart(["--port", "0", "--data-dir", data]);
    children.push(first.child);
    const url = await running(first);
    expect(url).not.toBe("http://127.0.0.1:7233");
    expect(first.output()).toContain(`(data in ${data})`);
    expect(first.output()).toContain(`node bin/orbit.js ps --server ${url}`);
    const health = await fetch(`${url}/v1/schedules/orders-every-10s`);
    expect(health.status).toBe(200);

    // A second one on the same data: refused in one line that says how to start it beside.
    const second = npmStart(["--port", "0", "--data-dir", data]);
    children.push(second.child);
    expect(await second.exited).toBe(1);
    expect(second.output()).toContain(`another Orbit server is using ${data}`);
    expect(second.output()).toContain("npm start -- --port");

    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
  }, 60_000);

  it("starts on a data folder where OrderProcessing@1.0.0 was registered by hand with another schema", async () => {
    // The quickstart's `orbit workflow register` (no schema) on ./.orbit, then `npm start` there:
    // it crashed with a stack trace on the 409 of its own registration.
    const data = join(dir, "registered");
    const earlier = await startServer({ port: 0, dataDir: data, logger: "silent" });
    await new OrbitClient({ server: earlier.url }).registerWorkflow({ name: "OrderProcessing", version: "1.0.0" });
    await earlier.close();

    const started = npmStart(["--port", "0", "--data-dir", data]);
    children.push(started.child);
    const url = await running(started);
    const schedule = await fetch(`${url}/v1/schedules/orders-every-10s`);
    expect(schedule.status).toBe(200);
    expect(started.output()).not.toMatch(/\n\s+at /);
    started.child.kill("SIGTERM");
    expect(await started.exited).toBe(0);
  }, 60_000);

  it("says in one line, not a stack trace, when the hand-registered schema refuses the demo's input", async () => {
    const data = join(dir, "strict");
    const earlier = await startServer({ port: 0, dataDir: data, logger: "silent" });
    await new OrbitClient({ server: earlier.url }).registerWorkflow({
      name: "OrderProcessing",
      version: "1.0.0",
      input_schema: { type: "object", required: ["foo"] },
    });
    await earlier.close();

    const started = npmStart(["--port", "0", "--data-dir", data]);
    children.push(started.child);
    expect(await started.exited).toBe(1);
    expect(started.output()).toContain("orbit: input does not match OrderProcessing@1.0.0");
    expect(started.output()).toContain("npm start -- --data-dir .orbit-demo");
    expect(started.output()).not.toMatch(/\n\s+at /);
  }, 60_000);

  it("describes the demo schedule as the data folder has it: paused, it says so and how to resume", async () => {
    // The banner said "starts an order every 10 seconds" of a schedule an earlier run paused.
    const data = join(dir, "paused");
    const first = npmStart(["--port", "0", "--data-dir", data]);
    children.push(first.child);
    const url = await running(first);
    expect(first.output()).toContain("the schedule orders-every-10s, which starts an order every 10 seconds.");
    expect((await fetch(`${url}/v1/schedules/orders-every-10s/pause`, { method: "POST" })).status).toBe(200);
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);

    const again = npmStart(["--port", "0", "--data-dir", data]);
    children.push(again.child);
    const url2 = await running(again);
    expect(again.output()).toContain(
      `the schedule orders-every-10s, which is paused (every 10s): node bin/orbit.js schedule resume orders-every-10s --server ${url2} starts it again.`,
    );
    again.child.kill("SIGTERM");
    expect(await again.exited).toBe(0);
  }, 60_000);

  it("refuses a flag it does not take, with its usage (exit 2)", async () => {
    const started = npmStart(["--prot", "7300"]);
    children.push(started.child);
    expect(await started.exited).toBe(2);
    expect(started.output()).toMatch(/--prot[\s\S]*usage: npm start -- \[--port N\] \[--data-dir DIR\]/);
    // --help is a question, not a mistake: the usage, exit 0 (it was "Unknown option '--help'", exit 2).
    const help = npmStart(["--help"]);
    children.push(help.child);
    expect(await help.exited).toBe(0);
    expect(help.output()).toMatch(/^usage: npm start -- \[--port N\] \[--data-dir DIR\]/m);
  }, 30_000);
});
