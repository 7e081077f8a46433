/**
 * The global options every server command shares: where the server is and how to authenticate.
 * Commands that talk to the server resolve them here and hand them to src/client/.
 */
import type { Command } from "commander";
import { OrbitClient } from "../client/client.js";
import { bearerToken, DEFAULT_TIMEOUT_MS, serverUrl, type UnansweredWrite } from "../client/http.js";
import { abortableSleep } from "../domain/sleep.js";
import { usageError } from "./args.js";
import type { CliIO } from "./io.js";
import { oneLine } from "./safe-text.js";
import {
  maybeDoneText,
  noteRefusedWrite,
  repeatsUnavailableWrites,
  UNAVAILABLE_REPEAT_WAITS_MS,
} from "./write-retry.js";

/** The server the CLI talks to when neither `--server` nor ORBIT_SERVER says otherwise. */
export const DEFAULT_SERVER = "http://127.0.0.1:7233";

export interface Connection {
  /** Base URL of the server; `--server`, else ORBIT_SERVER, else {@link DEFAULT_SERVER}. */
  readonly server: string;
  /** Bearer token; `--token`, else ORBIT_TOKEN, else none. */
  readonly token: string | null;
}

/**
 * Adds `--server` and `--token` to the root command, and to each command that talks to a server
 * (so they may follow the command too: `orbit ps --server URL`).
 */
export function addConnectionOptions(program: Command): Command {
  return program
    .option("--server <url>", `server URL (env: ORBIT_SERVER, default: ${DEFAULT_SERVER})`)
    .option("--token <token>", "bearer token for a server with access control (env: ORBIT_TOKEN)");
}

