/**
 * examples/embed.ts as a user runs it, with one setting changed between starts (docs/operations.md
 * § Embed): its schedule is "declared in code, applied at every start". It created the schedule and
 * on any failure updated only its cron and timezone (a tester): an invalid cron on a new schedule
 * came out as `schedule … does not exist`, and a changed input was never applied. Each run is the
 * example's text with its imports pointed at src/ and its data folder at a temporary one.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { OrbitClient } from "../../src/client/client.js";
import { ROOT } from "../e2e/harness.js";

const EXAMPLE = readFileSync(join(ROOT, "examples", "embed.ts"), "utf8");

/** The example's text with `edits` made, each of which must find its text. */
function edited(dataDir: string, edits: ReadonlyArray<readonly [string, string]> = []): string {
  const all: ReadonlyArray<readonly [string, string]> = [
    ['from "orbit-scheduler";', `from ${JSON.stringify(join(ROOT, "src", "index.ts"))};`],
    ['from "orbit-scheduler/server";', `from ${JSON.stringify(join(ROOT, "src", "server", "server.ts"))};`],
    ['"./.orbit-embed"', JSON.stringify(dataDir)],
    ...edits,
  ];
  let text = EXAMPLE;
  for (const [from, to] of all) {
    if (!text.includes(from)) throw new Error(`examples/embed.ts no longer holds ${from}`);
    text = text.replace(from, to);
  }
  return text;
}

interface Run {
  child: ChildProcess;
  /** stdout and stderr so far. */
  output: () => string;
  exited: Promise<number | null>;
}

function run(file: string, text: string): Run {
  writeFileSync(file, text);
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("ORBIT_")));
  const child = spawn(process.execPath, ["--import", "tsx", file], {
    cwd: ROOT,
    env: clean,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let said = "";
  const add = (chunk: Buffer): void => {
    said += chunk.toString();
  };
  child.stdout?.on("data", add);
  child.stderr?.on("data", add);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => said, exited };
}

/** The server's URL once the example says it runs; rejects if it exits first. */
function embedded(r: Run): Promise<string> {
  return new Promise((resolve, reject) => {
    const look = (): void => {
      const m = /Orbit embedded at (http:\/\/\S+);/.exec(r.output());
      if (m?.[1]) resolve(m[1]);
    };
    r.child.stdout?.on("data", look);
    void r.exited.then((code) => reject(new Error(`examples/embed.ts exited ${code}:\n${r.output()}`)));
  });
}

describe("examples/embed.ts", () => {
  const dir = mkdtempSync(join(tmpdir(), "orbit-embed-example-"));
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });
  const start = (name: string, text: string): Run => {
    const r = run(join(dir, name), text);
    children.push(r.child);
    return r;
  };

  it("refuses an invalid cron with its reason, and applies a changed setting at the next start", async () => {
    const data = join(dir, "data");
    // A first start with an invalid cron: the cron's error, not "does not exist".
    const bad = start("bad.mts", edited(data, [['"0 7 * * *"', '"0 25 * * *"']]));
    expect(await bad.exited).not.toBe(0);
    expect(bad.output()).toContain("`25` is out of range for the hour field");
    expect(bad.output()).not.toContain("does not exist");

    const first = start("first.mts", edited(data));
    const url = await embedded(first);
    expect(await new OrbitClient({ server: url }).getSchedule("daily-report")).toMatchObject({
      cron: "0 7 * * *",
      input: { team: "ops" },
    });
    first.child.kill("SIGINT");
    expect(await first.exited).toBe(0);

    // The same schedule declared with another input and hour: both applied.
    const changed = edited(data, [
      ['"0 7 * * *"', '"0 8 * * *"'],
      ['{ team: "ops" }', '{ team: "sales" }'],
    ]);
    const second = start("second.mts", changed);
    const again = await embedded(second);
    expect(await new OrbitClient({ server: again }).getSchedule("daily-report")).toMatchObject({
      cron: "0 8 * * *",
      timezone: "Europe/Berlin",
      input: { team: "sales" },
    });
    second.child.kill("SIGINT");
    expect(await second.exited).toBe(0);
  }, 120_000);
});
