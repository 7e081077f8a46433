/**
 * A step that blocks the worker's event loop keeps every heartbeat from going out: the worker says
 * so (src/worker/worker.ts watchBlocking), where it said only that heartbeats could not reach the
 * server (docs/workflows.md § Leases). Run with a short interval and threshold.
 */
import { expect, it } from "vitest";
import { watchBlocking } from "../../src/worker/worker.js";

it("says the event loop was blocked, with how long, and nothing while it is not", async () => {
  const lines: Array<[string, Record<string, unknown> | undefined]> = [];
  const log = {
    debug: () => undefined,
    info: () => undefined,
    warn: (msg: string, fields?: Record<string, unknown>) => void lines.push([msg, fields]),
    error: () => undefined,
  };
  const stop = watchBlocking(log, 10, 150);
  try {
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(lines).toEqual([]);
    const until = performance.now() + 300;
    while (performance.now() < until); // a step that does not yield
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(lines).toHaveLength(1);
    expect(lines[0]?.[0]).toMatch(
      /^the worker's event loop was blocked: no heartbeat went out meanwhile; a step must yield/,
    );
    expect(Number(lines[0]?.[1]?.blocked_s)).toBeGreaterThanOrEqual(0.2);
  } finally {
    stop();
  }
});

it("tells a loop that did not run while using little CPU (a paused process, a synchronous wait) from a busy one", async () => {
  const lines: string[] = [];
  const log = {
    info: () => undefined,
    warn: (msg: string) => void lines.push(msg),
    error: () => undefined,
  };
  const stop = watchBlocking(log, 10, 150);
  try {
    // Blocks the loop without spending CPU, as a SIGSTOP does (a tester's 20 s stop was called a
    // step that does not yield).
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 400);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^the worker's event loop did not run, using little CPU: the process was paused \(SIGSTOP, a suspended machine\) or a step waited synchronously/,
    );
  } finally {
    stop();
  }
});
