/**
 * Refusals that named the wrong cause (a tester): a port out of range was "not an http:// URL", a
 * blank cron was told to `give ""`, a deeply nested file "Maximum call stack size exceeded", a
 * 100 KB id "the headers are too large". Each now says what is wrong, before anything is sent.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { FakeServer } from "./fake-server.js";
import { runCli } from "./run-cli.js";

const HELP = "\n(add --help for usage)\n";

it("--server with a port out of range says so", async () => {
  const r = await runCli(["ps", "--server", "http://127.0.0.1:99999"]);
  expect([r.code, r.stderr]).toEqual([
    2,
    `orbit: --server "http://127.0.0.1:99999" has the port 99999, out of range: a port is 1 to 65535${HELP}`,
  ]);
});

it("--server with a query or fragment is refused as such (it was sent before the path)", async () => {
  for (const server of ["http://127.0.0.1:7751?x=1", "http://127.0.0.1:7751/#top"]) {
    const r = await runCli(["ps", "--server", server]);
    expect([r.code, r.stderr]).toEqual([
      2,
      `orbit: --server "${server}" holds a query (?…) or fragment (#…): give the server's address alone, such as http://127.0.0.1:7233${HELP}`,
    ]);
  }
});

it("preview --cron of blanks says the expression is empty", async () => {
  const r = await runCli(["schedule", "preview", "--cron", "   "]);
  expect([r.code, r.stderr]).toEqual([
    2,
    `orbit: --cron is empty: give the cron expression, such as "0 2 * * *"${HELP}`,
  ]);
});

it("a schedules file nested past the stack says it is nested too deeply", async () => {
  const file = join(mkdtempSync(join(tmpdir(), "orbit-deep-")), "deep.yaml");
  writeFileSync(file, `a: ${"[".repeat(100_000)}`);
  const r = await new FakeServer(() => undefined).run(["schedule", "apply", "-f", file]);
  expect([r.code, r.stderr]).toEqual([
    1,
    `orbit: ${file}: not YAML or JSON: its lists or maps are nested too deeply\n`,
  ]);
});

it("backup and restore refuse an empty file name before any work", async () => {
  const backup = await runCli(["backup", ""]);
  expect([backup.code, backup.stderr]).toEqual([2, `orbit: give the backup file to write (the name is empty)${HELP}`]);
  const restore = await runCli(["restore", " "]);
  expect([restore.code, restore.stderr]).toEqual([
    2,
    `orbit: give the backup file to restore (the name is empty)${HELP}`,
  ]);
});

it("an id longer than any Orbit id is refused before sending", async () => {
  const server = new FakeServer(() => undefined);
  const r = await server.run(["schedule", "get", "a".repeat(100_000)]);
  expect([r.code, r.stderr]).toEqual([
    1,
    `orbit: the id "${"a".repeat(40)}…" is 100000 characters long; an Orbit id is at most 255 (a schedule id 100)\n`,
  ]);
  expect(server.requests).toEqual([]);
  // Exit 1 as the server's refusal it stands for (docs/cli.md § Exit codes), for orbit status too.
  const status = await server.run(["status", "a".repeat(1001)]);
  expect([status.code, status.stderr]).toEqual([
    1,
    `orbit: the id "${"a".repeat(40)}…" is 1001 characters long; an Orbit id is at most 255 (a schedule id 100)\n`,
  ]);
  expect(server.requests).toEqual([]);
});
