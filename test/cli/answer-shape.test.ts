/**
 * An Orbit-labelled answer that lacks a field the command prints: `orbit status` against `{}` printed
 * `undefined undefined  undefined@undefined` and `elapsed: NaNdNaNh`, exit 0, and a `schedules` page
 * holding a nested array a blank row (a tester). Each is refused with exit 1 and one line.
 */
import { expect, it } from "vitest";
import { FakeServer } from "./fake-server.js";

const empty = new FakeServer(() => ({ status: 200, body: {} }));

const said = (what: string): string =>
  `orbit: the server's answer is not what orbit 0.1.0 expects (${what}); is --server (or ORBIT_SERVER) an Orbit server of this version? \`orbit doctor\` checks\n`;

it.each([
  [["status", "x"], "the execution has no execution_id (text)"],
  [["cancel", "x"], "the execution has no execution_id (text)"],
  [["retry", "x"], "the execution has no execution_id (text)"],
  [["start", "W"], "the execution has no execution_id (text)"],
  [["schedule", "pause", "x"], "the schedule has no schedule_id (text)"],
  [["schedule", "resume", "x"], "the schedule has no schedule_id (text)"],
  [["schedule", "trigger", "x"], "the trigger's result has no started (boolean)"],
  [
    ["schedule", "backfill", "x", "--start-at", "2026-01-01T00:00:00Z", "--end-at", "2026-01-02T00:00:00Z"],
    "the backfill's result has no start_at (text)",
  ],
  [["workflow", "register", "W", "--version", "1.0.0"], "the workflow has no name (text)"],
])("orbit %j against {} is exit 1, one line", async (argv, what) => {
  const r = await empty.run(argv);
  expect([r.code, r.stdout, r.stderr]).toEqual([1, "", said(what)]);
});

it("a list whose rows are not schedules, executions or workflows is refused, not printed blank", async () => {
  const nested = new FakeServer((r) => {
    if (r.path.startsWith("/v1/schedules")) return { status: 200, body: { schedules: [[]], next_cursor: null } };
    if (r.path.startsWith("/v1/executions")) return { status: 200, body: { executions: [{}], next_cursor: null } };
    if (r.path.startsWith("/v1/workflows")) return { status: 200, body: { workflows: [7] } };
    return undefined;
  });
  const list = await nested.run(["schedule", "list"]);
  expect([list.code, list.stdout, list.stderr]).toEqual([1, "", said("a schedule of the list is not a JSON object")]);
  const ps = await nested.run(["ps"]);
  expect([ps.code, ps.stderr]).toEqual([1, said("an execution of the list has no execution_id (text)")]);
  const workflows = await nested.run(["workflow", "list"]);
  expect([workflows.code, workflows.stderr]).toEqual([1, said("a workflow of the list is not a JSON object")]);
});
