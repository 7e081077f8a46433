/**
 * A kept-alive connection that goes silent (a NAT or firewall that dropped it, a network black
 * hole) while new connections work: a worker's heartbeat on it waited the default 30 s, the
 * lease's length, so a live worker lost its lease and a finished step ran again; its poll waited
 * 90 s, and the worker took no work meanwhile (a tester's TCP proxy). A heartbeat now gives up in
 * the time it is given and a poll at its hold plus a margin, and a request without an answer closes
 * the idle connections beside it, so the next request opens a fresh one (src/worker/protocol-client.ts).
 */
import { createServer, type Server } from "node:http";
import type { Socket } from "node:net";
import { afterEach, expect, it } from "vitest";
import { ServerUnreachableError } from "../../src/client/http.js";
import { SystemClock } from "../../src/clock/system-clock.js";
import { ProtocolClient } from "../../src/worker/protocol-client.js";

let server: Server | null = null;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = null;
});

/**
 * A worker-protocol stub whose connections can be made silent: a request arriving on a silent one
 * is never answered (the connection stays open), while new connections are answered.
 */
async function stub(): Promise<{ url: string; silence: () => void; connections: () => number }> {
  const silent = new Set<Socket>();
  const all = new Set<Socket>();
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (silent.has(req.socket)) return;
      const body =
        req.url === "/v1/worker/heartbeat"
          ? { tasks: { t1: { lease: "held", cancel_requested: null } } }
          : { tasks: [], heartbeat_ms: 5000 };
      res.writeHead(200, { "content-type": "application/json", "orbit-version": "0.1.0" }).end(JSON.stringify(body));
    });
  });
  server.on("connection", (socket: Socket) => void all.add(socket));
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    silence: () => {
      for (const s of all) silent.add(s);
    },
    connections: () => all.size,
  };
}

function client(url: string): ProtocolClient {
  return new ProtocolClient({
    server: url,
    workerId: "w1",
    clock: new SystemClock(),
    signal: new AbortController().signal,
    pollAnswerMarginMs: 200,
  });
}

it("gives a heartbeat up in its time on a silent connection, and the next one renews on a fresh connection", async () => {
  const s = await stub();
  const c = client(s.url);
  try {
    await expect(c.heartbeat(["t1"], 200)).resolves.toEqual({
      tasks: { t1: { lease: "held", cancel_requested: null } },
    });
    s.silence();
    const started = performance.now();
    const lost = await c.heartbeat(["t1"], 200).catch((err: unknown) => err);
    expect(lost).toBeInstanceOf(ServerUnreachableError);
    expect((lost as ServerUnreachableError).reason).toBe("no answer in time");
    // Its own bound, not the 30 s default (the lease's length).
    expect(performance.now() - started).toBeLessThan(10_000);
    await expect(c.heartbeat(["t1"], 200)).resolves.toEqual({
      tasks: { t1: { lease: "held", cancel_requested: null } },
    });
    expect(s.connections()).toBe(2);
  } finally {
    c.close();
  }
});

it("gives a poll up at its hold plus the margin, and closes the idle connections beside it", async () => {
  const s = await stub();
  const c = client(s.url);
  try {
    // Two connections kept alive: a poll and a heartbeat (its own agent) in flight at once.
    await Promise.all([c.poll({ workflows: [], max_tasks: 1, wait_ms: 0 }), c.heartbeat(["t1"], 1000)]);
    await Promise.all([
      c.poll({ workflows: [], max_tasks: 1, wait_ms: 0 }),
      c.poll({ workflows: [], max_tasks: 1, wait_ms: 0 }),
    ]);
    const before = s.connections();
    s.silence();
    const lost = await c.poll({ workflows: [], max_tasks: 1, wait_ms: 0 }).catch((err: unknown) => err);
    expect(lost).toBeInstanceOf(ServerUnreachableError);
    // The other idle connection was closed with it: the next poll does not wait on it too.
    await expect(c.poll({ workflows: [], max_tasks: 1, wait_ms: 0 })).resolves.toMatchObject({ tasks: [] });
    expect(s.connections()).toBe(before + 1);
  } finally {
    c.close();
  }
});
