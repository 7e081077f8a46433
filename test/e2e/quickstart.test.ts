/**
 * docs/quickstart.md followed literally: every `$ npx orbit …` line of its transcripts is run, in
 * order, against a real `orbit server`, and what it prints must be what the page prints, line for
 * line, once instants, durations and counts are masked (the page was written on another day).
 * A newcomer copies these lines; a drifted one is a broken first hour.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { e2eTitle, HAS_SERVER, type OrbitServer, orbit, ROOT, startOrbitServer, waitFor } from "./harness.js";

const PAGE = readFileSync(join(ROOT, "docs/quickstart.md"), "utf8");

/** One `$ npx orbit …` line and the lines the page shows under it. */
interface Step {
  args: string[];
  expected: string[];
}

/** Splits a command line as a POSIX shell would for the quoting the page uses ('…' and "…"). */
function shellWords(line: string): string[] {
  return (line.match(/(?:'[^']*'|"(?:[^"\\]|\\.)*"|[^\s'"]+)+/g) ?? []).map((word) =>
    word.replace(/'([^']*)'|"((?:[^"\\]|\\.)*)"/g, (_, single?: string, double?: string) =>
      single !== undefined ? single : (double ?? "").replace(/\\(.)/g, "$1"),
    ),
  );
}

/**
 * The page's code blocks in order, each with its info string (`sh`, `yaml`, or none), read fence by
 * fence: a pattern matching "```…```" pairs a block's closing fence with the next one's opening
 * after any block with another info string, and so skipped half the page.
 */
function codeBlocks(page: string): Array<{ info: string; lines: string[] }> {
  const blocks: Array<{ info: string; lines: string[] }> = [];
  let open: { info: string; lines: string[] } | null = null;
  for (const line of page.split("\n")) {
    if (open === null) {
      const fence = /^```(\S*)\s*$/.exec(line);
      if (fence) open = { info: fence[1] ?? "", lines: [] };
    } else if (/^```\s*$/.test(line)) {
      blocks.push(open);
      open = null;
    } else open.lines.push(line);
  }
  return blocks;
}

function transcriptSteps(page: string): Step[] {
  const steps: Step[] = [];
  for (const block of codeBlocks(page)) {
    if (block.info !== "" && block.info !== "sh") continue;
    let current: Step | null = null;
    for (const line of block.lines) {
      if (line.startsWith("$ npx orbit ")) {
        current = { args: shellWords(line.slice("$ npx orbit ".length)), expected: [] };
        steps.push(current);
      } else if (current !== null && line !== "") current.expected.push(line);
    }
  }
  return steps;
}

/** Masks what differs from day to day: instants, durations, counts, the next fires' number. */
function masked(lines: readonly string[]): string[] {
  return lines.map((l) =>
    l
      // An instant is 20 or 24 characters: the padding after one in a table column varies with it.
      .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z( +(?=\S))?/g, (_, _ms, pad) => (pad ? "<T> " : "<T>"))
      .replace(/(?<![\w-])\d+(\.\d+)?(ms|s)\b/g, "<D>")
      .replace(/(fired|skipped): +\d+/g, "$1: <N>")
      .replace(/ +$/, ""),
  );
}

describe.skipIf(!HAS_SERVER)(e2eTitle("docs/quickstart.md, followed literally (e2e)"), () => {
  let server: OrbitServer;
  let dir: string;
  beforeAll(async () => {
    server = await startOrbitServer();
    dir = mkdtempSync(join(tmpdir(), "orbit-quickstart-"));
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("every command works as printed and prints what the page shows", async () => {
    const steps = transcriptSteps(PAGE);
    expect(steps.length).toBeGreaterThan(12);
    // The page's schedules.yaml, written where `-f schedules.yaml` will find it.
    const yaml = codeBlocks(PAGE).find((b) => b.info === "yaml")?.lines;
    expect(yaml).toBeDefined();
    writeFileSync(join(dir, "schedules.yaml"), `${(yaml ?? []).join("\n")}\n`);
    // Every command of the page runs, the last sections' included.
    const commands = steps.map((s) => s.args.slice(0, 2).join(" "));
    for (const c of ["schedule apply", "schedule pause", "schedule delete"]) expect(commands).toContain(c);
    expect(commands.some((c) => c.startsWith("cancel "))).toBe(true);

    let manualId: string | null = null;
    for (const step of steps) {
      if (step.args[0] === "server") {
        // Started above, on a free port and a temporary directory: the same line, other values.
        expect(server.banner.replace(/:\d+ \(sqlite .*\)$/, "")).toBe(
          (step.expected[0] ?? "").replace(/:\d+ \(sqlite .*\)$/, ""),
        );
        continue;
      }
      const args = step.args.map((a) => (a === "schedules.yaml" ? join(dir, "schedules.yaml") : a));
      if (args[0] === "ps") {
        // The page shows the 10-second schedule after it fired once and skipped once (no worker).
        await waitFor(
          async () => {
            const s = JSON.parse(
              (await orbit(["schedule", "get", "orders-every-10s", "--json", "--server", server.url])).stdout,
            );
            return s.fired >= 1 && s.skipped >= 1 ? true : undefined;
          },
          45_000,
          "orders-every-10s to fire once and skip once",
        );
      }
      // The page's manual execution id stands for the one this run's trigger made.
      const pageManual = args.find((a) => a.includes(":manual:"));
      if (pageManual !== undefined && manualId !== null) args[args.indexOf(pageManual)] = manualId;
      const r = await orbit([...args, "--server", server.url]);
      const label = `$ orbit ${step.args.join(" ")}\n${r.stdout}${r.stderr}`;
      expect(r.code, label).toBe(0);
      expect(r.stderr, label).toBe("");
      const got = r.stdout.split("\n").filter((l) => l !== "");
      const started = /^started execution (\S+)$/.exec(got[0] ?? "");
      if (started?.[1] !== undefined && manualId === null) manualId = started[1];
      if (args[0] === "ps" || (args[0] === "schedule" && args[1] === "occurrences")) {
        // Rows depend on how many occurrences passed meanwhile: the same kinds of row, in order.
        expect(new Set(masked(got)), label).toEqual(new Set(masked(step.expected)));
      } else if (args[0] === "schedule" && args[1] === "list") {
        // Listed right after the 10-second schedule was created: whether it fired once already
        // depends on where the run falls in its 10 s (LAST EXECUTION "-" or its first execution).
        const lastMasked = (lines: readonly string[]) =>
          masked(lines).map((l) => l.replace(/ (-|orders-every-10s:<T>)$/, " <last execution>"));
        expect(lastMasked(got), label).toEqual(lastMasked(step.expected));
      } else {
        expect(masked(got), label).toEqual(masked(step.expected));
      }
    }
  }, 120_000);
});
