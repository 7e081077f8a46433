import { spawn } from "node:child_process";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { addConnectionOptions, DEFAULT_SERVER, resolveConnection } from "../../src/cli/connection.js";
import { type CliIO, memoryWriter, streamWriter, type Writer } from "../../src/cli/io.js";
import { childArgs } from "../helpers/child.js";
import { runCli } from "./run-cli.js";

const SEED_CRON = ["schedule", "preview", "--cron", "0 2 * * *", "--timezone", "Europe/Berlin"];
/** 02:30 in Berlin: a time the spring-forward night skips and the fall-back night repeats. */
const BERLIN_0230 = ["schedule", "preview", "--cron", "30 2 * * *", "--timezone", "Europe/Berlin"];

describe("orbit schedule preview --json", () => {
  it("prints the seed's next fire times", async () => {
    const r = await runCli([...SEED_CRON, "--from", "2026-11-15T18:51:00Z", "--json"]);
    expect(r).toEqual({
      code: 0,
      stdout:
        '{"next_fire_times":["2026-11-16T01:00:00Z","2026-11-17T01:00:00Z","2026-11-18T01:00:00Z","2026-11-19T01:00:00Z","2026-11-20T01:00:00Z"]}\n',
      stderr: "",
    });
  });

  it("aligns an interval to the epoch, strictly after --from", async () => {
    const r = await runCli([
      "schedule",
      "preview",
      "--interval",
      "10s",
      "--from",
      "2026-11-15T18:51:00.347Z",
      "--json",
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      next_fire_times: [
        "2026-11-15T18:51:10Z",
        "2026-11-15T18:51:20Z",
        "2026-11-15T18:51:30Z",
        "2026-11-15T18:51:40Z",
        "2026-11-15T18:51:50Z",
      ],
    });
  });

  it("defaults --from to the clock", async () => {
    const r = await runCli(["schedule", "preview", "--interval", "10s", "--count", "1", "--json"]);
    expect(r.stdout).toBe('{"next_fire_times":["2026-11-15T18:51:10Z"]}\n');
  });

  it("stops at end_at", async () => {
    const r = await runCli([
      "schedule",
      "preview",
      "--interval",
      "10s",
      "--start-at",
      "2026-01-01T00:00:00.500Z",
      "--end-at",
      "2026-01-01T00:00:25Z",
      "--from",
      "2025-12-31T00:00:00Z",
      "--json",
    ]);
    expect(r.stdout).toBe(
      '{"next_fire_times":["2026-01-01T00:00:00.500Z","2026-01-01T00:00:10.500Z","2026-01-01T00:00:20.500Z"]}\n',
    );
  });

  it("streams --count 100000 in chunks", async () => {
    const chunks: string[] = [];
    const recorder: Writer = {
      print: (text) => chunks.push(text),
      write: async (text) => {
        chunks.push(text);
      },
    };
    const r = await runCli(
      ["schedule", "preview", "--cron", "* * * * *", "--timezone", "Europe/Berlin", "--count", "100000", "--json"],
      { stdout: recorder },
    );
    expect(r.code).toBe(0);
    expect(chunks.length).toBeGreaterThan(10);
    expect(Math.max(...chunks.map((c) => c.length))).toBeLessThan(70_000);
    const times = (JSON.parse(chunks.join("")) as { next_fire_times: string[] }).next_fire_times;
    expect(times).toHaveLength(100_000);
    const ms = times.map((t) => Date.parse(t));
    for (let i = 1; i < ms.length; i++) expect(ms[i]).toBeGreaterThan(ms[i - 1] as number);
    expect(ms[0]).toBe(Date.UTC(2026, 10, 15, 18, 52));
  });
});

