/**
 * `orbit doctor`: the things a newcomer gets wrong, checked one by one against the server the CLI
 * talks to (docs/operations.md § Doctor). This side checks what only the client can see (the server
 * answers, it is ready, the token is accepted, this machine's clock); the server checks the rest
 * (GET /v1/doctor: database writable, migrations, clock against the database, workflows and workers
 * of the active schedules, overdue schedules). Each check prints ok, warn or fail and, when not ok,
 * a fix. Exit 1 when a check failed, else 0.
 */
import type { Command } from "commander";
import { ServerUnreachableError } from "../client/http.js";
import type { DoctorCheckJson } from "../client/types.js";
import { OrbitError } from "../domain/errors.js";
import { VERSION } from "../version.js";
import { checked } from "./answer-shape.js";
import { addConnectionOptions, clientFor, resolveConnection } from "./connection.js";
import { EXIT_OK, EXIT_REFUSED, ExitWith } from "./exit.js";
import { type CliIO, OutputClosedError } from "./io.js";
import { oneLine } from "./safe-text.js";

/** This machine's clock against the server's: warn above this. */
const LOCAL_SKEW_WARN_MS = 5_000;

export function registerDoctorCommand(program: Command, io: CliIO): void {
  addConnectionOptions(program.command("doctor"))
    .description("check the server, token, database, migrations, clocks, workers and overdue schedules; print fixes")
    .option("--json", "print the checks as JSON")
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      const checks = await runChecks(cmd, io);
      const failed = checks.some((c) => c.status === "fail");
      try {
        if (opts.json === true) await io.stdout.write(`${JSON.stringify({ ok: !failed, checks })}\n`);
        else await io.stdout.write(report(checks));
      } catch (err) {
        // A reader gone away (`orbit doctor | head -0`) does not make a failed check pass: a
        // script reads the exit code (it was 0).
        if (!(err instanceof OutputClosedError)) throw err;
      }
      throw new ExitWith(failed ? EXIT_REFUSED : EXIT_OK);
    });
}

async function runChecks(cmd: Command, io: CliIO): Promise<DoctorCheckJson[]> {
  const { server, token } = resolveConnection(cmd, io);
  const client = clientFor(cmd, io);
  const checks: DoctorCheckJson[] = [];
  const skipped = (why: string): DoctorCheckJson[] => [
    ...checks,
    { name: "other checks", status: "fail", message: `not run: ${why}` },
  ];

  try {
    await client.health();
  } catch (err) {
    const status = err instanceof OrbitError ? err.details?.httpStatus : undefined;
    if (typeof status === "number") {
      // It answered, in Orbit's form (503 while it shuts down): "start `orbit server`" and "does
      // not answer" were said of a server that had just said why it was not healthy (a tester).
      checks.push({
        name: "server",
        status: "fail",
        message: `${server} answered /healthz with ${status}: ${(err as Error).message}`,
        hint: "read the server's log: it may be stopping (a deploy, a restart) or starting; run orbit doctor again once it answers ok",
      });
      return skipped(`the server answered /healthz with ${status}, not ok`);
    }
    const said = answeredOtherwise(err, server);
    if (said !== null) {
      checks.push(said.check);
      return skipped(said.skipped);
    }
    checks.push({
      name: "server",
      status: "fail",
      message: (err as Error).message,
      hint: `start \`orbit server\`, or point the CLI at yours with --server URL or ORBIT_SERVER (now ${server})`,
    });
    return skipped("the server does not answer");
  }
  let notReady: string | null = null;
  try {
    const ready = checked(await client.ready(), "the answer to GET /readyz", { role: "text" });
    checks.push({ name: "server", status: "ok", message: `${server} answers; ready (role ${ready.role})` });
  } catch (err) {
    if (err instanceof TypeError) {
      checks.push(otherShape("server", err));
      return skipped("the server's answer is not what this CLI expects");
    }
    notReady = (err as Error).message;
    checks.push({
      name: "server",
      status: "fail",
      message: `${server} answers but is not ready: ${(err as Error).message}`,
      hint: "read the server's log: it names the database error or says it is starting or stopping",
    });
  }

  try {
    const me = checked(await client.me(), "the answer to GET /v1/me", { name: "text or null" });
    if (me.name === null) {
      checks.push(
        token === null
          ? {
              name: "token",
              status: "ok",
              message: "none needed: the server has no access control (keep it on loopback)",
            }
          : {
              name: "token",
              status: "warn",
              message: "a token is set, but the server has no access control: anyone who reaches it may do anything",
              hint: "give the server a --config with tokens before it listens beyond loopback (docs/security.md)",
            },
      );
    } else {
      checks.push({ name: "token", status: "ok", message: `accepted: ${me.kind} "${me.name}"` });
    }
  } catch (err) {
    if (err instanceof TypeError) {
      checks.push(otherShape("token", err));
      return skipped("the server's answers are not what this CLI expects");
    }
    if (!(err instanceof OrbitError)) throw err;
    checks.push({
      name: "token",
      status: "fail",
      message: `the server refused ${token === null ? "a request without a token" : "the token"}: ${err.message}`,
      hint:
        token === null
          ? "this server has access control: pass --token or set ORBIT_TOKEN to a client token from its --config"
          : "check --token / ORBIT_TOKEN against the tokens in the server's --config (a worker token is not enough)",
    });
    return skipped("the server refused the token");
  }

  let serverTime: number;
  try {
    const r = checked(await client.doctor(), "the answer to GET /v1/doctor", { server_time: "text" });
    for (const c of r.checks)
      checked(c, "a check of GET /v1/doctor", { name: "text", status: "text", message: "text" });
    checks.push(...workersBehind(r.checks, notReady));
    serverTime = Date.parse(r.server_time);
  } catch (err) {
    if (err instanceof TypeError) {
      checks.push(otherShape("server checks", err));
      return checks;
    }
    if (err instanceof ServerUnreachableError) {
      // It answered the checks above: its own checks wait on the database (a lock held on a table
      // or the file, a stalled connection), which the server reports only after its 30 s wait.
      checks.push({
        name: "server checks",
        status: "fail",
        message: `GET /v1/doctor: ${err.reason}; the server answered the checks above, so its own checks are waiting on the database`,
        hint: "another session may hold a lock on Orbit's tables (PostgreSQL: pg_locks, pg_stat_activity) or on the SQLite file; GET /readyz and the server's log say more",
      });
      return checks;
    }
    if (!(err instanceof OrbitError)) throw err;
    checks.push({
      name: "server checks",
      status: "fail",
      message: `GET /v1/doctor: ${err.message}`,
      hint:
        err.code === "PERMISSION_DENIED"
          ? "use a client token (not a worker's)"
          : err.code === "UNAVAILABLE"
            ? "the server cannot reach its database: GET /readyz says why; the server recovers by itself once the database answers"
            : err.code === "NOT_FOUND"
              ? "upgrade the server to this CLI's release"
              : "read the server's log",
    });
    return checks;
  }
  const skew = io.now() - serverTime;
  const text = `this machine's clock is ${Math.round(Math.abs(skew) / 1000)} s ${skew >= 0 ? "ahead of" : "behind"} the server's`;
  checks.push(
    Math.abs(skew) > LOCAL_SKEW_WARN_MS
      ? {
          name: "local clock",
          status: "warn",
          message: text,
          hint: "synchronise this machine's clock (NTP): the CLI's local times and ages use it",
        }
      : { name: "local clock", status: "ok", message: text },
  );
  return checks;
}

