/**
 * `orbit server`'s stdout (docs/cli.md § orbit server): the JSON log and the "listening on" lines in
 * the order they happen, and a reader that goes away (`orbit server | head -1`) is no reason to stop
 * serving, nor to stop hearing SIGTERM; SIGHUP stops it as SIGTERM does.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { childArgs } from "../helpers/child.js";
import { freePort, ROOT, waitFor } from "./harness.js";

const ENTRY = join(ROOT, "src/cli/entry.ts");
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function serve(port: number, env: Record<string, string> = {}): ReturnType<typeof spawn> {
  const dataDir = mkdtempSync(join(tmpdir(), "orbit-stdout-"));
  dirs.push(dataDir);
  return spawn(process.execPath, [...childArgs(ENTRY), "server", "--port", String(port), "--data-dir", dataDir], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
}

it("prints the start's log lines before the listening line on a new database", async () => {
  const child = serve(await freePort());
  let out = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  await waitFor(async () => (out.includes("open http") ? true : undefined), 30_000, "the listening lines");
  child.kill("SIGTERM");
  expect(await exited).toBe(0);
  const lines = out.split("\n");
  const listening = lines.findIndex((l) => l.startsWith("orbit server listening on "));
  const created = lines.findIndex((l) => l.includes(`"msg":"created the database's tables"`));
  // pino's own writer is asynchronous: "created the database's tables" came after this line.
  expect(created).toBeGreaterThanOrEqual(0);
  expect(created).toBeLessThan(listening);
  expect(lines.at(-2)).toContain(`"msg":"orbit server stopped"`);
});

it("serves on, and stops on SIGTERM, once its stdout's reader went away", async () => {
  const port = await freePort();
  const child = serve(port);
  // The reader goes away at once, as `head -1` does after its line: every write of the server's
  // meets a closed pipe, the "listening on" line included.
  child.stdout?.destroy();
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  await waitFor(
    async () => {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null);
      return res?.ok === true ? true : undefined;
    },
    30_000,
    "the server to be ready",
  );
  child.kill("SIGTERM");
  // The command ended at the failed write, and the server ran on deaf to SIGTERM.
  const code = await Promise.race([exited, new Promise<string>((resolve) => setTimeout(resolve, 15_000, "running"))]);
  if (code === "running") child.kill("SIGKILL");
  expect(code).toBe(0);
});

/** A server started and listening, its stdout and stderr collected, and how it exits. */
async function listening(env: Record<string, string> = {}) {
  const child = serve(await freePort(), env);
  const seen = { out: "", err: "" };
  child.stdout?.on("data", (chunk: Buffer) => {
    seen.out += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    seen.err += chunk.toString();
  });
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once("exit", (code, signal) => resolve([code, signal])),
  );
  await waitFor(async () => (seen.out.includes("open http") ? true : undefined), 30_000, "the listening lines");
  return { child, seen, exited };
}

it("stops cleanly on SIGHUP (a closed terminal), saying why, instead of dying on the spot", async () => {
  const { child, seen, exited } = await listening();
  child.kill("SIGHUP");
  // Node's default ended it by the signal (exit 129), without its shutdown.
  expect(await exited).toEqual([0, null]);
  expect(seen.out).toContain(`"msg":"orbit server stopped"`);
  expect(seen.err).toBe("orbit: SIGHUP: the server stops (it has no settings to reload; restart it to change them)\n");
});

it("stops at once on Ctrl-C while the start waits for its database, instead of waiting on", async () => {
  // Ignored for the whole --database-wait before (a tester): the handlers that give SIGINT a clean
  // stop were set, and nothing stopped the start.
  const closed = await freePort(); // nothing listens there
  const dataDir = mkdtempSync(join(tmpdir(), "orbit-stdout-"));
  dirs.push(dataDir);
  const waiting = spawn(
    process.execPath,
    [
      ...childArgs(ENTRY),
      "server",
      "--port",
      String(await freePort()),
      "--database",
      `postgres://postgres@127.0.0.1:${closed}/orbit`,
      "--database-wait",
      "10m",
    ],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: process.env },
  );
  const seen = { out: "", err: "" };
  waiting.stdout?.on("data", (chunk: Buffer) => {
    seen.out += chunk.toString();
  });
  waiting.stderr?.on("data", (chunk: Buffer) => {
    seen.err += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => waiting.once("exit", resolve));
  // Its first failed attempt is logged: it is waiting for the database now.
  await waitFor(async () => (seen.out.includes('"attempt":1') ? true : undefined), 30_000, "the first attempt");
  waiting.kill("SIGINT");
  expect(await exited).toBe(130);
  expect(seen.err).toBe("orbit: SIGINT during start-up: stopped before the server started\n");
  expect(seen.out).not.toContain("listening on");
});

it("warns of each ORBIT_* variable it does not read, naming the flag to give instead", async () => {
  // A systemd unit's ORBIT_PORT=8080 was ignored without a word: the server listened on 7233.
  const { child, seen, exited } = await listening({ ORBIT_PORT: "8080", ORBIT_LOG_LEVEL: "debug", ORBIT_COLOUR: "1" });
  child.kill("SIGTERM");
  expect(await exited).toEqual([0, null]);
  const also = "(only ORBIT_DATABASE_URL and ORBIT_NOTIFY_SECRET configure the server)";
  expect(seen.err).toBe(
    [
      `orbit: ORBIT_COLOUR is set, but Orbit reads no such variable ${also}: the server's settings are flags (orbit server --help)`,
      `orbit: ORBIT_LOG_LEVEL is set, but Orbit reads no such variable ${also}: give --log-level instead`,
      `orbit: ORBIT_PORT is set, but Orbit reads no such variable ${also}: give --port instead`,
      "",
    ].join("\n"),
  );
});
