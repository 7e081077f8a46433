/**
 * A worker closes on SIGTERM by default (src/worker/signals.ts, docs/workflows.md § Worker): the
 * step in flight finishes and is journaled, the task is handed back at once, and the process then
 * ends on the signal as Node's default would. Before, a worker that did not wire SIGTERM to
 * close() itself died mid-step: its task waited for the lease to end (30 s) and the step ran again.
 */
import { expect, it } from "vitest";
import { startTestServer } from "../api/helpers.js";
import { type Child, spawnChild, stop, waitFor } from "./harness.js";

it("closes on SIGTERM without a handler of the program's: the step ends, the task is handed back, the process ends", async () => {
  const t = await startTestServer();
  let child: Child | null = null;
  try {
    const started = await spawnChild("signal-worker.ts", { ORBIT_TEST_SERVER: t.server.url });
    child = started;
    await t.ok("POST", "/v1/executions", { execution_id: "sig-1", workflow: "TwoSteps", input: {} });
    const events = async () =>
      ((await t.ok("GET", "/v1/executions/sig-1/events")).events as { type: string }[]).map((e) => e.type);
    await waitFor("the lease", async () => (await events()).includes("WorkflowTaskStarted"));
    let out = "";
    started.proc.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      started.proc.once("exit", (_code, signal) => resolve(signal)),
    );
    started.proc.kill("SIGTERM");
    expect(await exited).toBe("SIGTERM");
    // Said at once, before the step in flight ends (it was silent until "worker closed").
    expect(out).toContain(
      "INFO SIGTERM: closing the worker\nINFO closing: waiting for the running executions to finish their current step\n",
    );
    const types = await events();
    expect(types).toContain("StepCompleted");
    expect(types.at(-1)).toBe("WorkflowTaskReleased");
  } finally {
    // A test that failed before its signal leaves no worker behind.
    if (child !== null) await stop(child, "SIGKILL");
    await t.stop();
  }
});

it("leaves the signal to a program that handles it with process.once: its own cleanup runs to the end", async () => {
  const t = await startTestServer();
  let child: Child | null = null;
  try {
    // examples/embed.ts closes the worker, then its server: the SDK's own re-sent SIGTERM killed
    // it in the middle (exit 143, the server's close never finished).
    const started = await spawnChild("signal-worker.ts", { ORBIT_TEST_SERVER: t.server.url, ORBIT_TEST_ONCE: "1" });
    child = started;
    let out = "";
    started.proc.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => started.proc.once("exit", (code) => resolve(code)));
    started.proc.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(out).toContain("CLEANED");
  } finally {
    if (child !== null) await stop(child, "SIGKILL");
    await t.stop();
  }
});