/**
 * The server check when /healthz got an answer that is not ok and not in Orbit's form (a proxy's
 * 500, a web page), or none in time from a server that took the connection (stopped with SIGSTOP,
 * its event loop blocked); null for the rest. Both said "start `orbit server`" and "does not
 * answer" of a server that ran (a tester).
 */
function answeredOtherwise(err: unknown, server: string): { check: DoctorCheckJson; skipped: string } | null {
  if (err instanceof OrbitError) {
    return {
      check: {
        name: "server",
        status: "fail",
        message: `${server} answered /healthz with an error: ${err.message}`,
        hint: "if it is `orbit server`, read its log (it may be failing or starting); if it is a proxy or another program, point the CLI at Orbit's address with --server URL or ORBIT_SERVER",
      },
      skipped: "the server answered /healthz with an error, not ok",
    };
  }
  if (err instanceof ServerUnreachableError && err.unanswered) {
    return {
      check: {
        name: "server",
        status: "fail",
        message: err.message,
        hint: "it took the connection and sent no answer: the process runs but is stuck (stopped by SIGSTOP or a debugger, its event loop blocked) or waits for its database; read its log and look at the process (ps, systemctl status), then run orbit doctor again",
      },
      skipped: "the server took the connection but did not answer in time",
    };
  }
  if (err instanceof TypeError)
    return { check: otherShape("server", err), skipped: "the server's answer is not what this CLI expects" };
  return null;
}

/** A check failed by an answer of another shape than this release's (an older or newer server, another program). */
function otherShape(name: string, err: TypeError): DoctorCheckJson {
  return {
    name,
    status: "fail",
    message: `the server's answer is not what orbit ${VERSION} expects: ${err.message}`,
    hint: "is --server (or ORBIT_SERVER) an Orbit server of this release? Its answers name theirs in the Orbit-Version header, `orbit version` names this CLI's: upgrade the older",
  };
}

/**
 * The server's checks, a failed workers check saying why it may fail when the server is not ready
 * or its database check failed: a worker whose polls are answered 503 (a full disk under the
 * server) is not seen as live, and "start a worker" was said beside one running (a tester).
 */
function workersBehind(checks: readonly DoctorCheckJson[], notReady: string | null): DoctorCheckJson[] {
  const database = checks.find((c) => c.name === "database" && c.status === "fail");
  const cause =
    database !== undefined
      ? "the server's database check failed (above)"
      : notReady !== null
        ? `the server is not ready (${notReady})`
        : null;
  if (cause === null) return [...checks];
  return checks.map((c) =>
    c.name !== "workers" || c.status !== "fail"
      ? c
      : {
          ...c,
          message: `${c.message}; ${cause}, so workers that run may be unable to reach it: their polls are refused and they are not seen`,
          hint: `fix what the checks above name first, then run orbit doctor again${c.hint === undefined ? "" : `; if this still fails: ${c.hint}`}`,
        },
  );
}

/** One line per check (`ok    database    …`), its fix under it, then the counts. */
export function report(checks: readonly DoctorCheckJson[]): string {
  const width = Math.max(...checks.map((c) => c.name.length));
  let out = "";
  for (const c of checks) {
    out += `${c.status.padEnd(5)} ${c.name.padEnd(width)}  ${oneLine(c.message)}\n`;
    if (c.hint !== undefined) out += `${" ".repeat(6 + width + 2)}fix: ${oneLine(c.hint)}\n`;
  }
  const n = (s: DoctorCheckJson["status"]): number => checks.filter((c) => c.status === s).length;
  out += `${n("ok")} ok, ${n("warn")} warning(s), ${n("fail")} failed\n`;
  return out;
}
