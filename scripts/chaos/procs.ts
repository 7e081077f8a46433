/**
 * Orbit server processes for the chaos harness and test/cluster: spawn one on a fixed port (so a
 * restart comes back at the same URL), wait for it to listen, SIGKILL it, ask who leads.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, type WriteStream } from "node:fs";
import { fileURLToPath } from "node:url";
import type { ClusterMode } from "../../src/server/options.js";

/** The server process's entry point. */
export const SERVER_ENTRY = fileURLToPath(new URL("./server-entry.ts", import.meta.url));

export interface ServerSpec {
  database: string;
  schema: string;
  cluster: ClusterMode;
  port: number;
  /** Misfire grace in ms. Default 60 000. */
  graceMs?: number;
  /** Appends the server's stdout and stderr here. Default: discarded. */
  logFile?: string;
  /** The node arguments that run SERVER_ENTRY. Default: through tsx; the tests pass a prebuilt copy. */
  nodeArgs?: string[];
  /** More environment for the process (another entry point's settings). Default none. */
  env?: Record<string, string>;
}

export class ServerProcess {
  private child: ChildProcess | null = null;
  private log: WriteStream | null = null;
  private stopping = false;
  readonly url: string;
  /** Exits this harness did not cause (a crash): the servers must stay up through an outage. */
  unexpectedExits = 0;

  constructor(readonly spec: ServerSpec) {
    this.url = `http://127.0.0.1:${spec.port}`;
    if (spec.logFile) this.log = createWriteStream(spec.logFile, { flags: "a" });
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts the process and resolves once it listens (rejects if it exits first or takes over 30 s). */
  start(): Promise<void> {
    const child = spawn(process.execPath, this.spec.nodeArgs ?? ["--import", "tsx", SERVER_ENTRY], {
      env: {
        ...process.env,
        ORBIT_CHAOS_DATABASE: this.spec.database,
        ORBIT_CHAOS_SCHEMA: this.spec.schema,
        ORBIT_CHAOS_CLUSTER: this.spec.cluster,
        ORBIT_CHAOS_PORT: String(this.spec.port),
        ORBIT_CHAOS_GRACE_MS: String(this.spec.graceMs ?? 60_000),
        ...this.spec.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    this.stopping = false;
    const log = this.log;
    log?.write(`--- start ${new Date().toISOString()}\n`);
    child.stderr?.on("data", (chunk: Buffer) => log?.write(chunk));
    return new Promise((resolve, reject) => {
      let seen = "";
      let started = false;
      const timer = setTimeout(
        () => reject(new Error(`server on port ${this.spec.port} did not start in 30 s`)),
        30_000,
      );
      child.stdout?.on("data", (chunk: Buffer) => {
        log?.write(chunk);
        if (started) return;
        seen += chunk.toString();
        if (seen.includes("ORBIT_READY")) {
          started = true;
          clearTimeout(timer);
          resolve();
        }
      });
      child.on("exit", (code, signal) => {
        clearTimeout(timer);
        log?.write(`--- exit ${code ?? signal} ${new Date().toISOString()}\n`);
        if (!started) reject(new Error(`server on port ${this.spec.port} exited while starting (${code ?? signal})`));
        else if (!this.stopping) this.unexpectedExits++;
      });
    });
  }

  /** SIGKILL: no shutdown, no unlock; the database sees the connections drop. */
  kill(): Promise<void> {
    return this.signal("SIGKILL");
  }

  /** SIGSTOP: the process stops running but keeps its sockets, as a paused VM would. */
  freeze(): void {
    this.child?.kill("SIGSTOP");
  }

  /** SIGCONT after {@link freeze}. */
  thaw(): void {
    this.child?.kill("SIGCONT");
  }

  /** SIGTERM: a clean close (SIGKILL after 10 s). */
  async stop(): Promise<void> {
    const timer = setTimeout(() => void this.kill(), 10_000);
    try {
      await this.signal("SIGTERM");
    } finally {
      clearTimeout(timer);
    }
  }

  private signal(sig: NodeJS.Signals): Promise<void> {
    const child = this.child;
    return new Promise((resolve) => {
      if (child === null || child.exitCode !== null || child.signalCode !== null) return resolve();
      this.stopping = true;
      child.once("exit", () => resolve());
      child.kill(sig);
    });
  }

  /** The role /readyz reports, or null when the server does not answer. */
  async role(): Promise<string | null> {
    try {
      const res = await fetch(`${this.url}/readyz`, { signal: AbortSignal.timeout(2000) });
      const body = (await res.json()) as { role?: string };
      return body.role ?? null;
    } catch {
      return null;
    }
  }

  close(): void {
    this.log?.end();
    this.log = null;
  }
}

/** The first index whose server reports `leader`, or -1. */
export async function findLeader(servers: readonly ServerProcess[]): Promise<number> {
  const roles = await Promise.all(servers.map((s) => (s.running ? s.role() : Promise.resolve(null))));
  return roles.indexOf("leader");
}
