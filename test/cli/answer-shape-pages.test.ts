/**
 * An Orbit-labelled 200 whose body is empty, `null`, `[]` or an object of another shape: every
 * command names what it lacks in one line (exit 1), where `ps`, `schedule list`, `schedule get`,
 * `events`, `workers`, `workflow list`, `occurrences`, `apply` and `ps --json` printed JavaScript's
 * own errors (`Cannot read properties of undefined (reading 'executions')`, `page.schedules is not
 * iterable`; a tester). The pages and objects are checked by the client (src/client/client.ts),
 * the fields each command prints by the command (src/cli/answer-shape.ts).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { FakeServer } from "./fake-server.js";

const said = (what: string): string =>
  `orbit: the server's answer is not what orbit 0.1.0 expects (${what}); is --server (or ORBIT_SERVER) an Orbit server of this version? \`orbit doctor\` checks\n`;

const dir = mkdtempSync(join(tmpdir(), "orbit-shape-"));
const applyFile = join(dir, "s.yaml");
writeFileSync(applyFile, "- {schedule_id: a, workflow: W, interval: 1h}\n");

const COMMANDS: string[][] = [
  ["ps"],
  ["ps", "--json"],
  ["status", "e"],
  ["status", "e", "--json"],
  ["events", "e"],
  ["workers"],
  ["cancel", "e"],
  ["start", "W"],
  ["retry", "e"],
  ["schedule", "list"],
  ["schedule", "list", "--json"],
  ["schedule", "list", "--limit", "5"],
  ["schedule", "list", "--wide"],
  ["schedule", "get", "x"],
  ["schedule", "get", "x", "--json"],
  ["schedule", "create", "x", "--workflow", "W", "--interval", "1h"],
  ["schedule", "update", "x", "--interval", "2h"],
  ["schedule", "occurrences", "x"],
  ["schedule", "pause", "x"],
  ["schedule", "resume", "x"],
  ["schedule", "trigger", "x"],
  ["schedule", "backfill", "x", "--start-at", "2026-01-01T00:00:00Z", "--end-at", "2026-01-02T00:00:00Z"],
  ["schedule", "apply", "-f", applyFile],
  ["workflow", "list"],
  ["workflow", "register", "W@1.0.0"],
  ["workflow", "deprecate", "W@1.0.0"],
];

const BODIES: Array<[string, unknown]> = [
  ["an empty body", undefined],
  ["null", null],
  ["[]", []],
  ["another object", { schedule_id: "x" }],
];

it.each(BODIES)("against %s, every command says what is missing in one line, exit 1", async (_, body) => {
  const server = new FakeServer(() => ({ status: 200, body }));
  for (const argv of COMMANDS) {
    const r = await server.run(argv);
    const line = `${argv.join(" ")}: ${r.stderr}`;
    // `--json` prints an object as it came (docs/cli.md); a page must still be one.
    const asItCame = argv.includes("--json") && argv[0] !== "ps" && argv[1] !== "list";
    if (asItCame && typeof body === "object" && body !== null && !Array.isArray(body)) {
      expect([r.code, r.stdout], line).toEqual([0, `${JSON.stringify(body)}\n`]);
      continue;
    }
    expect(r.code, line).toBe(1);
    expect(r.stdout, line).toBe("");
    expect(r.stderr, line).toMatch(/^orbit: the server's answer is not what orbit 0\.1\.0 expects \(.*\); is --server/);
    expect(r.stderr.split("\n"), line).toHaveLength(2);
    expect(r.stderr, line).not.toMatch(/Cannot read|not iterable|is not a function|undefined|reading '/);
  }
});

it.each([
  [undefined, ["ps"], "the answer to GET /v1/executions is empty, not a JSON object"],
  [null, ["ps", "--json"], "the answer to GET /v1/executions is null, not a JSON object"],
  [[], ["schedule", "list"], "the answer to GET /v1/schedules is a list, not a JSON object"],
  [{ schedule_id: "x" }, ["schedule", "list"], "the answer to GET /v1/schedules has no schedules (list)"],
  [[], ["schedule", "get", "x"], "the answer to GET /v1/schedules/x is a list, not a JSON object"],
  [{ schedule_id: "x" }, ["schedule", "get", "x"], "the schedule has no workflow (text)"],
  [{ executions: [], next_cursor: 5 }, ["ps"], "the answer to GET /v1/executions has no next_cursor (text or null)"],
  [{ workers: "x" }, ["workers"], "the answer to GET /v1/workers has no workers (list)"],
  [{ events: [1] }, ["events", "e"], "an event of the history is not a JSON object"],
])("%j for %j: %s", async (body, argv, what) => {
  const r = await new FakeServer(() => ({ status: 200, body })).run(argv);
  expect([r.code, r.stdout, r.stderr]).toEqual([1, "", said(what)]);
});

it("schedule list --wide still lists when only the workers or workflows answer is of another shape", async () => {
  const server = new FakeServer((r) => {
    if (r.path.startsWith("/v1/schedules")) {
      const s = { schedule_id: "a", workflow: "W", interval: "1h", state: "active", next_fire_at: null };
      return { status: 200, body: { schedules: [{ ...s, last_execution_id: null }], next_cursor: null } };
    }
    if (r.path === "/v1/workers") return { status: 200, body: { workers: [7] } };
    if (r.path === "/v1/workflows") return { status: 200, body: { workflows: [{ name: 1 }] } };
    return undefined;
  });
  const r = await server.run(["schedule", "list", "--wide"]);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/^a\s+W\s+every 1h\s+active/m);
});
