/** `orbit version`: the release, the Node.js runtime and the time-zone data the schedules use. */
import type { Command } from "commander";
import { VERSION } from "../version.js";
import type { CliIO } from "./io.js";

export interface VersionInfo {
  readonly orbit: string;
  readonly node: string;
  /**
   * ICU's tz database version: every server of one release computes the same times
   * (docs/design.md § Time zones and DST).
   */
  readonly tzdata: string;
}

export function versionInfo(): VersionInfo {
  return { orbit: VERSION, node: process.version, tzdata: process.versions.tz ?? "unknown" };
}

export function registerVersionCommand(program: Command, io: CliIO): void {
  program
    .command("version")
    .description("print the versions of orbit, Node.js and the time-zone data")
    .option("--json", 'print {"orbit":…,"node":…,"tzdata":…}')
    .action(async (opts: { json?: boolean }) => {
      const v = versionInfo();
      await io.stdout.write(
        opts.json === true
          ? `${JSON.stringify({ orbit: v.orbit, node: v.node, tzdata: v.tzdata })}\n`
          : `orbit ${v.orbit}\nnode ${v.node}\ntzdata ${v.tzdata}\n`,
      );
    });
}
