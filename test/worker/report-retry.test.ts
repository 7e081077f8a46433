/**
 * A worker's reports ride out a server whose database is restarting (docs/workflows.md § Protocol):
 * a 503 UNAVAILABLE is retried like an unreachable server, backing off from 0.5 s to 2 s, until it
 * lands or the worker gives up on closing; past the lease too, since the server keeps the lease
 * through its own outage (test/worker/lease-grace.test.ts), so the run is not repeated. A bounded
 * retry gives up at its bound. Other refusals are not retried. The server here is a stub that answers the worker protocol's complete with what the
 * test scripts; the same behaviour under a real PostgreSQL restart is in
 * test/faults/pg-restart.test.ts.
 */
import { createServer, type Server } from "node:http";
import { afterEach, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import type { Clock } from "../../src/domain/clock.js";
import { OrbitError } from "../../src/domain/errors.js";
import { ProtocolClient, UNTIL_GIVEN_UP } from "../../src/worker/protocol-client.js";

let server: Server | null = null;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
  server = null;
});

/** A stub whose answers to POST /v1/worker/complete are taken from `answers` in order. */
async function stub(answers: { status: number; body: unknown }[]): Promise<{ url: string; calls: () => number }> {
  let calls = 0;
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const a = answers[Math.min(calls++, answers.length - 1)] as { status: number; body: unknown };
      res.writeHead(a.status, { "content-type": "application/json" }).end(JSON.stringify(a.body));
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return { url: `http://127.0.0.1:${port}`, calls: () => calls };
}

/** Time moves only by the client's own retry sleeps, so "until the lease is over" is exact. */
function retryClock(): Clock {
  const clock = new ManualClock(0);
  return { now: () => clock.now(), sleep: async (ms) => clock.advance(ms) };
}

const UNAVAILABLE = {
  status: 503,
  body: { code: "UNAVAILABLE", message: "the database is unavailable (connect ECONNREFUSED); retry shortly" },
};
const COMPLETED = { status: 200, body: { tasks: { t1: { status: "COMPLETED" } } } };

function client(url: string, giveUp?: AbortSignal, clock: Clock = retryClock()): ProtocolClient {
  return new ProtocolClient({
    server: url,
    workerId: "w1",
    clock,
    signal: new AbortController().signal,
    ...(giveUp ? { giveUp } : {}),
  });
}

it("retries a completion answered 503 UNAVAILABLE until it is recorded, past the lease, backing off to 2 s", async () => {
  const s = await stub([...Array.from({ length: 20 }, () => UNAVAILABLE), COMPLETED]);
  const clock = retryClock();
  await expect(
    client(s.url, undefined, clock).complete({ task_id: "t1", attempt: 1 }, { ok: true }, UNTIL_GIVEN_UP),
  ).resolves.toBeNull();
  expect(s.calls()).toBe(21);
  // 0.5 + 1 s, then 2 s for each of the other 18 tries: longer than a 30 s lease. (The longest wait
  // was 5 s: a run finished in a database outage stayed RUNNING up to 5 s after it.)
  expect(clock.now()).toBe(500 + 1000 + 18 * 2000);
});

it("retries a completion answered 408 (the server, blocked by a locked SQLite file, did not read it in time)", async () => {
  const notReceived = {
    status: 408,
    body: {
      code: "INVALID_ARGUMENT",
      message: "the request was not received in time; send its headers and body without pausing",
    },
  };
  const s = await stub([notReceived, notReceived, COMPLETED]);
  await expect(client(s.url).complete({ task_id: "t1", attempt: 1 }, { ok: true }, UNTIL_GIVEN_UP)).resolves.toBeNull();
  expect(s.calls()).toBe(3);
});

it("stops retrying once the worker gives up (Worker.close past its closeTimeoutMs)", async () => {
  const s = await stub([UNAVAILABLE]);
  const giveUp = new AbortController();
  const clock = new ManualClock(0);
  const slow: Clock = {
    now: () => clock.now(),
    sleep: async (ms) => {
      clock.advance(ms);
      if (clock.now() > 10_000) giveUp.abort();
    },
  };
  const err = await client(s.url, giveUp.signal, slow)
    .complete({ task_id: "t1", attempt: 1 }, { ok: true }, UNTIL_GIVEN_UP)
    .catch((e: unknown) => e);
  expect(err).toMatchObject({ code: "UNAVAILABLE" });
  // At 0, 0.5, 1.5, 3.5, 5.5, 7.5 and 9.5 s of the client's clock; given up in the wait after the
  // last, it tries no more (it tried once more, at 11.5 s).
  expect(s.calls()).toBe(7);
});

it("gives up with UNAVAILABLE at a bounded retry's end", async () => {
  const s = await stub([UNAVAILABLE]);
  const err = await client(s.url)
    .complete({ task_id: "t1", attempt: 1 }, { ok: true }, 2_000)
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(OrbitError);
  expect((err as OrbitError).code).toBe("UNAVAILABLE");
  expect(s.calls()).toBe(4); // at 0, 500, 1500 and 3500 ms of the client's clock
});

it("does not retry another refusal", async () => {
  const s = await stub([{ status: 500, body: { code: "INTERNAL", message: "boom" } }, COMPLETED]);
  await expect(client(s.url).complete({ task_id: "t1", attempt: 1 }, { ok: true }, 30_000)).rejects.toMatchObject({
    code: "INTERNAL",
  });
  expect(s.calls()).toBe(1);
});
