/** Runs the CLI in-process with captured output, a fixed environment and a fixed clock. */
import { type CliIO, memoryWriter, type Writer } from "../../src/cli/io.js";
import { run } from "../../src/cli/main.js";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  /** The clock; default 2026-11-15T18:51:00.347Z (the seed's creation time). */
  now?: number;
  stdout?: Writer;
  /** The fetch the client uses (a fake server); default the global one. */
  fetch?: typeof fetch;
  /** The wait between the tries of a write answered 503; default none (returns at once). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export const SEED_NOW = Date.UTC(2026, 10, 15, 18, 51, 0, 347);

export async function runCli(argv: string[], opts: RunOptions = {}): Promise<CliResult> {
  const stdout = memoryWriter();
  const stderr = memoryWriter();
  const io: CliIO = {
    stdout: opts.stdout ?? stdout,
    stderr,
    env: opts.env ?? {},
    now: () => opts.now ?? SEED_NOW,
    ...(opts.fetch === undefined ? {} : { fetch: opts.fetch }),
    sleep: opts.sleep ?? (() => Promise.resolve()),
  };
  const code = await run(argv, io);
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}
