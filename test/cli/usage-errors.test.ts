/**
 * The CLI's usage errors (exit 2, nothing sent) and what it says of a server it cannot use: none
 * listening, a non-JSON or HTML answer, something that is not Orbit, a redirect (docs/cli.md).
 * Split from commands.test.ts.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { FakeServer } from "./fake-server.js";
import { nightlyOrders } from "./fixtures/api.js";
import { runCli } from "./run-cli.js";

describe("usage errors and an unreachable server", () => {
  it.each([
    ["an unknown flag", ["schedule", "list", "--colour"], /unknown option '--colour'/],
    // Other schedulers' names for an option: the synonym is suggested where the command has it.
    [
      "--every for --interval",
      ["schedule", "create", "x", "--workflow", "W", "--every", "2s"],
      /'--every'\n\(Did you mean --interval\?\)/,
    ],
    [
      "--database-url for --database",
      ["server", "--database-url", "postgres://x"],
      /'--database-url'\n\(Did you mean --database\?\)/,
    ],
    // One name, two meanings: the one the command has.
    ["--data for server's --data-dir", ["server", "--data", "./d"], /'--data'\n\(Did you mean --data-dir\?\)/],
    [
      "--data for a create's --input",
      ["schedule", "create", "x", "--workflow", "W", "--data", "{}"],
      /'--data'\n\(Did you mean --input\?\)/,
    ],
    [
      "--tz for --timezone",
      ["schedule", "create", "x", "--workflow", "W", "--tz", "UTC"],
      /'--tz'\n\(Did you mean --timezone\?\)/,
    ],
    // The API's names for a setting, as flags: the API suggested catchup for misfire_policy, the CLI nothing.
    [
      "--misfire-policy for --catchup",
      ["schedule", "update", "x", "--misfire-policy", "latest"],
      /'--misfire-policy'\n\(Did you mean --catchup\?\)/,
    ],
    [
      "--overlap-policy for --overlap",
      ["schedule", "create", "x", "--workflow", "W", "--interval", "2s", "--overlap-policy", "skip"],
      /'--overlap-policy'\n\(Did you mean --overlap\?\)/,
    ],
    ["--tags for --label", ["schedule", "update", "x", "--tags", "a=b"], /'--tags'\n\(Did you mean --label\?\)/],
    ["--timeout for --run-timeout", ["schedule", "update", "x", "--timeout", "1m"], /\(Did you mean --run-timeout\?\)/],
    // Other tools' names for a command: the synonym the command (or the group) has.
    ["orbit -v", ["-v"], /unknown option '-v'\n\(Did you mean --version\?\)/],
    ["orbit execution list", ["execution", "list"], /unknown command 'execution'\n\(Did you mean ps\?\)/],
    // One execution asked for by a noun and a verb: the command that shows or acts on one, not the list.
    ["orbit execution describe", ["execution", "describe", "x"], /'execution'\n\(Did you mean orbit status\?\)/],
    ["orbit execution get", ["execution", "get", "x"], /'execution'\n\(Did you mean orbit status\?\)/],
    ["orbit executions cancel", ["executions", "cancel", "x"], /'executions'\n\(Did you mean orbit cancel\?\)/],
    ["orbit runs logs", ["runs", "logs", "x"], /'runs'\n\(Did you mean orbit events\?\)/],
    ["orbit schedule ls", ["schedule", "ls"], /unknown command 'ls'\n\(Did you mean list\?\)/],
    ["orbit schedule show", ["schedule", "show", "x"], /unknown command 'show'\n\(Did you mean get\?\)/],
    ["orbit schedule status", ["schedule", "status", "x"], /unknown command 'status'\n\(Did you mean get\?\)/],
    ["orbit show", ["show", "x"], /unknown command 'show'\n\(Did you mean status\?\)/],
    [
      "--id where the id is an argument",
      ["schedule", "create", "--id", "x", "--workflow", "W", "--interval", "2s"],
      /unknown option '--id'\n\(The schedule id is an argument: orbit schedule create <schedule-id> …\)/,
    ],
    [
      "--id alone, before the required options it lacks",
      ["schedule", "create", "--id", "x"],
      /^orbit: unknown option '--id'\n\(The schedule id is an argument: orbit schedule create <schedule-id> …\)/,
    ],
    [
      "--id on a top-level command",
      ["cancel", "--id", "e"],
      /\(The execution id is an argument: orbit cancel <execution-id> …\)/,
    ],
    ["orbit run", ["run", "W"], /unknown command 'run'\n\(Did you mean start\?\)/],
    ["orbit schedule run", ["schedule", "run", "x"], /unknown command 'run'\n\(Did you mean trigger\?\)/],
    // A group's command without its group: it was `unknown command 'list'` and no more.
    ["orbit list", ["list"], /unknown command 'list'\n\(Did you mean orbit schedule list or orbit workflow list\?\)/],
    ["orbit get", ["get", "x"], /unknown command 'get'\n\(Did you mean orbit schedule get\?\)/],
    ["orbit trigger", ["trigger", "x"], /unknown command 'trigger'\n\(Did you mean orbit schedule trigger\?\)/],
    [
      "orbit create",
      ["create", "x", "--workflow", "W", "--interval", "2s"],
      /unknown command 'create'\n\(Did you mean orbit schedule create\?\)/,
    ],
    ["orbit apply", ["apply", "-f", "f.yaml"], /unknown command 'apply'\n\(Did you mean orbit schedule apply\?\)/],
    [
      "orbit preview",
      ["preview", "--cron", "0 2 * * *"],
      /unknown command 'preview'\n\(Did you mean orbit schedule preview\?\)/,
    ],
    ["orbit rm", ["rm", "x"], /unknown command 'rm'\n\(Did you mean orbit schedule delete\?\)/],
    ["orbit schedule logs", ["schedule", "logs", "x"], /unknown command 'logs'\n\(Did you mean occurrences\?\)/],
    ["orbit logs", ["logs", "x"], /unknown command 'logs'\n\(Did you mean events\?\)/],
    [
      "register without a workflow",
      ["workflow", "register"],
      /give the workflow: orbit workflow register OrderProcessing@1\.0\.0/,
    ],
    [
      "register without a version",
      ["workflow", "register", "Orders"],
      /give the version: orbit workflow register Orders@1\.0\.0/,
    ],
    [
      "register with two versions",
      ["workflow", "register", "X@1.0.0", "--version", "2.0.0"],
      /the version is "1\.0\.0" in <workflow> but "2\.0\.0" in --version/,
    ],
    ["an unknown command", ["frobnicate"], /unknown command 'frobnicate'\n(?!\(Did you mean)/],
    // Names Object.prototype answers: it failed inside the CLI ("… .find is not a function", exit 1).
    ["orbit toString", ["toString"], /unknown command 'toString'\n(?!\(Did you mean)/],
    ["orbit schedule constructor", ["schedule", "constructor"], /unknown command 'constructor'\n(?!\(Did you mean)/],

    [
      // Checked before commander's "required option '--start-at' not specified".
      "--from for backfill's required --start-at",
      ["schedule", "backfill", "x", "--from", "2026-11-01T00:00:00Z", "--to", "2026-11-02T00:00:00Z"],
      /'--from'\n\(Did you mean --start-at\?\)/,
    ],
    [
      "--to for backfill's required --end-at",
      ["schedule", "backfill", "x", "--start-at", "2026-11-01T00:00:00Z", "--to", "2026-11-02T00:00:00Z"],
      /'--to'\n\(Did you mean --end-at\?\)/,
    ],
    [
      "backfill without --end-at",
      ["schedule", "backfill", "x", "--start-at", "2026-11-01T00:00:00Z"],
      /required option '--end-at <time>' not specified/,
    ],
    [
      "--every where there is no --interval",
      ["schedule", "list", "--every", "2s"],
      /unknown option '--every'\n(?!\(Did you mean --interval)/,
    ],
    ["malformed --input", ["schedule", "trigger", "x", "--input", "{nope"], /is not JSON/],
    ["an --input that is not an object", ["schedule", "trigger", "x", "--input", "[1]"], /JSON object/],
    ["create without timing", ["schedule", "create", "x", "--workflow", "W"], /give --cron/],
    ["create without --workflow", ["schedule", "create", "x", "--cron", "* * * * *"], /--workflow <name>/],
    // The id first: it said --workflow was missing.
    ["create without an id", ["schedule", "create", "--cron", "* * * * *"], /missing required argument 'schedule-id'/],
    ["an update without settings", ["schedule", "update", "x"], /nothing to change/],
    ["a bad --cluster", ["server", "--cluster", "ring"], /Allowed choices are single, active-standby, shared/],
    ["a bad --misfire-grace", ["server", "--misfire-grace", "soon"], /is not a duration/],
    // 0 was accepted, and every occurrence of a per-second schedule was recorded missed.
    [
      "a --misfire-grace under 1s",
      ["server", "--misfire-grace", "0s"],
      /--misfire-grace must be at least 1s, got 0 ms/,
    ],
    ["a --misfire-grace over 365d", ["server", "--misfire-grace", "366d"], /--misfire-grace must be at most 365d/],
    ["a --ledger-retention of 0", ["server", "--ledger-retention", "0"], /--ledger-retention.*from 1 to 1000000/],
    // The last one won without a word.
    [
      "a workflow given twice to --retention-workflow",
      ["server", "--retention-workflow", "Tick=5d", "--retention-workflow", "Tick=10d"],
      /argument 'Tick=10d' is invalid\. Tick is given twice; give each workflow once\./,
    ],
    [
      "a --token with a line break",
      ["ps", "--token", "abc\ndef"],
      /--token holds a line break or another character an HTTP header cannot carry/,
    ],
  ])("exits 2 on %s", async (_name, args, message) => {
    const server = new FakeServer(() => undefined);
    const r = await server.run(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(server.requests).toHaveLength(0);
  });

  it.each([["ps"], ["schedule", "list"], ["schedule", "get", "x"], ["workflow", "list"]])(
    "exits 1 with a clear message when another kind of server answers 200 with JSON of another shape: %s",
    async (...args) => {
      const server = new FakeServer(() => ({ status: 200, body: { hello: "not orbit" } }));
      const r = await server.run(args);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(/^orbit: the server's answer is not what orbit \S+ expects \(.+\); is --server/);
      expect(r.stderr).not.toContain("    at ");
    },
  );

  it("exits 1 with a clear message when nothing listens", async () => {
    const refused = (async () => {
      throw new TypeError("fetch failed", { cause: Object.assign(new Error("connect"), { code: "ECONNREFUSED" }) });
    }) as typeof fetch;
    const r = await runCli(["ps"], { fetch: refused });
    expect(r).toEqual({
      code: 1,
      stdout: "",
      stderr: "orbit: cannot reach the Orbit server at http://127.0.0.1:7233 (is `orbit server` running?)\n",
    });
  });

  it("turns a non-JSON error answer into a message", async () => {
    const proxy = (async () =>
      new Response("upstream down", { status: 502, statusText: "Bad Gateway" })) as typeof fetch;
    const r = await runCli(["ps"], { fetch: proxy });
    expect(r).toEqual({ code: 1, stdout: "", stderr: "orbit: the server answered 502 Bad Gateway: upstream down\n" });
  });

  it("says an HTML error page is not Orbit's instead of printing it (another program on the port)", async () => {
    // It printed the whole page, 200 characters of markup over several lines.
    const page =
      "<!DOCTYPE html>\n<html>\n<head><title>404 Not Found</title></head>\n<body><h1>Not Found</h1></body>\n</html>\n";
    const other = (async () =>
      new Response(page, {
        status: 404,
        statusText: "Not Found",
        headers: { "content-type": "text/html" },
      })) as typeof fetch;
    const r = await runCli(["ps"], { fetch: other });
    expect(r).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "orbit: the server answered 404 Not Found with a web page, not an Orbit answer: is http://127.0.0.1:7233 the Orbit server's address?\n",
    });
    const multiLine = (async () =>
      new Response("bad gateway\nretry later\n", { status: 502, statusText: "Bad Gateway" })) as typeof fetch;
    expect((await runCli(["ps"], { fetch: multiLine })).stderr).toBe(
      "orbit: the server answered 502 Bad Gateway: bad gateway\n",
    );
  });

  it("refuses a 200 from something that is not an Orbit server instead of reading it as one", async () => {
    // Another program on the address answering {"hello":1}: `paused x`, `deleted x`, `undefined`
    // fields, exit 0, for writes that never happened (a tester).
    const other = (async () =>
      new Response(JSON.stringify({ hello: 1 }), {
        status: 200,
        headers: { "content-type": "application/json" },
      })) as typeof fetch;
    for (const argv of [["schedule", "pause", "x"], ["schedule", "delete", "x"], ["status", "x"], ["ps"]]) {
      expect(await runCli(argv, { fetch: other }), argv.join(" ")).toEqual({
        code: 1,
        stdout: "",
        stderr:
          "orbit: http://127.0.0.1:7233 answered, but not as an Orbit server (no Orbit-Version header): is it the address of `orbit server`?\n",
      });
    }
    // An Orbit of a release before the header: its OpenAPI document says so, and it is read as before.
    const older = (async (input: string | URL | Request) => {
      const path = new URL(String(input)).pathname;
      const body = path === "/v1/openapi.json" ? { info: { title: "Orbit" } } : { executions: [], next_cursor: null };
      return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
    }) as typeof fetch;
    const r = await runCli(["ps"], { fetch: older, env: { ORBIT_SERVER: "http://older.test:7233" } });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });

  it("follows no redirect: a write turned into a GET of where it led was read as the write's answer", async () => {
    // fetch turned the redirected DELETE into a GET, an Orbit answered it 200, and the CLI said
    // `deleted x`, exit 0, for nothing deleted (a tester, with an http-to-https redirect in mind).
    const listen = (server: Server) =>
      new Promise<number>((resolve) =>
        server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
      );
    const orbitLike = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "orbit-version": "0.1.0" });
      res.end(JSON.stringify(nightlyOrders));
    });
    const target = await listen(orbitLike);
    const front = createServer((req, res) => {
      res.writeHead(303, { location: `http://127.0.0.1:${target}${req.url}` });
      res.end();
    });
    const port = await listen(front);
    try {
      const r = await runCli(["schedule", "delete", "x"], { env: { ORBIT_SERVER: `http://127.0.0.1:${port}` } });
      expect(r.stdout).toBe("");
      expect(r.stderr).toBe(
        `orbit: http://127.0.0.1:${port} answered with a redirect (303 to "http://127.0.0.1:${target}/v1/schedules/x"), which is not followed: give the Orbit server's own address\n`,
      );
      expect(r.code).toBe(1);
    } finally {
      front.close();
      orbitLike.close();
    }
  });
});
