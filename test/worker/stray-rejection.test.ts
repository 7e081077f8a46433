/**
 * A promise in workflow code that rejects with nobody to handle it does not end the worker's
 * process (src/worker/stray-rejections.ts, docs/workflows.md § Worker): Node's default killed it,
 * with every run it held, and the execution crashed every worker that leased it again (a tester).
 */
import { expect, it } from "vitest";
import { startTestServer } from "../api/helpers.js";
import { type Child, spawnChild, stop, waitFor } from "./harness.js";

async function strayRun(env: Record<string, string>): Promise<{ out: string; exitCode: number | null }> {
  const t = await startTestServer();
  let child: Child | null = null;
  try {
    child = await spawnChild("stray-worker.ts", { ORBIT_TEST_SERVER: t.server.url, ...env });
    let out = "";
    child.proc.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    await t.ok("POST", "/v1/executions", { execution_id: "stray-1", workflow: "Stray", input: {} });
    await waitFor("the run to end", async () => (await t.ok("GET", "/v1/executions/stray-1")).status !== "RUNNING");
    const execution = await t.ok("GET", "/v1/executions/stray-1");
    expect(execution.status).toBe("COMPLETED");
    expect(execution.result).toEqual({ after: 1 });
    return { out, exitCode: child.proc.exitCode };
  } finally {
    if (child !== null) await stop(child, "SIGKILL");
    await t.stop();
  }
}

it("logs a stray rejection with the runs it holds and keeps running them", async () => {
  const { out, exitCode } = await strayRun({});
  expect(exitCode).toBeNull();
  const line = out.split("\n").find((l) => l.startsWith("ERROR a promise rejected and no code handled it"));
  expect(line).toBeDefined();
  const fields = JSON.parse(line!.slice(line!.indexOf(" {") + 1)) as Record<string, unknown>;
  expect(fields).toMatchObject({ error: "Error: nobody awaited me", running: ["stray-1"] });
});

it("leaves a stray rejection to a program that listens for them itself", async () => {
  const { out, exitCode } = await strayRun({ ORBIT_TEST_OWN: "1" });
  expect(exitCode).toBeNull();
  expect(out).toContain("OWN nobody awaited me\n");
  expect(out).not.toContain("ERROR a promise rejected");
});