describe("orbit schedule preview (text)", () => {
  it("prints header, description and UTC + local times for a cron", async () => {
    const r = await runCli([...SEED_CRON, "--from", "2026-11-15T18:51:00Z", "--count", "3"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        'cron "0 2 * * *" Europe/Berlin (dst: once)',
        "At 02:00, every day",
        "  2026-11-16T01:00:00Z  Mon 2026-11-16 02:00:00 +01:00",
        "  2026-11-17T01:00:00Z  Tue 2026-11-17 02:00:00 +01:00",
        "  2026-11-18T01:00:00Z  Wed 2026-11-18 02:00:00 +01:00",
        "",
      ].join("\n"),
    );
  });

  it("prints UTC times only for an interval", async () => {
    const r = await runCli([
      "schedule",
      "preview",
      "--interval",
      "10s",
      "--from",
      "2026-11-15T18:51:00.347Z",
      "--count",
      "2",
    ]);
    expect(r.stdout).toBe(
      [
        "every 10s",
        "Every 10 seconds, aligned to the Unix epoch",
        "  2026-11-15T18:51:10Z",
        "  2026-11-15T18:51:20Z",
        "",
      ].join("\n"),
    );
  });

  it("shows the offset change on a spring-forward night (dst once shifts 02:30 to 03:30)", async () => {
    const r = await runCli([...BERLIN_0230, "--from", "2026-03-27T12:00:00Z", "--count", "3"]);
    expect(r.stdout.split("\n").slice(2)).toEqual([
      "  2026-03-28T01:30:00Z  Sat 2026-03-28 02:30:00 +01:00",
      "  2026-03-29T01:30:00Z  Sun 2026-03-29 03:30:00 +02:00",
      "  2026-03-30T00:30:00Z  Mon 2026-03-30 02:30:00 +02:00",
      "",
    ]);
  });

  it("fires twice in the repeated hour with --dst wall_clock", async () => {
    const r = await runCli([...BERLIN_0230, "--dst", "wall_clock", "--from", "2026-10-24T12:00:00Z", "--count", "3"]);
    expect(r.stdout).toBe(
      [
        'cron "30 2 * * *" Europe/Berlin (dst: wall_clock)',
        "At 02:30, every day",
        "  2026-10-25T00:30:00Z  Sun 2026-10-25 02:30:00 +02:00",
        "  2026-10-25T01:30:00Z  Sun 2026-10-25 02:30:00 +01:00",
        "  2026-10-26T01:30:00Z  Mon 2026-10-26 02:30:00 +01:00",
        "",
      ].join("\n"),
    );
  });

  it("names the DST mode as given, as the schedule keeps it (skip:both is wall_clock's other name)", async () => {
    const r = await runCli([...BERLIN_0230, "--dst", "skip:both", "--from", "2026-10-24T12:00:00Z", "--count", "1"]);
    expect(r.stdout.split("\n")[0]).toBe('cron "30 2 * * *" Europe/Berlin (dst: skip:both)');
  });

  it("says when the timing ends before --count", async () => {
    const r = await runCli([
      "schedule",
      "preview",
      "--cron",
      "0 12 * * *",
      "--from",
      "2026-01-01T00:00:00Z",
      "--start-at",
      "2026-01-02T00:00:00Z",
      "--end-at",
      "2026-01-03T12:00:00Z",
    ]);
    expect(r.stdout).toBe(
      [
        'cron "0 12 * * *" UTC (dst: once)',
        "At 12:00, every day, from start_at 2026-01-02T00:00:00Z, until end_at 2026-01-03T12:00:00Z",
        "  2026-01-02T12:00:00Z  Fri 2026-01-02 12:00:00 +00:00",
        "  2026-01-03T12:00:00Z  Sat 2026-01-03 12:00:00 +00:00",
        "(no more occurrences: end_at 2026-01-03T12:00:00Z)",
        "",
      ].join("\n"),
    );
  });
});

