/**
 * Options after `--` are arguments (literal-args.ts): the usage errors say so, where they suggested
 * the very option given (`unknown option '--workflow'` then `(Did you mean --workflow?)`) and took
 * an id after `--` for a missing one (a tester).
 */
import { expect, it } from "vitest";
import { runCli } from "./run-cli.js";

const env = { ORBIT_SERVER: "http://127.0.0.1:9" };

it("a required option given after -- is said to come after it, not suggested as itself", async () => {
  const r = await runCli(["schedule", "create", "--", "x9", "--workflow", "W", "--interval", "1h"], { env });
  expect(r.code).toBe(2);
  expect(r.stderr).not.toContain("Did you mean");
  expect(r.stderr).not.toContain("unknown option");
  expect(r.stderr).toMatch(
    /^orbit: required option '--workflow <name>' not specified\n\(--workflow comes after `--`, which makes everything after it an argument: give options before `--`\)\n/,
  );
});

it("an id after -- that starts with a dash is the id, not a missing one", async () => {
  const r = await runCli(["schedule", "create", "--", "-dash2"], { env });
  expect(r.code).toBe(2);
  expect(r.stderr).not.toContain("missing required argument");
  expect(r.stderr).toMatch(/^orbit: required option '--workflow <name>' not specified\n/);
  // As without the dash.
  const plain = await runCli(["schedule", "create", "--", "x9"], { env });
  expect(plain.stderr).toMatch(/^orbit: required option '--workflow <name>' not specified\n/);
});

it("too many arguments because an option came after -- says so", async () => {
  const r = await runCli(["schedule", "get", "--", "x", "--json"], { env });
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/too many arguments for 'get'\. Expected 1 argument but got 2\.\n\(--json comes after `--`/);
});

it("options before -- and an option's value `--` work as before", async () => {
  // A misspelled required option before `--` still gets its suggestion.
  const r = await runCli(["schedule", "create", "x", "--workflw", "W", "--", "y"], { env });
  expect(r.stderr).toMatch(/unknown option '--workflw'\n\(Did you mean --workflow\?\)/);
  // `--description --` is the description; the id after it is the id.
  const d = await runCli(["schedule", "create", "--description", "--", "x", "--interval", "1h"], { env });
  expect(d.stderr).toMatch(/^orbit: required option '--workflow <name>' not specified\n\(add --help/);
});
