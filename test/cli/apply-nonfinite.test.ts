/**
 * `orbit schedule apply`: YAML's `.inf`, `-.inf` and `.nan` (and a JSON `1e400`) are refused with the
 * file, the key path and the line, before anything is sent. They were sent as `null` and the apply
 * exited 0, where the API refuses a non-finite number ("input/amount is not a finite number").
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseApplyFile } from "../../src/cli/apply-plan.js";
import { OrbitError } from "../../src/domain/errors.js";
import { stringifyJsonText } from "../../src/domain/json-text.js";
import { FakeServer } from "./fake-server.js";

const INF = `schedules:
  - schedule_id: yinf
    workflow: Fz
    cron: "0 0 1 1 *"
    paused: true
    input: {inf: .inf, nan: .nan, n: 0x10}
`;

function refusal(text: string, file = "s.yaml"): string {
  try {
    parseApplyFile(text, file);
  } catch (err) {
    expect(err).toBeInstanceOf(OrbitError);
    return (err as Error).message;
  }
  throw new Error("not refused");
}

describe("non-finite numbers in an apply file", () => {
  it("names the file, the key path, what was written and the line", () => {
    expect(refusal(INF, "inf.yaml")).toBe(
      "inf.yaml: schedules[0].input.inf is not a finite number (.inf) at line 6, column 18; JSON has no infinity or NaN",
    );
    expect(refusal("- {schedule_id: a, workflow: W, interval: 1m, input: {n: -.inf}}\n")).toBe(
      "s.yaml: [0].input.n is not a finite number (-.inf) at line 1, column 58; JSON has no infinity or NaN",
    );
    expect(refusal("schedules:\n  - schedule_id: a\n    input:\n      list: [1, .NaN]\n")).toBe(
      "s.yaml: schedules[0].input.list[1] is not a finite number (.NaN) at line 4, column 17; JSON has no infinity or NaN",
    );
    expect(refusal('[{"schedule_id":"j","input":{"a":1e400}}]', "s.json")).toBe(
      "s.json: [0].input.a is not a finite number (1e400) at line 1, column 34; JSON has no infinity or NaN",
    );
    expect(refusal("workflows: [{name: R, version: 1.0.0, input_schema: {maximum: .inf}}]\n")).toContain(
      "s.yaml: workflows[0].input_schema.maximum is not a finite number (.inf) at line 1",
    );
  });

  it("reads finite numbers (JSON's as written), and the text .inf, as before", () => {
    const file = parseApplyFile('- {schedule_id: a, input: {n: 0x10, s: ".inf", f: 1.5e3}}\n', "s.yaml");
    expect(stringifyJsonText(file.schedules[0]?.input)).toBe('{"n":16,"s":".inf","f":1.5e3}');
  });

  it("orbit schedule apply exits 1 and sends nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "orbit-apply-"));
    const path = join(dir, "inf.yaml");
    writeFileSync(path, INF);
    const server = new FakeServer(() => ({
      status: 200,
      body: { dry_run: false, steps: [], created: 0, updated: 0, unchanged: 0, deleted: 0 },
    }));
    const r = await server.run(["schedule", "apply", "-f", path]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `orbit: ${path}: schedules[0].input.inf is not a finite number (.inf) at line 6, column 18; JSON has no infinity or NaN\n`,
    );
    expect(server.requests).toEqual([]);
  });
});
