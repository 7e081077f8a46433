/**
 * Server-provided free text reaches the terminal inert and on one line: a stored description,
 * pause note, cancel reason, error or label holding `\u001b]0;pwned\u0007` (retitles the terminal)
 * or `\u001b[1A\u001b[2K` (erases the line above) was printed raw by `orbit schedule get` and
 * `orbit status`, and a cron holding `\r\n` broke a `schedule list` row. `--json` stays exact JSON.
 * The command line's own text, quoted back by a usage error, is shown the same way.
 */
import { describe, expect, it } from "vitest";
import { oneLine } from "../../src/cli/safe-text.js";
import type { ExecutionJson, ScheduleJson } from "../../src/client/types.js";
import { FakeServer } from "./fake-server.js";
import { manualRun, nightlyOrders } from "./fixtures/api.js";

const TITLE = "hi\u001b]0;pwned\u0007\u001b[2K";
const ERASE = "\u001b[1A\u001b[2Kfake line";
const C1 = "csi\u009b31m";

/** Holds a C0 control other than the newline that ends each line, DEL, or a C1 control. */
function rawControl(text: string): boolean {
  return [...text].some((c) => {
    const n = c.charCodeAt(0);
    return n !== 0x0a && (n < 0x20 || (n >= 0x7f && n <= 0x9f));
  });
}

const hostile: ScheduleJson = {
  ...nightlyOrders,
  state: "paused",
  paused: true,
  cron: "0 0 1 1 *\r\n",
  description: TITLE,
  pause_note: ERASE,
  labels: { team: `ops\n${C1}` },
  last_error: "workflow \u001b[31mW\u001b[0m is not registered",
  input: { note: C1 },
  last_execution_id: "nightly-orders:2026-11-15T01:00:00Z",
  last_outcome: {
    status: "CANCELLED",
    execution_id: "nightly-orders:2026-11-15T01:00:00Z",
    ended_at: "2026-11-15T01:00:02Z",
    error: `stop\r${ERASE}`,
  } as ScheduleJson["last_outcome"],
};

const cancelled: ExecutionJson = {
  ...manualRun,
  status: "CANCELLED",
  cancel_reason: `not today${ERASE}`,
  error: { message: `boom\n${C1}` },
};

function server(): FakeServer {
  return new FakeServer((req) => {
    if (req.path === "/v1/schedules/esc2") return { status: 200, body: hostile };
    if (req.path.startsWith("/v1/schedules?"))
      return { status: 200, body: { schedules: [hostile], next_cursor: null } };
    if (req.path.startsWith("/v1/executions/")) return { status: 200, body: cancelled };
    if (req.path.startsWith("/v1/workflows")) {
      const w = {
        name: "Fz",
        version: "2.0.0",
        description: TITLE,
        input_schema: null,
        created_at: "2026-11-15T18:50:00Z",
      };
      return { status: 200, body: { workflows: [w] } };
    }
    return { status: 400, body: { code: "INVALID_ARGUMENT", message: `cron \`${TITLE}\`: bad` } };
  });
}

describe("oneLine", () => {
  it("escapes every C0 and C1 control, DEL, newline and tab, and leaves other text alone", () => {
    expect(oneLine("a\u001b[2Kb\u0007\n\t\r\u007f\u0085\u009fé→")).toBe(
      "a\\u001b[2Kb\\u0007\\u000a\\u0009\\u000d\\u007f\\u0085\\u009fé→",
    );
    expect(oneLine("Nightly reconciliation order")).toBe("Nightly reconciliation order");
  });

  it("escapes the bidirectional overrides that reorder a line (Trojan Source), and leaves right-to-left text alone", () => {
    expect(oneLine("refund \u202egnp.exe\u202c ok \u2066x\u2069 \u200f")).toBe(
      "refund \\u202egnp.exe\\u202c ok \\u2066x\\u2069 \\u200f",
    );
    expect(oneLine("\u05e9\u05dc\u05d5\u05dd \u0645\u0631\u062d\u0628\u0627")).toBe(
      "\u05e9\u05dc\u05d5\u05dd \u0645\u0631\u062d\u0628\u0627",
    );
  });
});

