/**
 * A private PostgreSQL cluster for one test file, for the faults that the shared test database must
 * never see: a restart, a stop and a start (docs/testing.md § Fault suite). `initdb` into a temporary
 * directory, `pg_ctl` on a free port of 127.0.0.1, a socket in that directory, durability off (it is
 * thrown away). initdb refuses to run as root, so as root every binary runs as the `postgres` OS user
 * (`runuser`) in a directory it owns.
 *
 *   ORBIT_TEST_PG_BIN   the folder of initdb and pg_ctl (only there when set). Default
 *                       /usr/lib/postgresql/15/bin, else the first folder of PATH that has both.
 */
import { execFile, execFileSync } from "node:child_process";
import { appendFileSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "../cluster/support.js";

const run = promisify(execFile);

function binDir(): string | null {
  const set = process.env.ORBIT_TEST_PG_BIN;
  const candidates = set ? [set] : ["/usr/lib/postgresql/15/bin", ...(process.env.PATH ?? "").split(delimiter)];
  return candidates.find((d) => d && existsSync(join(d, "initdb")) && existsSync(join(d, "pg_ctl"))) ?? null;
}

/** uid and gid of an OS user, from /etc/passwd; null when there is none. */
function osUser(name: string): { uid: number; gid: number } | null {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${name}:`));
  const [, , uid, gid] = line?.split(":") ?? [];
  return uid === undefined || gid === undefined ? null : { uid: Number(uid), gid: Number(gid) };
}

export class PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`. */
  readonly url: string;
  private readonly data: string;
  private readonly logFile: string;

  private constructor(
    private readonly bin: string,
    private readonly dir: string,
    private readonly asPostgres: boolean,
    readonly port: number,
  ) {
    this.url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    this.data = join(dir, "data");
    this.logFile = join(dir, "postgres.log");
  }

  /**
   * initdb and start a cluster; resolves to it, or to the reason it cannot (no binaries, initdb or
   * the start failed), which the caller turns into a skip that says so.
   */
  static async start(): Promise<PrivatePostgres | string> {
    const bin = binDir();
    if (bin === null)
      return process.env.ORBIT_TEST_PG_BIN
        ? `no initdb and pg_ctl in ORBIT_TEST_PG_BIN (${process.env.ORBIT_TEST_PG_BIN})`
        : "no PostgreSQL binaries (initdb and pg_ctl) in /usr/lib/postgresql/15/bin or on PATH";
    const root = process.getuid?.() === 0;
    const owner = root ? osUser("postgres") : null;
    if (root && owner === null) return "running as root and there is no `postgres` OS user to run initdb as";
    const dir = mkdtempSync(join(tmpdir(), "orbit-pg-"));
    if (owner !== null) chownSync(dir, owner.uid, owner.gid);
    const pg = new PrivatePostgres(bin, dir, root, await freePort());
    try {
      await pg.ctl("initdb", ["-D", pg.data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"]);
      appendFileSync(
        join(pg.data, "postgresql.conf"),
        [
          `port = ${pg.port}`,
          "listen_addresses = '127.0.0.1'",
          `unix_socket_directories = '${dir}'`,
          "fsync = off",
          "synchronous_commit = off",
          "full_page_writes = off",
          "max_connections = 50",
          "",
        ].join("\n"),
      );
      await pg.startAgain();
      process.once("exit", pg.onExit);
      return pg;
    } catch (err) {
      const reason = `the private PostgreSQL cluster did not start: ${(err as Error).message.split("\n")[0]}`;
      await pg.destroy();
      return reason;
    }
  }

  /** `pg_ctl restart -m fast`: every connection is closed, then the server comes back. */
  restart(): Promise<void> {
    return this.pgCtl(["restart", "-m", "fast"]);
  }

  /** `pg_ctl stop -m fast`: connections are closed and new ones refused until {@link startAgain}. */
  stop(): Promise<void> {
    return this.pgCtl(["stop", "-m", "fast"]);
  }

  startAgain(): Promise<void> {
    return this.pgCtl(["start"]);
  }

  /** Is the server up (its pid file there)? */
  get running(): boolean {
    return existsSync(join(this.data, "postmaster.pid"));
  }

  /** Stops the server (immediately) if it runs and deletes its directory. Idempotent. */
  async destroy(): Promise<void> {
    process.removeListener("exit", this.onExit);
    if (this.running) await this.pgCtl(["stop", "-m", "immediate"]).catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** A test process that ends without destroy() (a crash, an interrupted run) leaves no server behind. */
  private readonly onExit = (): void => {
    try {
      const [cmd, argv] = this.command("pg_ctl", ["-D", this.data, "stop", "-m", "immediate"]);
      if (this.running) execFileSync(cmd, argv, { cwd: this.dir, stdio: "ignore", timeout: 10_000 });
    } catch {
      // best effort
    }
    rmSync(this.dir, { recursive: true, force: true });
  };

  private pgCtl(args: string[]): Promise<void> {
    return this.ctl("pg_ctl", ["-D", this.data, "-l", this.logFile, "-w", "-t", "30", ...args]);
  }

  /** The command line that runs `tool`: as the postgres OS user when this process is root. */
  private command(tool: string, args: string[]): [string, string[]] {
    const file = join(this.bin, tool);
    return this.asPostgres ? ["runuser", ["-u", "postgres", "--", file, ...args]] : [file, args];
  }

  private async ctl(tool: string, args: string[]): Promise<void> {
    const [cmd, argv] = this.command(tool, args);
    try {
      // cwd: the postgres user may not be allowed into the test's working directory.
      await run(cmd, argv, { cwd: this.dir, timeout: 60_000 });
    } catch (err) {
      const e = err as Error & { stderr?: string; stdout?: string };
      throw new Error(`${tool} ${args.join(" ")}: ${(e.stderr || e.stdout || e.message).trim()}`);
    }
  }
}
