import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { VERSION } from "../../src/version.js";
import { runCli } from "./run-cli.js";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

describe("orbit version", () => {
  it("reads the version from package.json", () => {
    expect(VERSION).toBe(pkg.version);
  });

  it("prints orbit, node and tzdata", async () => {
    const r = await runCli(["version"]);
    expect(r).toEqual({
      code: 0,
      stdout: `orbit ${pkg.version}\nnode ${process.version}\ntzdata ${process.versions.tz}\n`,
      stderr: "",
    });
  });

  it("prints JSON with --json", async () => {
    const r = await runCli(["version", "--json"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `${JSON.stringify({ orbit: pkg.version, node: process.version, tzdata: process.versions.tz })}\n`,
    );
  });

  it("answers --version with the orbit version", async () => {
    const r = await runCli(["--version"]);
    expect(r).toEqual({ code: 0, stdout: `orbit ${pkg.version}\n`, stderr: "" });
  });
});
