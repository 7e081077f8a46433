/**
 * A write carried out whose answer was lost (the server stopped by SIGSTOP past the CLI's 30 s, a
 * tester): the retry the CLI's message gives (`--idempotency-key <the key it sent>`) gets the first
 * answer from a real server, so a trigger under `overlap: allow` starts one execution, not two, and a
 * create is not "already exists". The answer is lost here by a fetch that lets the request reach
 * the server and then fails as a timeout does.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../cli/run-cli.js";
import { e2eTitle, HAS_SERVER, type OrbitServer, startOrbitServer } from "./harness.js";

/** A fetch whose answer to the first request for `path` is lost after the server carried it out. */
function losingFirstAnswerTo(path: string): typeof fetch {
  let lost = false;
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const res = await fetch(input, init);
    if (!lost && new URL(String(input)).pathname === path) {
      lost = true;
      await res.text();
      throw new DOMException("The operation was aborted due to timeout", "TimeoutError");
    }
    return res;
  }) as typeof fetch;
}

const keyIn = (stderr: string): string => /--idempotency-key (\S+)/.exec(stderr)?.[1] ?? "";

describe.skipIf(!HAS_SERVER)(e2eTitle("a write whose answer was lost, retried as the CLI says (e2e)"), () => {
  let server: OrbitServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    server = await startOrbitServer();
    env = { ORBIT_SERVER: server.url };
    expect((await runCli(["workflow", "register", "W@1.0.0"], { env })).code).toBe(0);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("a create retried with the key it names is created once, not 'already exists'", async () => {
    const argv = ["schedule", "create", "s1", "--workflow", "W", "--interval", "1h"];
    const first = await runCli(argv, { env, fetch: losingFirstAnswerTo("/v1/schedules") });
    expect(first.code).toBe(1);
    expect(first.stderr).toContain("the change may or may not have been made");
    const again = await runCli([...argv, "--idempotency-key", keyIn(first.stderr)], { env });
    expect([again.code, again.stderr]).toEqual([0, ""]);
    expect(again.stdout).toMatch(/^active s1 {2}every 1h\n/);
  });

  it("a trigger retried with the key it names starts one execution, not two", async () => {
    const made = await runCli(
      ["schedule", "create", "s2", "--workflow", "W", "--interval", "1h", "--overlap", "allow"],
      {
        env,
      },
    );
    expect(made.code, made.stderr).toBe(0);
    const first = await runCli(["schedule", "trigger", "s2"], {
      env,
      fetch: losingFirstAnswerTo("/v1/schedules/s2/trigger"),
    });
    expect(first.code).toBe(1);
    const again = await runCli(["schedule", "trigger", "s2", "--idempotency-key", keyIn(first.stderr)], { env });
    expect(again.code, again.stderr).toBe(0);
    const ps = await runCli(["ps", "--schedule", "s2", "--json"], { env });
    const executions = (JSON.parse(ps.stdout) as { executions: unknown[] }).executions;
    expect(executions).toHaveLength(1);
  });
});
