/**
 * Where the commands send their requests (docs/cli.md, global options): `--server` between a group
 * and its command, and a server address given as the API's base (`…/v1`).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { OrbitClient } from "../../src/client/client.js";
import { FakeServer } from "./fake-server.js";

const answers = new FakeServer((req) => {
  if (req.path.startsWith("/v1/schedules")) return { status: 200, body: { schedules: [], next_cursor: null } };
  if (req.path.startsWith("/v1/workflows")) return { status: 200, body: { workflows: [], next_cursor: null } };
  if (req.path.startsWith("/v1/executions")) return { status: 200, body: { executions: [], next_cursor: null } };
  return undefined;
});

describe("--server", () => {
  it.each([
    // Refused before as "unknown option '--server'", while `orbit --server URL ps` worked.
    ["between schedule and its command", ["schedule", "--server", "http://other.test:7300", "list"]],
    ["between workflow and its command", ["workflow", "--server", "http://other.test:7300", "list"]],
    ["before the group", ["--server", "http://other.test:7300", "schedule", "list"]],
    ["after the command", ["schedule", "list", "--server", "http://other.test:7300"]],
  ])("is taken %s", async (_where, args) => {
    const r = await answers.run(args);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(answers.requests.at(-1)?.origin).toBe("http://other.test:7300");
  });

  it("of the command wins over the group's", async () => {
    const r = await answers.run(["schedule", "--server", "http://group.test", "list", "--server", "http://cmd.test"]);
    expect(r.code).toBe(0);
    expect(answers.requests.at(-1)?.origin).toBe("http://cmd.test");
  });

  it.each([
    ["--server", ["ps", "--server", "http://other.test:7300/v1"], {}],
    ["--server with a slash", ["schedule", "list", "--server", "http://other.test:7300/v1/"], {}],
    ["ORBIT_SERVER", ["schedule", "list"], { ORBIT_SERVER: "http://other.test:7300/v1" }],
  ])("drops the API's /v1 from %s (it asked for /v1/v1/…)", async (_name, args, env) => {
    const r = await answers.run(args, { env });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const last = answers.requests.at(-1);
    expect(last?.origin).toBe("http://other.test:7300");
    expect(last?.path).toMatch(/^\/v1\/(executions|schedules)\b/);
  });

  it("still refuses what is not a URL, as it was given", async () => {
    const r = await answers.run(["ps", "--server", "nope/v1"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--server "nope/v1" is not an http:// or https:// URL');
  });

  it("refuses a user or password in the URL as bad usage, without echoing the password", async () => {
    const r = await answers.run(["ps", "--server", "http://user:s3cret@127.0.0.1:7721"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--server must not carry a user or password (http://…@127.0.0.1:7721): pass a token");
    expect(r.stderr).not.toContain("s3cret");
    expect(answers.requests.filter((q) => q.origin.includes("7721"))).toEqual([]);
    expect(() => new OrbitClient({ server: "http://user:s3cret@127.0.0.1:7721" })).toThrow(
      /must not carry a user or password/,
    );
  });
});

describe("OrbitClient's server", () => {
  it("takes the API's base as the server, as the CLI does (it refused it, failing a Worker given a URL the CLI took)", () => {
    expect(new OrbitClient({ server: "http://127.0.0.1:7233/v1" }).baseUrl).toBe("http://127.0.0.1:7233");
    expect(new OrbitClient({ server: "http://127.0.0.1:7233/v1/" }).baseUrl).toBe("http://127.0.0.1:7233");
    expect(new OrbitClient({ server: "http://127.0.0.1:7233/orbit/v1" }).baseUrl).toBe("http://127.0.0.1:7233/orbit");
    expect(new OrbitClient({ server: "http://127.0.0.1:7233/orbit/" }).baseUrl).toBe("http://127.0.0.1:7233/orbit");
  });

  it("says a 404 not in Orbit's form comes from another program, with or without a web page", async () => {
    for (const [type, body] of [
      ["text/html", "<h1>Not Found</h1>"],
      ["text/plain", "Not Found"],
    ] as const) {
      const other = createServer((_req, res) => res.writeHead(404, { "content-type": type }).end(body));
      await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
      const server = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
      try {
        await expect(new OrbitClient({ server }).getSchedule("x")).rejects.toThrow(
          new RegExp(
            `^the server answered 404 Not Found.*not an Orbit answer: is ${server} the Orbit server's address\\?$`,
          ),
        );
      } finally {
        await new Promise((resolve) => other.close(resolve));
      }
    }
  });
});

describe("OrbitClient's bounds", () => {
  it("waits 10 minutes for an apply's and a backfill's answer, 30 s for the others, unless given its own", async () => {
    // An apply of 10,000 schedules on a busy PostgreSQL gave up at 30 s behind a lock (a tester).
    const bounds: Record<string, number> = {};
    const seen = (async (url: URL, init: { orbitTimeoutMs?: number }) => {
      bounds[url.pathname] = init.orbitTimeoutMs ?? -1;
      // An apply's answer holds its steps (the client checks it).
      return new Response('{"steps":[]}', { status: 200, headers: { "orbit-version": "0.1.0" } });
    }) as unknown as typeof fetch;
    const client = new OrbitClient({ server: "http://orbit.test:7233", fetch: seen });
    await client.applySchedules({ schedules: [] });
    await client.backfillSchedule("s", { start_at: "2026-11-01T00:00:00Z", end_at: "2026-11-02T00:00:00Z" });
    await client.getSchedule("s").catch(() => undefined);
    expect(bounds).toEqual({
      "/v1/schedules/apply": 600_000,
      "/v1/schedules/s/backfill": 600_000,
      "/v1/schedules/s": 30_000,
    });
    const own = new OrbitClient({ server: "http://orbit.test:7233", fetch: seen, timeoutMs: 5000 });
    await own.applySchedules({ schedules: [] });
    expect(bounds["/v1/schedules/apply"]).toBe(5000);
  });
});