describe("server text in human output", () => {
  it("orbit schedule get escapes the description, note, labels, errors, input and the cron, one line each", async () => {
    const r = await server().run(["schedule", "get", "esc2"]);
    expect(r.code).toBe(0);
    expect(rawControl(r.stdout)).toBe(false);
    const lines = r.stdout.split("\n");
    expect(lines[0]).toBe('paused nightly-orders  cron "0 0 1 1 *\\u000d\\u000a" Europe/Berlin');
    expect(r.stdout).toContain("  description: hi\\u001b]0;pwned\\u0007\\u001b[2K\n");
    expect(r.stdout).toContain("  paused:     \\u001b[1A\\u001b[2Kfake line\n");
    expect(r.stdout).toContain("  labels:     team=ops\\u000acsi\\u009b31m\n");
    expect(r.stdout).toContain('  input:      {"note":"csi\\u009b31m"}\n');
    expect(r.stdout).toContain("  reason:     stop\\u000d\\u001b[1A\\u001b[2Kfake line\n");
    // Every line is a label line, the first, or a time under `next fires`.
    for (const l of lines.slice(1, -1)) expect(l).toMatch(/^ {2}[a-z (),]+:|^ {4}\d{4}-/);
  });

  it("orbit schedule get --json prints the server's JSON exactly", async () => {
    const r = await server().run(["schedule", "get", "esc2", "--json"]);
    expect(JSON.parse(r.stdout)).toEqual(JSON.parse(JSON.stringify(hostile)));
    expect(r.stdout).toContain(JSON.stringify(TITLE));
  });

  it("orbit schedule list keeps one row per schedule", async () => {
    const r = await server().run(["schedule", "list"]);
    expect(rawControl(r.stdout)).toBe(false);
    expect(r.stdout.split("\n")).toHaveLength(3);
    expect(r.stdout.split("\n")[1]).toContain('cron "0 0 1 1 *\\u000d\\u000a" Europe/Berlin ');
  });

  it("orbit status escapes the cancel reason and the error", async () => {
    const r = await server().run(["status", manualRun.execution_id]);
    expect(rawControl(r.stdout)).toBe(false);
    expect(r.stdout).toContain("  cancel reason: not today\\u001b[1A\\u001b[2Kfake line\n");
    expect(r.stdout).toContain("  error: boom\\u000acsi\\u009b31m\n");
  });

  it("orbit cancel escapes the first reason it quotes", async () => {
    const r = await server().run(["cancel", manualRun.execution_id, "--reason", "other"]);
    expect(rawControl(r.stdout)).toBe(false);
    expect(r.stdout).toContain("(cancel reason: not today\\u001b[1A\\u001b[2Kfake line)");
  });

  it("orbit workflow list escapes a description", async () => {
    const r = await server().run(["workflow", "list"]);
    expect(rawControl(r.stdout)).toBe(false);
    expect(r.stdout).toContain("hi\\u001b]0;pwned\\u0007\\u001b[2K\n");
  });

  it("a refusal's message is printed escaped on one line", async () => {
    const r = await server().run(["schedule", "create", "x", "--workflow", "W", "--cron", "* * * * *"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("orbit: cron `hi\\u001b]0;pwned\\u0007\\u001b[2K`: bad\n");
  });
});

describe("the command line's own text in a usage error", () => {
  // What each case quotes back raw before: retitled the terminal and cleared the screen.
  const HOSTILE = "\u001b]0;pwned\u0007\u001b[2J";
  it.each([
    [["schedule", "list", `--x${HOSTILE}`], "orbit: unknown option '--x\\u001b]0;pwned\\u0007\\u001b[2J'"],
    [[`x${HOSTILE}`], "orbit: unknown command 'x\\u001b]0;pwned\\u0007\\u001b[2J'"],
    [[`x\nforged line`], "orbit: unknown command 'x\\u000aforged line'"],
    [["schedule", "list", "--limit", `1${HOSTILE}`], "orbit: option '--limit <n>' argument '1\\u001b]0;pwned"],
    [["schedule", "list", "--state", `x${HOSTILE}`], "orbit: option '--state <state>' argument 'x\\u001b]0;pwned"],
    [["ps", "--status", `x${HOSTILE}`], "orbit: option '--status <status>' argument 'x\\u001b]0;pwned"],
    [["ps", `--status=x${HOSTILE}`], "orbit: option '--status <status>' argument 'x\\u001b]0;pwned"],
    [
      ["schedule", "create", "d", "--workflow", "W", "--interval", "1s", "--input", HOSTILE],
      "orbit: option '--input <json>' argument '\\u001b]0;pwned",
    ],
    [["ps", "--server", `ftp://x${HOSTILE}`], 'orbit: --server "ftp://x\\u001b]0;pwned'],
  ])("%j is refused with its text escaped", async (argv, start) => {
    const r = await new FakeServer(() => undefined).run(argv);
    expect(r.code).toBe(2);
    expect(r.stderr.startsWith(start), r.stderr).toBe(true);
    expect(rawControl(r.stderr)).toBe(false);
    expect(r.stderr.split("\n").length).toBe(3); // the message, "(add --help for usage)" and the end
  });

  it("escapes ORBIT_SERVER as --server", async () => {
    const r = await new FakeServer(() => undefined).run(["ps"], { env: { ORBIT_SERVER: `ftp://x${HOSTILE}` } });
    expect([r.code, rawControl(r.stderr)]).toEqual([2, false]);
    expect(r.stderr).toMatch(/^orbit: ORBIT_SERVER "ftp:\/\/x\\u001b\]0;pwned/);
  });

  it("quotes at most 2000 characters of an argument, saying how much it cut", async () => {
    const big = `{"a":"${"x".repeat(100_000)}`;
    const r = await new FakeServer(() => undefined).run([
      "schedule",
      "create",
      "d",
      "--workflow",
      "W",
      "--interval",
      "1s",
      "--input",
      big,
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr.length).toBeLessThan(3000);
    expect(r.stderr).toContain(`${big.slice(0, 2000)}… (${big.length - 2000} more characters cut)`);
  });
});
