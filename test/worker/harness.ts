/**
 * Real processes for the worker tests: a server child (fixtures/server-main.ts) on a fresh test
 * database, and worker children (fixtures/worker-main.ts) that write marks to a file.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach } from "vitest";
import { OrbitClient } from "../../src/client/client.js";
import { childArgs } from "../helpers/child.js";
import type { TestDialect, TestLocation } from "../helpers/db.js";

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

export interface Child {
  proc: ChildProcess;
  /** The first stdout line after `READY `. */
  ready: string;
}

export function spawnChild(file: string, env: Record<string, string>): Promise<Child> {
  const proc = spawn(process.execPath, childArgs(fixture(file)), {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    proc.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split("\n").find((l) => l.startsWith("READY"));
      if (line !== undefined) resolve({ proc, ready: line.slice("READY".length).trim() });
    });
    proc.once("exit", (code) => reject(new Error(`${file} exited with ${code} before it was ready`)));
  });
}

export function stop(child: Child, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.proc.once("exit", () => resolve());
    child.proc.kill(signal);
  });
}

/** Polls `probe` until it returns something other than undefined/false. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 45_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface WorkerCluster {
  readonly client: OrbitClient;
  readonly location: TestLocation;
  /** The server's base URL (for the CLI's --server). */
  readonly url: string;
  /** A file in the test's temporary directory (deleted after the test). */
  file(name: string): string;
  startWorker(tag: string, env?: Record<string, string>): Promise<Child>;
  /** Mark lines written by the workers: `<worker> <execution> <what>`. */
  marks(executionId?: string): string[];
  /**
   * Moves the server's clock `ms` forward (test/helpers/jump-clock.ts): the leases it carries past
   * their end expire and the reaper hands their tasks back, whatever the lease length.
   */
  jumpServerClock(ms: number): Promise<void>;
  /**
   * Moves a worker's clock 20 s forward (SIGUSR2, fixtures/worker-main.ts): the heartbeat it was
   * waiting for goes out at once, with what it carries back (a cancel). One already under way when
   * the signal comes is not repeated: the next one then comes on time.
   */
  jumpWorkerClock(worker: Child): void;
}

/** A server (lease `leaseMs`) on a fresh database for each test; workers started on demand. */
export function useWorkerCluster(dialect: TestDialect, opts: { leaseMs: number }): WorkerCluster {
  let state: { location: TestLocation; server: Child; client: OrbitClient; dir: string; children: Child[] } | null =
    null;
  beforeEach(async () => {
    const location = await dialect.createLocation();
    const dir = mkdtempSync(join(tmpdir(), "orbit-worker-test-"));
    writeFileSync(join(dir, "marks"), "");
    const server = await spawnChild("server-main.ts", { ...location.env, ORBIT_TEST_LEASE_MS: String(opts.leaseMs) });
    state = { location, server, client: new OrbitClient({ baseUrl: server.ready }), dir, children: [] };
  });
  afterEach(async () => {
    if (!state) return;
    await Promise.all(state.children.map((c) => stop(c, "SIGKILL")));
    await stop(state.server);
    await state.location.destroy();
    rmSync(state.dir, { recursive: true, force: true });
    state = null;
  });
  const current = () => {
    if (!state) throw new Error("no cluster outside a test");
    return state;
  };
  return {
    get client() {
      return current().client;
    },
    get location() {
      return current().location;
    },
    get url() {
      return current().server.ready;
    },
    file(name) {
      return join(current().dir, name);
    },
    async startWorker(tag, env = {}) {
      const s = current();
      const child = await spawnChild("worker-main.ts", {
        ORBIT_TEST_SERVER: s.server.ready,
        ORBIT_TEST_MARKS: join(s.dir, "marks"),
        ORBIT_TEST_WORKER_TAG: tag,
        ...env,
      });
      s.children.push(child);
      return child;
    },
    async jumpServerClock(ms) {
      const res = await fetch(`${current().server.ready}/test/clock/jump`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ms }),
      });
      if (!res.ok) throw new Error(`the server's clock did not jump: ${res.status} ${await res.text()}`);
    },
    jumpWorkerClock(worker) {
      worker.proc.kill("SIGUSR2");
    },
    marks(executionId) {
      const lines = readFileSync(join(current().dir, "marks"), "utf8").split("\n").filter(Boolean);
      return executionId === undefined ? lines : lines.filter((l) => l.split(" ")[1] === executionId);
    },
  };
}
