/**
 * Where the commands send their requests (docs/cli.md, global options): `--server` between a group
 * and its command.
 */
import { describe, expect, it } from "vitest";
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
});
