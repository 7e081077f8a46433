/**
 * docs/cli.md's `orbit workflow register` block, run as printed after docs/quickstart.md § 3 on the
 * same server: the page registered OrderProcessing@1.0.0 with `@order.schema.json`, a file it never
 * gave, and after the quickstart (1.0.0 without a schema) the command was refused, "already
 * registered with a different input_schema" (a newcomer's report).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { e2eTitle, HAS_SERVER, type OrbitServer, orbit, ROOT, startOrbitServer } from "./harness.js";

const read = (page: string): string => readFileSync(join(ROOT, "docs", page), "utf8");

/** The first fenced block after `heading`, as lines. */
function blockAfter(page: string, heading: string): string[] {
  const from = page.indexOf(heading);
  expect(from, heading).toBeGreaterThan(-1);
  const block = /```[^\n]*\n([\s\S]*?)```/.exec(page.slice(from));
  return (block?.[1] ?? "").split("\n").filter((l) => l !== "");
}

/** `$ <command>` lines, each with the lines under it. */
function transcript(lines: readonly string[]): Array<{ command: string; output: string[] }> {
  const steps: Array<{ command: string; output: string[] }> = [];
  for (const line of lines) {
    if (line.startsWith("$ ")) steps.push({ command: line.slice(2), output: [] });
    else steps.at(-1)?.output.push(line);
  }
  return steps;
}

/** Splits the page's command lines as a shell would for the quoting they use ("…"). */
function words(command: string): string[] {
  return (command.match(/"[^"]*"|\S+/g) ?? []).map((w) => w.replace(/^"(.*)"$/, "$1"));
}

describe.skipIf(!HAS_SERVER)(e2eTitle("docs/cli.md's workflow register block after the quickstart (e2e)"), () => {
  let server: OrbitServer;
  let dir: string;
  beforeAll(async () => {
    server = await startOrbitServer();
    dir = mkdtempSync(join(tmpdir(), "orbit-cli-docs-"));
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("gives the schema file and runs as printed", async () => {
    const quickstart = read("quickstart.md")
      .split("\n")
      .find((l) => l.startsWith("$ npx orbit workflow register "));
    expect(quickstart).toBeDefined();
    const first = await orbit([...words((quickstart ?? "").slice("$ npx orbit ".length)), "--server", server.url]);
    expect(first.code, first.stderr).toBe(0);

    const steps = transcript(blockAfter(read("cli.md"), "## `orbit workflow register`"));
    const file = steps.find((s) => s.command === "cat order.schema.json");
    expect(file, "the page gives order.schema.json").toBeDefined();
    writeFileSync(join(dir, "order.schema.json"), `${file?.output.join("\n")}\n`);
    const commands = steps.filter((s) => s.command.startsWith("orbit "));
    expect(commands.length).toBeGreaterThanOrEqual(3);
    for (const step of commands) {
      const args = words(step.command.slice("orbit ".length)).map((w) =>
        w === "@order.schema.json" ? `@${join(dir, "order.schema.json")}` : w,
      );
      const r = await orbit([...args, "--server", server.url]);
      const label = `$ ${step.command}\n${r.stdout}${r.stderr}`;
      const refused = step.output.length === 1 && step.output[0]?.startsWith("orbit: ") === true;
      expect(r.code, label).toBe(refused ? 1 : 0);
      expect(
        (refused ? r.stderr : r.stdout).split("\n").filter((l) => l !== ""),
        label,
      ).toEqual(step.output);
    }
  }, 60_000);
});