/** The connection for `cmd`, from its global options and the environment. */
export function resolveConnection(cmd: Command, io: CliIO): Connection {
  const opts = { server: nearest(cmd, "server"), token: nearest(cmd, "token") };
  // The API's base (`http://host:7233/v1`, as docs/api.md writes its routes) is the server too:
  // kept, every request went to /v1/v1/… and was answered "no route".
  const given = opts.server ?? nonEmpty(io.env.ORBIT_SERVER) ?? DEFAULT_SERVER;
  const server = given.replace(/\/v1\/*$/, "");
  const token = opts.token ?? nonEmpty(io.env.ORBIT_TOKEN) ?? null;
  // A mistyped address is bad usage (exit 2), not an "unexpected error" with a stack.
  // The client's own checks, said as bad usage (exit 2) naming the flag or variable.
  if (!accepts(() => serverUrl(server, "OrbitClient"))) {
    const from = opts.server !== undefined ? "--server" : "ORBIT_SERVER";
    const url = URL.canParse(server) ? new URL(server) : null;
    // A user or password in the URL is never echoed (it was, twice, in "cannot reach the server").
    if (url !== null && (url.username !== "" || url.password !== "")) {
      usageError(
        cmd,
        `${from} must not carry a user or password (${url.protocol}//…@${url.host}): pass a token with --token or ORBIT_TOKEN`,
      );
    }
    if (url !== null && (url.search !== "" || url.hash !== "")) {
      usageError(
        cmd,
        `${from} "${given}" holds a query (?…) or fragment (#…): give the server's address alone, such as ${DEFAULT_SERVER}`,
      );
    }
    // `http://127.0.0.1:99999` does not parse as a URL, which said it was not an http:// URL.
    const port = /^https?:\/\/[^/?#]*:(\d+)(?:[/?#]|$)/i.exec(given)?.[1];
    if (url === null && port !== undefined && Number(port) > 65535) {
      usageError(cmd, `${from} "${given}" has the port ${port}, out of range: a port is 1 to 65535`);
    }
    usageError(cmd, `${from} "${given}" is not an http:// or https:// URL, such as ${DEFAULT_SERVER}`);
  }
  if (!accepts(() => bearerToken(token, "OrbitClient"))) {
    const from = opts.token !== undefined ? "--token" : "ORBIT_TOKEN";
    usageError(cmd, `${from} holds a line break or another character an HTTP header cannot carry`);
  }
  return { server: server.replace(/\/+$/, ""), token };
}

/**
 * The option as given nearest to the command: `orbit --server A schedule list --server B` is B.
 * (commander's optsWithGlobals() lets the root's win.)
 */
function nearest(cmd: Command, name: "server" | "token"): string | undefined {
  for (let at: Command | null = cmd; at !== null; at = at.parent) {
    const value = at.getOptionValue(name) as string | undefined;
    if (value !== undefined) return value;
  }
  return undefined;
}

function accepts(check: () => unknown): boolean {
  try {
    check();
    return true;
  } catch {
    return false;
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

/** The client for `cmd`'s connection (`--server`, `--token`, their environment variables). */
export function clientFor(cmd: Command, io: CliIO): OrbitClient {
  const { server, token } = resolveConnection(cmd, io);
  // A write answered 503 is repeated with its key before the answer is read (write-retry.ts): the
  // "still waiting" note times each try (the server's silence), a line says the CLI tries again
  // (its own waits), and Ctrl-C spans them all.
  const repeating = repeatsUnavailableWrites(saysWhenSlow(io.fetch ?? fetch, io), io.sleep ?? abortableSleep, {
    repeating: (answer, tries) =>
      io.stderr.print(
        `orbit: ${oneLine(`the server answered ${answer}; trying again with the same Idempotency-Key (up to ${tries} more tries, ${secondsText(UNAVAILABLE_REPEAT_WAITS_MS)} apart)`)}\n`,
      ),
    refusedEach: (key, tries) => noteRefusedWrite(io, key, tries),
  });
  return new OrbitClient({ server, token, fetch: stopsSaying(repeating, io) });
}

/** `0.5 s to 4 s`: the shortest and the longest of `waits`. */
function secondsText(waits: readonly number[]): string {
  return `${Math.min(...waits) / 1000} s to ${Math.max(...waits) / 1000} s`;
}

/** How long a request goes unanswered before the CLI says it still waits. */
export const SLOW_ANSWER_MS = 5000;

/**
 * `fetchFn`, saying once on stderr when an answer takes longer than {@link SLOW_ANSWER_MS}: a server
 * waiting on a table lock left `orbit schedule get` silent for up to its 30 s bound, which looked
 * like a hang (a tester's report; long work shows progress). Of a write it names the key to retry
 * it with. Each try of a write the CLI repeats after a 503 is timed alone: one timer over them all
 * said "still waiting for the server's answer" of a server that had answered 503 at once, during
 * the CLI's own waits between tries (a tester's deleted data folder: 8 s, of which the server
 * took 0.04).
 */
function saysWhenSlow(fetchFn: typeof fetch, io: CliIO): typeof fetch {
  return async (input, init) => {
    // The request's own bound: a backfill's is 10 minutes, and "gives up at 30 s" was printed of one
    // that then answered after 82 s (a tester).
    const bound = (init as { orbitTimeoutMs?: number } | undefined)?.orbitTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    const write = writeOf(input, init);
    const timer = setTimeout(() => {
      const key = write?.idempotencyKey;
      const retry =
        key === undefined
          ? ""
          : oneLine(
              `; if stopped now, the change may still be made: to retry it safely run the same command again with --idempotency-key ${key}`,
            );
      io.stderr.print(
        `orbit: still waiting for the server's answer after ${SLOW_ANSWER_MS / 1000} s (busy, or waiting for its database); it gives up at ${durationWords(bound)}${retry}\n`,
      );
    }, SLOW_ANSWER_MS);
    timer.unref();
    return untilRead(fetchFn, input, init, () => clearTimeout(timer));
  };
}

/**
 * `fetchFn`, where a write stopped by SIGINT (Ctrl-C) or SIGTERM before its answer came says it may
 * still be carried out and how to retry it safely, then ends with 130 or 143: a tester's Ctrl-C on
 * a trigger held up by the database printed nothing more than "still waiting", and the server then
 * started the execution under a key the user never saw. It spans the repeats of a write answered
 * 503 and the waits between them.
 */
function stopsSaying(fetchFn: typeof fetch, io: CliIO): typeof fetch {
  return async (input, init) => {
    const write = writeOf(input, init);
    // A read stopped changes nothing: the signal ends it as any program.
    const unlisten =
      write === null
        ? () => undefined
        : (io.onInterrupt?.((signal) => {
            const how = signal === "SIGINT" ? "SIGINT (Ctrl-C)" : signal;
            io.stderr.print(
              `orbit: ${oneLine(`stopped by ${how} before the write's outcome was known; ${maybeDoneText(write)}`)}\n`,
            );
          }) ?? (() => undefined));
    return untilRead(fetchFn, input, init, unlisten);
  };
}

/**
 * `fetchFn(input, init)`, calling `done` once its answer was read whole, or it failed. The answer is
 * its body too: a server that sent its headers and stalled in the body was silent until the 30 s
 * timeout (a tester). The client reads the body with text().
 */
async function untilRead(
  fetchFn: typeof fetch,
  input: Parameters<typeof fetch>[0],
  init: RequestInit | undefined,
  done: () => void,
): Promise<Response> {
  let res: Response;
  try {
    res = await fetchFn(input, init);
  } catch (err) {
    done();
    throw err;
  }
  const text = res.text.bind(res);
  // Configurable: a repeated write's answer passes two of these (the try's timer, the signals).
  Object.defineProperty(res, "text", {
    configurable: true,
    value: async (): Promise<string> => {
      try {
        return await text();
      } finally {
        done();
      }
    },
  });
  return res;
}

/** The write a request is (not GET or HEAD), with the Idempotency-Key it carries; null for a read. */
function writeOf(input: Parameters<typeof fetch>[0], init: RequestInit | undefined): UnansweredWrite | null {
  const method = (init?.method ?? "GET").toUpperCase();
  if (method === "GET" || method === "HEAD") return null;
  const pathname = new URL(input instanceof Request ? input.url : String(input)).pathname;
  // From the API's /v1 on, as the client names its paths (a server address may have a path of its own).
  const path = pathname.slice(Math.max(0, pathname.indexOf("/v1/")));
  return { method, path, idempotencyKey: new Headers(init?.headers).get("idempotency-key") ?? undefined };
}

/** `30 s`, `10 min`. */
function durationWords(ms: number): string {
  return ms >= 120_000 && ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`;
}
