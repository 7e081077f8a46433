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
