/**
 * A step that blocks the worker's event loop keeps every heartbeat from going out: the worker says
 * so (src/worker/worker.ts watchBlocking), where it said only that heartbeats could not reach the
 * server (docs/workflows.md § Leases). Run with a short interval and threshold.
 */
import { expect, it } from "vitest";
import { NO_ANSWER, ServerUnreachableError } from "../../src/client/unreachable.js";
import { pausedMeanwhile } from "../../src/worker/blocking.js";
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

it("says of a request left unanswered across a block that this process did not run meanwhile, not only the server", async () => {
  const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
  const stop = watchBlocking(log, 10, 150);
  try {
    const sentAt = performance.now();
    // A SIGSTOP of the worker mid-poll: the poll's timeout fires on this process's clock once it
    // runs again, and the line blamed a server that was healthy throughout (a tester).
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 400);
    await new Promise((resolve) => setTimeout(resolve, 30));
    const unanswered = () => new ServerUnreachableError("http://127.0.0.1:7233", NO_ANSWER);
    const said = pausedMeanwhile(unanswered(), sentAt) as Error;
    expect(said.message).toMatch(
      /^the Orbit server at http:\/\/127\.0\.0\.1:7233 did not answer in time \(busy, or waiting for its database: its log and \/readyz say which\); but this worker's own process did not run for 0\.\d s meanwhile \(paused, or a step blocked its event loop\), so the server may not be at fault$/,
    );
    // A request sent after the block, or a refused connection, is said as before.
    expect((pausedMeanwhile(unanswered(), performance.now()) as Error).message).toBe(unanswered().message);
    const refused = new ServerUnreachableError("http://127.0.0.1:7233", "ECONNREFUSED");
    expect((pausedMeanwhile(refused, sentAt) as Error).message).toBe(refused.message);
  } finally {
    stop();
  }
});
