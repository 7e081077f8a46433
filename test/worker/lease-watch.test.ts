/**
 * The worker's watch on leases it cannot renew (src/worker/lease-watch.ts, docs/workflows.md §
 * Steps run at least once), on a manual clock: a run's signal aborts once no heartbeat of its task
 * was acknowledged for longer than its lease, the heartbeat asked for UNHEARD_GRACE_MS before (or,
 * when the clock jumped past the end, then) gone unanswered; one acknowledged meanwhile keeps it. And which heartbeat failures count as
 * heard: the server's own 503 (it keeps the leases through its database's outage), not a proxy's.
 */
import { createServer, type Server } from "node:http";
import { afterEach, expect, it } from "vitest";
import { request } from "../../src/client/http.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { answeredAway, UNHEARD_GRACE_MS, watchLeases } from "../../src/worker/lease-watch.js";
import { TaskControl } from "../../src/worker/task-control.js";
import { capturing, taskJson, turn } from "./hung-code.js";

const T0 = Date.parse("2026-12-07T12:00:00Z");

let stopWatch: AbortController | null = null;
let server: Server | null = null;
afterEach(async () => {
  stopWatch?.abort();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  stopWatch = server = null;
});

/** Two runs leased at T0 (lease 30 s), watched; `asked` counts the heartbeats asked for. */
function watched() {
  const clock = new ManualClock(T0);
  const { lines, logger } = capturing();
  const controls = ["t1", "t2"].map((id) => {
    const c = new TaskControl(taskJson({ task_id: id, execution_id: `e-${id}`, lease_ms: 30_000 }), () => false);
    c.heard(T0);
    return c;
  });
  const asked = { n: 0 };
  stopWatch = new AbortController();
  void watchLeases({
    clock,
    log: logger,
    running: () => controls,
    everyMs: () => 5000,
    heartbeatNow: () => void asked.n++,
    stop: stopWatch.signal,
  });
  /** Moves the clock to `ms` after T0 and lets the watch look. */
  const at = async (ms: number) => {
    clock.set(T0 + ms);
    for (let i = 0; i < 5; i++) await turn();
  };
  return { controls, lines, asked, at };
}

it("asks for a heartbeat before the lease's end and aborts the signals at it when none is acknowledged, saying so once", async () => {
  const { controls, lines, asked, at } = watched();
  const signals = controls.map((c) => c.signal);
  await at(30_000 - UNHEARD_GRACE_MS - 1);
  expect(asked.n).toBe(0);
  await at(30_000 - UNHEARD_GRACE_MS);
  expect(asked.n).toBe(1);
  await at(30_000);
  expect(signals.map((s) => s.aborted)).toEqual([false, false]);
  await at(30_001);
  expect(signals.map((s) => s.aborted)).toEqual([true, true]);
  expect((signals[0]!.reason as Error).name).toBe("LeaseLostError");
  expect((signals[0]!.reason as Error).message).toBe(
    "no heartbeat of task t1 was acknowledged by the server for 30 s, longer than its lease (30 s): the lease has most likely ended and the execution may run again elsewhere",
  );
  expect(controls.map((c) => [c.leaseUnheard, c.leaseLost])).toEqual([
    [true, false],
    [true, false],
  ]);
  await at(120_000);
  expect(asked.n).toBe(1);
  expect(lines).toEqual([
    [
      "warn",
      expect.stringMatching(/^no heartbeat was acknowledged by the server for longer than the lease: /),
      { tasks: 2, execution_ids: ["e-t1", "e-t2"], unheard_s: 30, lease_ms: 30_000 },
    ],
  ]);
});

it("keeps the signal of a run whose heartbeat is acknowledged in time", async () => {
  const { controls, lines, at } = watched();
  await at(28_000);
  for (const c of controls) c.heard(T0 + 28_500);
  await at(40_000);
  expect(controls.map((c) => c.signal.aborted)).toEqual([false, false]);
  expect(lines).toEqual([]);
});

it("gives a clock that moved past the lease at once the grace for the heartbeat asked for then", async () => {
  const { controls, lines, asked, at } = watched();
  // The clock jumps a minute (a paused process resumed): the heartbeat asked for then is answered.
  await at(60_000);
  expect(asked.n).toBe(1);
  expect(controls.map((c) => c.signal.aborted)).toEqual([false, false]);
  for (const c of controls) c.heard(T0 + 60_000);
  await at(60_000 + UNHEARD_GRACE_MS);
  expect(controls.map((c) => c.signal.aborted)).toEqual([false, false]);
  // It jumps again, and this time nothing answers within the grace.
  await at(120_000);
  await at(120_000 + UNHEARD_GRACE_MS - 1);
  expect(controls.map((c) => c.signal.aborted)).toEqual([false, false]);
  await at(120_000 + UNHEARD_GRACE_MS);
  expect(controls.map((c) => c.signal.aborted)).toEqual([true, true]);
  expect(lines).toHaveLength(1);
});

it("counts as heard a heartbeat the server itself answered 503, not a proxy's 503 or a 408", async () => {
  const answers: Record<string, [number, string]> = {
    "/orbit": [503, JSON.stringify({ code: "UNAVAILABLE", message: "the database is unavailable" })],
    "/proxy": [503, "no healthy upstream"],
    "/slow": [408, JSON.stringify({ code: "UNAVAILABLE", message: "the request was not received in time" })],
  };
  server = createServer((req, res) => {
    const [status, body] = answers[req.url ?? ""] ?? [404, ""];
    req.resume();
    req.on("end", () => res.writeHead(status, { "content-type": "application/json" }).end(body));
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const failure = (path: string) =>
    request({ baseUrl, token: null }, { method: "POST", path, body: {} }).catch((err: unknown) => err);
  expect(answeredAway(await failure("/orbit"))).toBe(true);
  expect(answeredAway(await failure("/proxy"))).toBe(false);
  expect(answeredAway(await failure("/slow"))).toBe(false);
});
