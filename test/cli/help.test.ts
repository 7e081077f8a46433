/** What `--help` and `orbit help …` print. */
import { describe, expect, it } from "vitest";
import { runCli } from "./run-cli.js";

/** The help's lines of one option, joined (commander wraps a long description). */
function optionHelp(help: string, flag: string): string {
  const lines = help.split("\n");
  const start = lines.findIndex((l) => l.trimStart().startsWith(flag));
  if (start < 0) return "";
  let text = lines[start] ?? "";
  for (const l of lines.slice(start + 1)) {
    if (!/^ {20,}\S/.test(l)) break;
    text += ` ${l.trim()}`;
  }
  return text.replace(/\s+/g, " ");
}

describe("orbit schedule update --help", () => {
  it("shows no defaults for the settings flags: leaving one out keeps the schedule's value", async () => {
    const r = await runCli(["schedule", "update", "--help"]);
    expect(r.code).toBe(0);
    for (const flag of ["--version", "--input", "--timezone", "--dst", "--overlap", "--catchup"]) {
      const text = optionHelp(r.stdout, flag);
      expect(text, flag).not.toBe("");
      expect(text, flag).not.toContain("default");
    }
    // Only the connection option keeps one (it is not a setting).
    expect(r.stdout).not.toContain("(default");
    expect(r.stdout).toMatch(/--server <url>[\s\S]*default:/);
  });

  it("still shows them on create, where they are what a flag left out gives", async () => {
    const r = await runCli(["schedule", "create", "--help"]);
    expect(optionHelp(r.stdout, "--input")).toContain("(default: {})");
    expect(optionHelp(r.stdout, "--timezone")).toContain("(default: UTC)");
    expect(optionHelp(r.stdout, "--overlap")).toContain("(default: skip)");
  });
});

describe("orbit help <group> <command>", () => {
  it("prints the command's help, as `orbit schedule create --help` does", async () => {
    const asked = await runCli(["help", "schedule", "create"]);
    const flag = await runCli(["schedule", "create", "--help"]);
    expect(asked.code).toBe(0);
    expect(asked.stdout.split("\n")[0]).toBe("Usage: orbit schedule create [options] <schedule-id>");
    expect(asked.stdout).toBe(flag.stdout);
    const register = await runCli(["--server", "http://orbit.test:7233", "help", "workflow", "register"]);
    expect(register.stdout.split("\n")[0]).toBe("Usage: orbit workflow register [options] [workflow] [version]");
  });

  it("refuses a name that is no command, with the suggestion `orbit <name>` gives", async () => {
    for (const [args, said] of [
      [["help", "schedul"], "unknown command 'schedul'\n(Did you mean schedule?)"],
      // It printed the group's help, exit 0, as if `create` had been asked for.
      [["help", "schedule", "craete"], "unknown command 'craete'\n(Did you mean create?)"],
      [["schedule", "help", "crate"], "unknown command 'crate'\n(Did you mean create?)"],
    ] as const) {
      const r = await runCli([...args]);
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 2, stdout: "" });
      expect(r.stderr).toContain(said);
    }
  });

  it("prints the help for `help --help` and `help help`, exit 0 on stdout, as --help does", async () => {
    const root = await runCli(["--help"]);
    for (const args of [["help", "--help"], ["help", "help"], ["help"]]) {
      const r = await runCli(args);
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: "" });
      expect(r.stdout).toBe(root.stdout);
    }
  });

  it("still prints a group's help for the group alone", async () => {
    const r = await runCli(["help", "schedule"]);
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")[0]).toBe("Usage: orbit schedule [options] [command]");
  });
});
