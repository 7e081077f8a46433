/**
 * A tester's friction with the CLI's contract: `schedule apply` took no `--json` (every other
 * command that answers with the server's JSON does); `orbit --json ps` said only "unknown option
 * '--json'", with no word that it goes after the command; and an empty or non-ASCII
 * `--idempotency-key` was sent and refused by the server (exit 1) where a malformed `--if-match`
 * is bad usage (exit 2).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FakeServer } from "./fake-server.js";

const RESULT = {
  dry_run: false,
  scope: { "orbit/owner": "default" },
  workflows: [],
  steps: [{ action: "create", schedule_id: "fr1" }],
  created: 1,
  updated: 0,
  unchanged: 0,
  deleted: 0,
};

describe("orbit schedule apply --json", () => {
  it("prints the server's answer, compact, and nothing else", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "orbit-apply-json-")), "s.yaml");
    writeFileSync(file, "- schedule_id: fr1\n  workflow: Uni\n  interval: 1h\n  paused: true\n");
    const server = new FakeServer((req) =>
      req.path === "/v1/schedules/apply" ? { status: 200, body: RESULT } : undefined,
    );
    const r = await server.run(["schedule", "apply", "-f", file, "--json"]);
    expect(r).toEqual({ code: 0, stdout: `${JSON.stringify(RESULT)}\n`, stderr: "" });
  });
});

describe("an option before the command that takes it", () => {
  const cases: Array<[string[], string]> = [
    [["--json", "ps"], "(--json goes after the command: orbit ps --json)"],
    [["--json", "schedule", "list"], "(--json goes after the command: orbit schedule list --json)"],
    [["schedule", "--json", "list"], "(--json goes after the command: orbit schedule list --json)"],
    [["--limit", "5", "ps"], "(--limit goes after the command: orbit ps --limit <n>)"],
  ];
  for (const [argv, hint] of cases) {
    it(`orbit ${argv.join(" ")}: says where it goes (exit 2, nothing sent)`, async () => {
      const server = new FakeServer(() => undefined);
      const r = await server.run(argv);
      const flag = argv.find((a) => a.startsWith("--"));
      expect([r.code, r.stderr]).toEqual([2, `orbit: unknown option '${flag}'\n${hint}\n(add --help for usage)\n`]);
      expect(server.requests).toEqual([]);
    });
  }

  it("an option the command does not take either is refused as before", async () => {
    const r = await new FakeServer(() => undefined).run(["--jsn", "ps"]);
    expect(r.stderr).toBe("orbit: unknown option '--jsn'\n(add --help for usage)\n");
  });
});

describe("--idempotency-key", () => {
  for (const key of ["", "naïve-1", "two words", "x".repeat(256)]) {
    it(`${JSON.stringify(key.slice(0, 12))}: bad usage in the server's words, nothing sent`, async () => {
      const server = new FakeServer(() => undefined);
      const r = await server.run(["schedule", "trigger", "s2", "--idempotency-key", key]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        "is invalid. Idempotency-Key must be 1-255 printable ASCII characters without spaces.\n",
      );
      expect(server.requests).toEqual([]);
    });
  }

  it("a key of 255 printable characters is sent as given", async () => {
    const key = `${"k".repeat(250)}-~!#$`;
    const server = new FakeServer((req) =>
      req.method === "POST" ? { status: 200, body: { started: true, execution_id: "s2:manual:x" } } : undefined,
    );
    const r = await server.run(["schedule", "trigger", "s2", "--idempotency-key", key]);
    expect(r.code).toBe(0);
    expect(server.requests[0]?.headers["idempotency-key"]).toBe(key);
  });
});
