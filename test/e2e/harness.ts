/**
 * Real processes for the end-to-end tests: an `orbit server` on a free port with a temporary data
 * directory, and the `orbit` CLI run as a subprocess against it — both from the sources, as
 * `node src/cli/entry.ts …` transpiled once per run (test/helpers/child.ts).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { childArgs } from "../helpers/child.js";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ENTRY = join(ROOT, "src/cli/entry.ts");

/** The e2e tests need the server's composition root (written alongside the CLI). */
export const HAS_SERVER = existsSync(join(ROOT, "src/server/server.ts"));

/** A suite title that says why it is skipped when the server does not exist. */
export const e2eTitle = (title: string): string =>
  HAS_SERVER ? title : `${title} — skipped: src/server/server.ts (startServer) does not exist yet`;

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `orbit <args…>` as a subprocess (no ORBIT_* variables from the outer environment). */
export function orbit(args: readonly string[], env: Record<string, string> = {}): Promise<CliRun> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("ORBIT_")));
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...childArgs(ENTRY), ...args],
      { cwd: ROOT, env: { ...clean, ...env }, timeout: 30_000 },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === "number" ? err.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** A port nothing listens on (bound, read, released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface OrbitServer {
  url: string;
  /** The line `orbit server` printed when it started listening. */
  banner: string;
  dataDir: string;
  /** What it wrote to stdout and stderr so far. */
  output(): string;
  /** Sends `signal` and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `orbit server --port 0` and waits for its `listening on` line. */
export async function startOrbitServer(extra: readonly string[] = []): Promise<OrbitServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "orbit-e2e-"));
  const child: ChildProcess = spawn(
    process.execPath,
    [...childArgs(ENTRY), "server", "--port", "0", "--data-dir", dataDir, "--log-level", "warn", ...extra],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let output = "";
  /** Everything written, before and after the banner. */
  let later = "";
  const banner = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`orbit server did not start:\n${output}`)), 30_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const line = /^orbit server listening on .*$/m.exec(output);
      if (line !== null) {
        clearTimeout(timer);
        resolve(line[0]);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    const keep = (chunk: Buffer): void => {
      later += chunk.toString();
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`orbit server exited with ${code}:\n${output}`));
    });
  });
  const url = /(http:\/\/\S+)/.exec(banner)?.[1] ?? "";
  return {
    url,
    banner,
    dataDir,
    output: () => later,
    async stop(signal = "SIGTERM") {
      if (child.exitCode === null) child.kill(signal);
      const code = await exited;
      rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
  };
}

/** Polls `check` until it returns a value (not undefined) or `timeoutMs` passes. */
export async function waitFor<T>(check: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Local wall time `HH:MM` of an RFC 3339 instant in `zone`. */
export function localHourMinute(instant: string, zone: string): string {
  return new Intl.DateTimeFormat("en-GB", {
    timeZone: zone,
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  }).format(new Date(instant));
}
