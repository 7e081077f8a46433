/**
 * The package as a user gets it (docs/operations.md "Install"): `npm pack`, install the tarball into
 * an empty directory (production dependencies only, so nothing from devDependencies is there at run
 * time), start `orbit server` from that install, run a worker written against the installed
 * `orbit-scheduler`, see an execution complete, and stop the server with SIGTERM (exit 0).
 *
 * Speed: the install skips install scripts and copies the SQLite driver this checkout already built
 * (same Node, same better-sqlite3 version) instead of compiling it again (~100 s, minutes under load).
 * It packs the dist/ that `npm install`/`npm run build` produced.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../e2e/harness.js";
import { runCommand } from "../helpers/run-command.js";

const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { name: string; version: string };

const run = (cmd: string, args: readonly string[], cwd: string) => runCommand(cmd, args, cwd, 240_000);

const WORKER = `
import { OrbitClient, Worker, defineWorkflow } from "orbit-scheduler";

const url = process.argv[2];
const Greet = defineWorkflow({
  name: "PackSmoke",
  version: "1.0.0",
  async run(ctx, input) {
    const text = await ctx.step("greet", async () => "hello " + input.name);
    return { text };
  },
});
const client = new OrbitClient({ server: url });
await client.registerWorkflow({ name: Greet.name, version: Greet.version });
const quiet = { info() {}, warn: console.warn, error: console.error };
const worker = new Worker({ server: url, workflows: [Greet], logger: quiet });
const working = worker.run();
await client.createSchedule({ schedule_id: "pack-smoke", workflow: "PackSmoke", interval: "1h", input: { name: "tarball" } });
const { execution_id } = await client.triggerSchedule("pack-smoke");
let execution = await client.getExecution(execution_id);
while (execution.status === "RUNNING") {
  await new Promise((r) => setTimeout(r, 50));
  execution = await client.getExecution(execution_id);
}
await worker.close();
await working;
console.log(JSON.stringify({ status: execution.status, result: execution.result }));
`;

describe("npm pack: the tarball installs and runs on its own", () => {
  let dir = "";
  let server: ChildProcess | null = null;
  let exited: Promise<number | null> = Promise.resolve(null);
  let url = "";

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "orbit-pack-"));
    const packed = await run(NPM, ["pack", "--ignore-scripts", "--pack-destination", dir], ROOT);
    expect(packed.code, packed.stderr).toBe(0);
    const tarball = join(dir, `${pkg.name}-${pkg.version}.tgz`);
    const app = join(dir, "app");
    mkdirSync(app);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
    const installed = await run(
      NPM,
      ["install", "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund", tarball],
      app,
    );
    expect(installed.code, installed.stderr).toBe(0);
    const release = join("node_modules", "better-sqlite3", "build", "Release");
    mkdirSync(join(app, release), { recursive: true });
    copyFileSync(join(ROOT, release, "better_sqlite3.node"), join(app, release, "better_sqlite3.node"));
    writeFileSync(join(app, "worker.mjs"), WORKER);
  }, 300_000);

  afterAll(async () => {
    if (server !== null && server.exitCode === null) server.kill("SIGKILL");
    if (dir !== "") rmSync(dir, { recursive: true, force: true });
  });

  it("installs production dependencies only, with the name, bin and both entry points", () => {
    const app = join(dir, "app");
    const installed = join(app, "node_modules", pkg.name);
    expect(existsSync(join(installed, "dist", "index.d.ts"))).toBe(true);
    expect(existsSync(join(installed, "dist", "server", "server.d.ts"))).toBe(true);
    expect(existsSync(join(app, "node_modules", ".bin", "orbit"))).toBe(true);
    // The README's links point into docs/: the guides come with the package (not their screenshots).
    expect(existsSync(join(installed, "docs", "operations.md"))).toBe(true);
    expect(existsSync(join(installed, "docs", "ui"))).toBe(false);
    for (const dev of ["tsx", "typescript", "vitest", "@biomejs/biome"]) {
      expect(existsSync(join(app, "node_modules", dev)), dev).toBe(false);
    }
    // light-my-request@6.6.0 keeps cookie@2 (engines node >= 22) out of a Node 20 install.
    const cookie = JSON.parse(readFileSync(join(app, "node_modules", "cookie", "package.json"), "utf8"));
    expect(cookie.version).toMatch(/^1\./);
  });

  it("runs `orbit schedule preview` from the install", async () => {
    const app = join(dir, "app");
    const r = await run(
      process.execPath,
      [join(app, "node_modules", ".bin", "orbit"), "schedule", "preview", "--cron", "0 2 * * *", "--count", "2"],
      app,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/02:00/);
  });

  it("starts `orbit server`, completes an execution from a worker using the installed package, stops on SIGTERM", async () => {
    const app = join(dir, "app");
    server = spawn(
      process.execPath,
      [
        join(app, "node_modules", ".bin", "orbit"),
        "server",
        "--port",
        "0",
        "--data-dir",
        join(dir, "data"),
        "--log-level",
        "warn",
      ],
      { cwd: app, stdio: ["ignore", "pipe", "pipe"] },
    );
    const child = server;
    exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
    let output = "";
    url = await new Promise<string>((resolve, reject) => {
      const onData = (chunk: Buffer): void => {
        output += chunk.toString();
        const m = /listening on (http:\/\/\S+)/.exec(output);
        if (m?.[1]) resolve(m[1]);
      };
      child.stdout?.on("data", onData);
      child.stderr?.on("data", onData);
      child.once("exit", (code) => reject(new Error(`orbit server exited ${code}:\n${output}`)));
    });
    const w = await run(process.execPath, ["worker.mjs", url], app);
    expect(w.code, w.stderr).toBe(0);
    expect(JSON.parse(w.stdout.trim().split("\n").pop() ?? "{}")).toEqual({
      status: "COMPLETED",
      result: { text: "hello tarball" },
    });
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  }, 120_000);
});
