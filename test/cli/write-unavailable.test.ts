/**
 * A write answered 503 UNAVAILABLE may have been committed with only its answer lost (a proxy that
 * swallowed COMMIT answers): `orbit schedule trigger` said "retry shortly", exit 1, and the retry
 * started a second execution; a create retried said "already exists" (a tester). The CLI now sends
 * the write again itself with the same Idempotency-Key (which makes the server answer what the
 * first did), and when the answer stays 503 says the change may or may not have been made, naming
 * the key. A read is not repeated (src/cli/write-retry.ts).
 */
import { describe, expect, it } from "vitest";
import { repeatsUnavailableWrites, UNAVAILABLE_REPEAT_WAITS_MS } from "../../src/cli/write-retry.js";
import { FakeServer } from "./fake-server.js";
import { runCli } from "./run-cli.js";

const UNAVAILABLE = {
  status: 503,
  body: {
    code: "UNAVAILABLE",
    message: "the database is unavailable (Connection terminated unexpectedly); retry shortly",
  },
};
/** The line said once before the first repeat (the command waits on its own tries, not the server). */
const TRYING_AGAIN = `orbit: the server answered 503 UNAVAILABLE (${UNAVAILABLE.body.message}); trying again with the same Idempotency-Key (up to 4 more tries, 0.5 s to 4 s apart)`;
const STARTED = { started: true, execution_id: "s2:manual:2026-11-15T18:51:00.347Z" };

/** Answers 503 to the first `failures` writes, then `answer`. */
function failingFirst(failures: number, answer: { status: number; body: unknown }): FakeServer {
  let writes = 0;
  return new FakeServer((req) => {
    if (req.method === "GET") return UNAVAILABLE;
    writes += 1;
    return writes <= failures ? UNAVAILABLE : answer;
  });
}

const keysOf = (server: FakeServer): Array<string | undefined> =>
  server.requests.map((r) => r.headers["idempotency-key"]);

describe("a write answered 503", () => {
  it("is sent again with the same key, and the command prints the answer that came (exit 0)", async () => {
    const server = failingFirst(1, { status: 200, body: STARTED });
    const waits: number[] = [];
    const r = await server.run(["schedule", "trigger", "s2"], {
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    expect([r.code, r.stderr]).toEqual([0, `${TRYING_AGAIN}\n`]);
    expect(r.stdout).toBe("started execution s2:manual:2026-11-15T18:51:00.347Z\n");
    const keys = keysOf(server);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^orbit-cli-[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(server.requests.map((q) => [q.method, q.path, q.body])).toEqual([
      ["POST", "/v1/schedules/s2/trigger", {}],
      ["POST", "/v1/schedules/s2/trigger", {}],
    ]);
    expect(waits).toEqual([UNAVAILABLE_REPEAT_WAITS_MS[0]]);
  });

  it("a create is repeated with the key given by --idempotency-key", async () => {
    const created = {
      schedule_id: "x",
      workflow: "W",
      input: {},
      interval: "1h",
      overlap: "skip",
      catchup: "skip_missed",
      state: "active",
    };
    const server = failingFirst(2, { status: 201, body: created });
    const r = await server.run([
      "schedule",
      "create",
      "x",
      "--workflow",
      "W",
      "--interval",
      "1h",
      "--idempotency-key",
      "k-7",
    ]);
    expect(keysOf(server)).toEqual(["k-7", "k-7", "k-7"]);
    // The block's fields beyond these are the checked ones of a real answer: only the retry matters here.
    expect(r.stderr.startsWith(`${TRYING_AGAIN}\n`)).toBe(true);
    expect(r.stderr).not.toContain("may or may not");
  });

  it("still 503 after its tries: the change may or may not have been made, and the key to repeat it with", async () => {
    const server = failingFirst(Number.POSITIVE_INFINITY, { status: 200, body: STARTED });
    const waits: number[] = [];
    const r = await server.run(["schedule", "trigger", "s2"], {
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    expect(r.code).toBe(1);
    const keys = keysOf(server);
    const key = keys[0] ?? "";
    expect(keys).toEqual(Array(UNAVAILABLE_REPEAT_WAITS_MS.length + 1).fill(key));
    expect(waits).toEqual([...UNAVAILABLE_REPEAT_WAITS_MS]);
    expect(r.stderr).toBe(
      `${TRYING_AGAIN}\norbit: the database is unavailable (Connection terminated unexpectedly); retry shortly; the change may or may not have been made: to retry it safely run the same command again with --idempotency-key ${key} (within 24 hours): the server then answers what the first did, or does it now if it had not, never twice\n`,
    );
  });

  it("a repeat that gets no answer leaves the change uncertain, naming the key", async () => {
    let tries = 0;
    const keys: Array<string | null> = [];
    const fetch = (async (_input: string | URL | Request, init?: RequestInit) => {
      tries += 1;
      keys.push(new Headers(init?.headers).get("idempotency-key"));
      if (tries === 1) {
        return new Response(JSON.stringify(UNAVAILABLE.body), {
          status: 503,
          headers: { "content-type": "application/json", "orbit-version": "0.1.0" },
        });
      }
      throw new TypeError("fetch failed", { cause: Object.assign(new Error("refused"), { code: "ECONNREFUSED" }) });
    }) as typeof globalThis.fetch;
    const r = await runCli(["start", "W", "--idempotency-key", "k-9"], {
      fetch,
      env: { ORBIT_SERVER: "http://orbit.test:7233" },
    });
    expect(r.code).toBe(1);
    expect(keys).toEqual(["k-9", "k-9"]);
    expect(r.stderr).toContain(
      "retry shortly; the change may or may not have been made: to retry it safely run the same command again with --idempotency-key k-9 ",
    );
  });

  it("the wait between tries ends with the request's bound: no try after it, the 503 is the answer", async () => {
    let tries = 0;
    const fetch = (async () => {
      tries += 1;
      return new Response(JSON.stringify(UNAVAILABLE.body), { status: 503 });
    }) as typeof globalThis.fetch;
    const bound = new AbortController();
    const repeating = repeatsUnavailableWrites(fetch, async () => bound.abort());
    const res = await repeating("http://orbit.test:7233/v1/schedules/s2/pause", {
      method: "POST",
      headers: { "idempotency-key": "k-1" },
      body: "{}",
      signal: bound.signal,
    });
    expect([tries, res.status, await res.json()]).toEqual([1, 503, UNAVAILABLE.body]);
  });

  it("a read answered 503 is not repeated, and its message is the server's", async () => {
    const server = failingFirst(0, { status: 200, body: STARTED });
    const r = await server.run(["schedule", "get", "s2"]);
    expect(r.code).toBe(1);
    expect(server.requests).toHaveLength(1);
    expect(r.stderr).toBe(`orbit: ${UNAVAILABLE.body.message}\n`);
  });

  it("an apply (sent without a key) answered 503 is not repeated; running it again is safe", async () => {
    const { mkdtempSync, writeFileSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const file = join(mkdtempSync(join(tmpdir(), "orbit-wu-")), "s.yaml");
    writeFileSync(file, "- {schedule_id: a, workflow: W, interval: 1h}\n");
    const server = new FakeServer((req) => (req.path.startsWith("/v1/schedules/apply") ? UNAVAILABLE : undefined));
    const r = await server.run(["schedule", "apply", "-f", file]);
    expect(server.requests.filter((q) => q.path.startsWith("/v1/schedules/apply"))).toHaveLength(1);
    expect(r.stderr).toContain(
      "retry shortly; the change may or may not have been made: `orbit schedule apply` run again makes the schedules match the file either way",
    );
  });
});
