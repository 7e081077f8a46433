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

  it("still prints a group's help for the group alone", async () => {
    const r = await runCli(["help", "schedule"]);
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")[0]).toBe("Usage: orbit schedule [options] [command]");
  });
});
