/**
 * A write stopped before its answer came may still be carried out: a tester paused the server,
 * pressed Ctrl-C on `orbit schedule trigger` (exit 130, only "still waiting" on stderr) and sent
 * `timeout`'s SIGTERM (nothing printed), and both times the server started the execution once it
 * resumed, under a key of the CLI's own that the user never saw. Now the CLI says the change may
 * or may not have been made and names the key, then exits 130 or 143; a read still just ends.
 * A real CLI process against a server that takes each request and never answers.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ROOT } from "../e2e/harness.js";
import { childArgs } from "../helpers/child.js";
import { runCli } from "./run-cli.js";

const ENTRY = join(ROOT, "src/cli/entry.ts");
const RETRY =
  "(within 24 hours): the server then answers what the first did, or does it now if it had not, never twice";

let server: Server;
let url: string;
/** Each request the server took (and holds unanswered). */
let taken: IncomingMessage[];
let child: ChildProcess | undefined;

beforeEach(async () => {
  taken = [];
  server = createServer((req) => {
    taken.push(req);
    server.emit("taken", req);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  if (child !== undefined && child.exitCode === null && child.signalCode === null) {
    child.kill("SIGKILL");
    await once(child, "close");
  }
  child = undefined;
  server.closeAllConnections();
  server.close();
  await once(server, "close");
});

interface Stopped {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  stdout: string;
  /** The Idempotency-Key the held request carried. */
  key: string | undefined;
}

/** Runs `orbit <args>`, sends `signal` once the server holds its request, and waits for it to end. */
async function stopWhileHeld(args: string[], signal: NodeJS.Signals): Promise<Stopped> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("ORBIT_")));
  const proc = spawn(process.execPath, [...childArgs(ENTRY), ...args], {
    cwd: ROOT,
    env: { ...clean, ORBIT_SERVER: url },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child = proc;
  let stdout = "";
  let stderr = "";
  proc.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  proc.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const closed = once(proc, "close") as Promise<[number | null, NodeJS.Signals | null]>;
  const [req] = (await Promise.race([once(server, "taken"), closed.then(() => [undefined])])) as [
    IncomingMessage | undefined,
  ];
  if (req === undefined) throw new Error(`the CLI ended before its request came: ${stderr}`);
  proc.kill(signal);
  const [code, sig] = await closed;
  const key = req.headers["idempotency-key"];
  return { code, signal: sig, stderr, stdout, key: typeof key === "string" ? key : undefined };
}

describe("a write stopped before its answer came", () => {
  it("Ctrl-C (SIGINT) says the trigger may have been made and names its key, exit 130", async () => {
    const r = await stopWhileHeld(["schedule", "trigger", "nightly-orders"], "SIGINT");
    expect(r.key).toMatch(/^orbit-cli-[0-9a-f-]{36}$/);
    expect([r.code, r.signal, r.stdout, r.stderr]).toEqual([
      130,
      null,
      "",
      `orbit: stopped by SIGINT (Ctrl-C) before the write's outcome was known; the change may or may not have been made: to retry it safely run the same command again with --idempotency-key ${r.key} ${RETRY}\n`,
    ]);
    expect(taken.map((q) => `${q.method} ${q.url}`)).toEqual(["POST /v1/schedules/nightly-orders/trigger"]);
  });

  it("SIGTERM (`timeout`, a service manager) says the same of a start given its own key, exit 143", async () => {
    const r = await stopWhileHeld(["start", "Uni", "--idempotency-key", "mine-1"], "SIGTERM");
    expect([r.code, r.signal, r.key, r.stderr]).toEqual([
      143,
      null,
      "mine-1",
      `orbit: stopped by SIGTERM before the write's outcome was known; the change may or may not have been made: to retry it safely run the same command again with --idempotency-key mine-1 ${RETRY}\n`,
    ]);
  });

  it("an apply, which sends no key, says to run it again", async () => {
    const dir = mkdtempSync(join(tmpdir(), "orbit-interrupt-"));
    const file = join(dir, "schedules.yaml");
    writeFileSync(file, "- schedule_id: s1\n  workflow: Uni\n  interval: 1h\n");
    const r = await stopWhileHeld(["schedule", "apply", "-f", file], "SIGINT").finally(() =>
      rmSync(dir, { recursive: true, force: true }),
    );
    expect([r.code, r.key, r.stderr]).toEqual([
      130,
      undefined,
      "orbit: stopped by SIGINT (Ctrl-C) before the write's outcome was known; the change may or may not have been made: `orbit schedule apply` run again makes the schedules match the file either way, and its plan shows what was left to do\n",
    ]);
  });

  it("a read stopped just ends, by the signal, saying nothing", async () => {
    const r = await stopWhileHeld(["schedule", "get", "nightly-orders"], "SIGINT");
    expect([r.code, r.signal, r.stderr]).toEqual([null, "SIGINT", ""]);
  });
});

it("the 5 s 'still waiting' line of a write names its key, for a Ctrl-C right after", async () => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  try {
    let key: string | null = null;
    let answer: (r: Response) => void = () => undefined;
    const slow = ((_url: unknown, init: RequestInit) => {
      key = new Headers(init.headers).get("idempotency-key");
      return new Promise<Response>((resolve) => {
        answer = resolve;
      });
    }) as unknown as typeof fetch;
    const running = runCli(["schedule", "trigger", "nightly"], {
      fetch: slow,
      env: { ORBIT_SERVER: "http://orbit.test:7233" },
    });
    await vi.advanceTimersByTimeAsync(5_000);
    answer(
      new Response(JSON.stringify({ code: "NOT_FOUND", message: "schedule nightly does not exist" }), { status: 404 }),
    );
    const r = await running;
    expect(key).toMatch(/^orbit-cli-/);
    expect(r.stderr).toBe(
      `orbit: still waiting for the server's answer after 5 s (busy, or waiting for its database); it gives up at 30 s; if stopped now, the change may still be made: to retry it safely run the same command again with --idempotency-key ${key}\norbit: schedule nightly does not exist\n`,
    );
  } finally {
    vi.useRealTimers();
  }
});
