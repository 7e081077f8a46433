/**
 * `orbit schedule apply --prune` with a file that names no schedules: `{}` was read as an empty set
 * and deleted the set's every schedule (exit 0), and so did `{"workflows": []}`, while an empty file
 * was refused (a tester). `{}` is refused as an empty file is; with --prune a file needs a
 * `schedules` key (or to be a list) to delete everything.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { FakeServer } from "./fake-server.js";

const dir = mkdtempSync(join(tmpdir(), "orbit-apply-nothing-"));
const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const applied = () =>
  new FakeServer((r) =>
    r.path === "/v1/schedules/apply"
      ? {
          status: 200,
          body: {
            dry_run: false,
            scope: {},
            workflows: [],
            steps: [],
            created: 0,
            updated: 0,
            unchanged: 0,
            deleted: 2,
          },
        }
      : undefined,
  );

it.each([
  ["{}", "empty.json", "{}\n", []],
  ["{} with --prune", "empty2.json", "{}\n", ["--prune"]],
  ["an empty file", "nothing.yaml", "", ["--prune"]],
])("refuses %s and sends nothing", async (_, name, text, flags) => {
  const server = applied();
  const r = await server.run(["schedule", "apply", "-f", file(name, text), ...flags]);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/give a list of schedules, or \{schedules: \[\.\.\.\]\}/);
  expect(server.requests).toEqual([]);
});

it("refuses --prune with a file of workflows alone, which would delete every schedule of the set", async () => {
  for (const text of [
    '{"workflows": []}',
    "workflows:\n  - {name: W, version: 1.0.0}\n",
    "- {kind: workflow, name: W, version: 1.0.0}\n",
  ]) {
    const server = applied();
    const r = await server.run(["schedule", "apply", "-f", file("w.yaml", text), "--prune"]);
    expect(r.code, text).toBe(1);
    expect(r.stderr).toContain(
      "declares no schedules, only workflows, and with --prune that deletes every schedule of the apply set; if that is meant, say so with `schedules: []` ({schedules: [], workflows: [...]}), else leave out --prune",
    );
    expect(server.requests).toEqual([]);
  }
  // Without --prune it registers the workflows and touches no schedule.
  const server = applied();
  const r = await server.run(["schedule", "apply", "-f", file("w2.yaml", '{"workflows": []}')]);
  expect(r.code, r.stderr).toBe(0);
  expect(server.requests[0]?.body).toMatchObject({ schedules: [] });
});

it("prunes everything when the file says so: `schedules: []` or `[]`", async () => {
  for (const text of ["schedules: []\n", "[]\n"]) {
    const server = applied();
    const r = await server.run(["schedule", "apply", "-f", file("s.yaml", text), "--prune"]);
    expect(r.code, r.stderr).toBe(0);
    expect(server.requests[0]?.body).toMatchObject({ schedules: [], prune: true });
  }
});