describe("orbit schedule preview errors", () => {
  // No request is sent: a value preview refuses is bad usage (exit 2) in the server's words, where
  // `orbit schedule create` exits 1 with the same message, the server's refusal (docs/cli.md § Exit codes).
  it("refuses an invalid cron as bad usage (exit 2) with the seed's message", async () => {
    const r = await runCli(["schedule", "preview", "--cron", "0 25 * * *"]);
    expect(r).toEqual({
      code: 2,
      stdout: "",
      stderr: "orbit: cron `0 25 * * *`: `25` is out of range for the hour field (0-23)\n(add --help for usage)\n",
    });
  });

  it("refuses a time-zone abbreviation with exit 2", async () => {
    const r = await runCli(["schedule", "preview", "--cron", "0 2 * * *", "--timezone", "EST"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^orbit: timezone "EST" is not an IANA time zone name.*America\/New_York/);
  });

  it("refuses an expression that never fires with exit 2", async () => {
    const r = await runCli(["schedule", "preview", "--cron", "0 0 30 2 *"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("orbit: cron `0 0 30 2 *`: never fires in the next five years\n(add --help for usage)\n");
  });

  it.each([
    ["an invalid --dst", ["--cron", "0 2 * * *", "--dst", "bogus"], /^orbit: dst "bogus" is not a DST mode/],
    ["an interval under 1s", ["--interval", "0s"], /^orbit: interval "0s" is shorter than the minimum of 1s/],
    ["a blank --cron", ["--cron", " "], /^orbit: --cron is empty: give the cron expression/],
    ["a malformed --start-at", ["--interval", "10s", "--start-at", "nope"], /^orbit: start_at "nope" is not/],
    ["a malformed --end-at", ["--interval", "10s", "--end-at", "nope"], /^orbit: end_at "nope" is not/],
    // As a create refuses it (a 20,000-element list was previewed that no server takes; a tester).
    [
      "a --cron over 200 characters",
      ["--cron", `0 0 ${Array(100).fill("1").join(",")} * *`],
      /^orbit: cron is 207 characters long; the most is 200\n/,
    ],
  ])("refuses %s with exit 2 and sends nothing", async (_name, args, message) => {
    const r = await runCli(["schedule", "preview", ...args]);
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: "" });
    expect(r.stderr).toMatch(message);
    expect(r.stderr.endsWith("\n(add --help for usage)\n")).toBe(true);
  });

  it("escapes a control character its refusal quotes, as every refusal is printed", async () => {
    const r = await runCli(["schedule", "preview", "--cron", "0 \u001b[31m * * *"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('cron "0 \\u001b[31m * * *"');
    expect(r.stderr).not.toContain("\u001b");
  });

  it.each([
    ["neither --cron nor --interval", [], /give --cron <expression> or --interval <duration>/],
    ["both --cron and --interval", ["--cron", "* * * * *", "--interval", "10s"], /cannot be used with/],
    // One message for every wrong count (0 said "a number", -1 and 2.5 "a whole number").
    [
      "--count 0",
      ["--interval", "10s", "--count", "0"],
      /--count <n>.*'0' is invalid\. Give a whole number from 1 to 1000000\./,
    ],
    [
      "--count 1000001",
      ["--interval", "10s", "--count", "1000001"],
      /'1000001' is invalid\. Give a whole number from 1/,
    ],
    ["--count 2.5", ["--interval", "10s", "--count", "2.5"], /'2.5' is invalid\. Give a whole number from 1/],
    ["--count -1", ["--interval", "10s", "--count=-1"], /'-1' is invalid\. Give a whole number from 1/],
    ["a malformed --from", ["--interval", "10s", "--from", "tomorrow"], /--from "tomorrow" is not an RFC 3339 time/],
    ["an unknown option", ["--interval", "10s", "--every", "2"], /unknown option '--every'/],
  ])("is a usage error (exit 2): %s", async (_name, args, message) => {
    const r = await runCli(["schedule", "preview", ...args]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^orbit: /);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain("(add --help for usage)");
  });

  it("accepts --count 1000000 (the maximum)", async () => {
    const r = await runCli(["schedule", "preview", "--interval", "1d", "--count", "1000000", "--json"], {
      stdout: { print: () => {}, write: async () => {} },
    });
    expect(r.code).toBe(0);
  });
});

describe("the orbit command", () => {
  it("prints help for every command with exit 0", async () => {
    for (const args of [["--help"], ["schedule", "--help"], ["schedule", "preview", "--help"], ["version", "--help"]]) {
      const r = await runCli(args);
      expect(r.code, args.join(" ")).toBe(0);
      expect(r.stdout).toMatch(/^Usage: orbit/);
    }
    const preview = await runCli(["schedule", "preview", "--help"]);
    expect(preview.stdout).toContain("--timezone <tz>");
    expect(preview.stdout).toContain("Examples:");
  });

  it("shows help on stderr with exit 2 when a command is missing", async () => {
    for (const args of [[], ["schedule"]]) {
      const r = await runCli(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^Usage: orbit/);
    }
  });

  it("suggests a close command name", async () => {
    const r = await runCli(["schedule", "previw"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("orbit: unknown command 'previw'");
    expect(r.stderr).toContain("Did you mean preview?");
  });

  it("refuses a --server or ORBIT_SERVER that is not an http(s) URL as bad usage (exit 2)", async () => {
    const flag = await runCli(["schedule", "get", "s", "--server", "notaurl"]);
    expect(flag).toEqual({
      code: 2,
      stdout: "",
      stderr:
        'orbit: --server "notaurl" is not an http:// or https:// URL, such as http://127.0.0.1:7233\n(add --help for usage)\n',
    });
    const env = await runCli(["ps"], { env: { ORBIT_SERVER: "ftp://db:7233" } });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain('orbit: ORBIT_SERVER "ftp://db:7233" is not an http:// or https:// URL');
  });

  it("resolves --server and --token from flags, then the environment, then defaults", () => {
    const io = (env: Record<string, string>): CliIO => ({
      stdout: memoryWriter(),
      stderr: memoryWriter(),
      env,
      now: () => 0,
    });
    const parse = (args: string[]): Command => {
      const program = new Command("orbit");
      addConnectionOptions(program);
      return program.parse(args, { from: "user" });
    };
    expect(resolveConnection(parse([]), io({}))).toEqual({ server: DEFAULT_SERVER, token: null });
    expect(resolveConnection(parse([]), io({ ORBIT_SERVER: "http://db:7233/", ORBIT_TOKEN: "t1" }))).toEqual({
      server: "http://db:7233",
      token: "t1",
    });
    expect(
      resolveConnection(parse(["--server", "http://x:1", "--token", "t2"]), io({ ORBIT_SERVER: "http://db:7233" })),
    ).toEqual({ server: "http://x:1", token: "t2" });
  });
});

describe("output streams", () => {
  it("awaits backpressure on a slow stream and writes everything", async () => {
    const received: Buffer[] = [];
    let drains = 0;
    const slow = new Writable({
      highWaterMark: 1024,
      write(chunk: Buffer, _enc, cb) {
        received.push(chunk);
        setImmediate(cb);
      },
    });
    slow.on("drain", () => drains++);
    const r = await runCli(["schedule", "preview", "--interval", "1s", "--count", "20000", "--json"], {
      stdout: streamWriter(slow),
    });
    expect(r.code).toBe(0);
    await new Promise<void>((resolve) => slow.end(resolve));
    expect(drains).toBeGreaterThan(0);
    const times = (JSON.parse(Buffer.concat(received).toString()) as { next_fire_times: string[] }).next_fire_times;
    expect(times).toHaveLength(20_000);
  });

  it("stops quietly (exit 0) when the reader goes away", async () => {
    let writes = 0;
    const broken = new Writable({
      highWaterMark: 1024,
      write(_chunk, _enc, cb) {
        writes++;
        cb(Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
      },
    });
    const r = await runCli(["schedule", "preview", "--interval", "1s", "--count", "1000000"], {
      stdout: streamWriter(broken),
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(writes).toBe(1);
  });
});

describe("orbit as a process", () => {
  it("runs through node with real stdout, stderr and exit codes", async () => {
    const entry = fileURLToPath(new URL("../../src/cli/entry.ts", import.meta.url));
    const exec = (args: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const child = spawn(process.execPath, [...childArgs(entry), ...args], {
          cwd: fileURLToPath(new URL("../..", import.meta.url)),
          env: { ...process.env, TZ: "Asia/Tokyo" },
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d: Buffer) => {
          stdout += d.toString();
        });
        child.stderr.on("data", (d: Buffer) => {
          stderr += d.toString();
        });
        child.on("error", reject);
        child.on("close", (code) => resolve({ code, stdout, stderr }));
      });
    const ok = await exec([...SEED_CRON, "--from", "2026-11-15T18:51:00Z", "--count", "2"]);
    expect(ok).toEqual({
      code: 0,
      stdout:
        'cron "0 2 * * *" Europe/Berlin (dst: once)\nAt 02:00, every day\n' +
        "  2026-11-16T01:00:00Z  Mon 2026-11-16 02:00:00 +01:00\n  2026-11-17T01:00:00Z  Tue 2026-11-17 02:00:00 +01:00\n",
      stderr: "",
    });
    const big = await exec(["schedule", "preview", "--cron", "* * * * *", "--count", "200000", "--json"]);
    expect(big.code).toBe(0);
    expect((JSON.parse(big.stdout) as { next_fire_times: string[] }).next_fire_times).toHaveLength(200_000);
    expect(await exec(["schedule", "preview", "--cron", "0 25 * * *"])).toMatchObject({ code: 2, stdout: "" });
    expect(await exec(["schedule", "preview", "--count", "0", "--interval", "1s"])).toMatchObject({
      code: 2,
      stdout: "",
    });
  });
});
