/** Runs a command to its end; resolves with its exit code and output, never rejects (test/package, test/e2e). */
import { execFile } from "node:child_process";

export function runCommand(
  cmd: string,
  args: readonly string[],
  cwd: string,
  timeoutMs = 120_000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, timeout: timeoutMs, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === "number" ? err.code : -1;
      resolve({ code, stdout, stderr });
    });
  });
}
