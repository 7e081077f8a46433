/**
 * `orbit doctor`'s fix when the server's own checks (GET /v1/doctor) fail: a server whose database
 * is away (503) is told to wait for it, not to be upgraded — which fits only a server without the
 * route (404). Against a fake server (test/cli/fake-server.ts).
 */
import { expect, it, vi } from "vitest";
import { FakeServer } from "./fake-server.js";
import { runCli } from "./run-cli.js";

function serverWhoseDoctor(status: number, body: object): FakeServer {
  return new FakeServer((r) => {
    if (r.path === "/healthz") return { status: 200, body: { status: "ok" } };
    if (r.path === "/readyz")
      return { status: 503, body: { status: "not_ready", role: "single", message: "the database is unavailable" } };
    if (r.path === "/v1/me") return { status: 200, body: { name: null, kind: "client", allow: [] } };
    if (r.path === "/v1/version") return { status: 200, body: { version: "0.1.0" } };
    if (r.path === "/v1/doctor") return { status, body };
    return undefined;
  });
}

it("tells a server whose database is away to wait for it, and one without the route to upgrade", async () => {
  const away = await serverWhoseDoctor(503, {
    code: "UNAVAILABLE",
    message: "the database is unavailable (ECONNREFUSED); retry shortly",
  }).run(["doctor"]);
  expect(away.stdout).toContain("GET /v1/doctor: the database is unavailable (ECONNREFUSED); retry shortly");
  expect(away.stdout).toContain("the server cannot reach its database: GET /readyz says why");
  expect(away.stdout).not.toContain("upgrade the server");
  const old = await serverWhoseDoctor(404, { code: "NOT_FOUND", message: "no route GET /v1/doctor" }).run(["doctor"]);
  expect(old.stdout).toContain("upgrade the server to this CLI's release");
});

it("a server that answers but whose own checks get no answer in time keeps the checks it passed", async () => {
  // The database held by a lock: GET /v1/doctor waits past the CLI's timeout (the server's own
  // database wait is as long), while the server answered the checks before it.
  const server = serverWhoseDoctor(200, {});
  const answering = server.fetch;
  const fetchWithStuckDoctor = (async (input: string | URL | Request, init?: RequestInit) => {
    if (new URL(String(input)).pathname === "/v1/doctor") {
      throw new DOMException("The operation was aborted due to timeout", "TimeoutError");
    }
    return answering(input, init);
  }) as typeof fetch;
  const r = await runCli(["doctor"], { fetch: fetchWithStuckDoctor, env: { ORBIT_SERVER: "http://orbit.test:7233" } });
  expect(r.stdout).toMatch(/token/);
  expect(r.stdout).toMatch(
    /GET \/v1\/doctor: .*the server answered the checks above, so its own checks are waiting on the database/,
  );
  expect(r.stdout).toContain("another session may hold a lock on Orbit's tables");
  expect(r.stderr).not.toContain("cannot reach the Orbit server");
  expect(r.code).not.toBe(0);
});

it("a server that took the request and did not answer in time is said to be busy, not asked whether it runs", async () => {
  const stuck = (async () => {
    throw new DOMException("The operation was aborted due to timeout", "TimeoutError");
  }) as typeof fetch;
  const r = await runCli(["schedule", "get", "nightly"], {
    fetch: stuck,
    env: { ORBIT_SERVER: "http://orbit.test:7233" },
  });
  expect(r.stderr).toContain(
    "the Orbit server at http://orbit.test:7233 did not answer in time (busy, or waiting for its database: its log and /readyz say which)",
  );
  expect(r.stderr).not.toContain("is `orbit server` running?");
});

it("says once on stderr that it still waits when the server's answer takes longer than 5 s", async () => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  try {
    let answer: (r: Response) => void = () => undefined;
    const slow = (() =>
      new Promise<Response>((resolve) => {
        answer = resolve;
      })) as typeof fetch;
    const running = runCli(["schedule", "get", "nightly"], {
      fetch: slow,
      env: { ORBIT_SERVER: "http://orbit.test:7233" },
    });
    await vi.advanceTimersByTimeAsync(4_999);
    await vi.advanceTimersByTimeAsync(10_000);
    answer(
      new Response(JSON.stringify({ code: "NOT_FOUND", message: "schedule nightly does not exist" }), { status: 404 }),
    );
    const r = await running;
    expect(r.stderr).toBe(
      "orbit: still waiting for the server's answer after 5 s (busy, or waiting for its database); it gives up at 30 s\norbit: schedule nightly does not exist\n",
    );
  } finally {
    vi.useRealTimers();
  }
});

it("says the bound of the request it waits for: a backfill's and an apply's 10 minutes, not 30 s", async () => {
  // "it gives up at 30 s" was printed of a backfill that answered after 82 s, and an apply of 10,000
  // schedules on a busy PostgreSQL gave up at 30 s behind a lock (testers).
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  try {
    const bounds: number[] = [];
    let key: string | null = null;
    let answer: (r: Response) => void = () => undefined;
    const slow = ((_url: unknown, init: RequestInit & { orbitTimeoutMs?: number }) => {
      bounds.push(init.orbitTimeoutMs ?? -1);
      key = new Headers(init.headers).get("idempotency-key");
      return new Promise<Response>((resolve) => {
        answer = resolve;
      });
    }) as unknown as typeof fetch;
    const running = runCli(
      ["schedule", "backfill", "nightly", "--start-at", "2026-11-01T00:00:00Z", "--end-at", "2026-11-02T00:00:00Z"],
      { fetch: slow, env: { ORBIT_SERVER: "http://orbit.test:7233" } },
    );
    await vi.advanceTimersByTimeAsync(5_000);
    answer(
      new Response(JSON.stringify({ code: "NOT_FOUND", message: "schedule nightly does not exist" }), { status: 404 }),
    );
    const r = await running;
    expect(r.stderr).toBe(
      // A backfill is a write: the line names its key (write-interrupt.test.ts).
      `orbit: still waiting for the server's answer after 5 s (busy, or waiting for its database); it gives up at 10 min; if stopped now, the change may still be made: to retry it safely run the same command again with --idempotency-key ${key}\norbit: schedule nightly does not exist\n`,
    );
    expect(bounds).toEqual([600_000]);
  } finally {
    vi.useRealTimers();
  }
});

it("a body that stalls after the headers is waited on and given up as an answer that never came", async () => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  try {
    // An Orbit-labelled 200 whose body starts and never ends; the client's timeout ends its read.
    let body: ReadableStreamDefaultController<Uint8Array> | undefined;
    const stalled = (async () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('{"schedules":['));
            body = controller;
          },
        }),
        { status: 200, headers: { "content-type": "application/json", "orbit-version": "0.1.0" } },
      )) as typeof fetch;
    const running = runCli(["schedule", "list"], { fetch: stalled, env: { ORBIT_SERVER: "http://orbit.test:7233" } });
    await vi.advanceTimersByTimeAsync(5_000);
    body?.error(new DOMException("The operation was aborted due to timeout", "TimeoutError"));
    const r = await running;
    expect([r.code, r.stderr]).toEqual([
      1,
      "orbit: still waiting for the server's answer after 5 s (busy, or waiting for its database); it gives up at 30 s\n" +
        "orbit: the Orbit server at http://orbit.test:7233 did not answer in time (busy, or waiting for its database: its log and /readyz say which)\n",
    ]);
  } finally {
    vi.useRealTimers();
  }
});

it("a server whose /healthz answers 503 in Orbit's form is said to have answered, with what it said", async () => {
  // While it shuts down: "start `orbit server`" and "not run: the server does not answer" were
  // said of a server that had answered (a tester).
  const stopping = new FakeServer((r) =>
    r.path === "/healthz"
      ? {
          status: 503,
          body: {
            code: "UNAVAILABLE",
            message: "the server is shutting down; retry shortly (on another server, or on this one once it is back)",
          },
        }
      : undefined,
  );
  const r = await stopping.run(["doctor"]);
  expect(r.code).toBe(1);
  expect(r.stdout).toContain(
    "fail  server        http://orbit.test:7233 answered /healthz with 503: the server is shutting down; retry shortly",
  );
  expect(r.stdout).toContain("fix: read the server's log: it may be stopping (a deploy, a restart) or starting");
  expect(r.stdout).toContain("not run: the server answered /healthz with 503, not ok");
  expect(r.stdout).not.toContain("start `orbit server`");
  expect(r.stdout).not.toContain("does not answer");
  // Nothing answering is still told to start one.
  const away = (async () => {
    throw new TypeError("fetch failed", { cause: Object.assign(new Error("refused"), { code: "ECONNREFUSED" }) });
  }) as typeof fetch;
  const down = await runCli(["doctor"], { fetch: away, env: { ORBIT_SERVER: "http://orbit.test:7233" } });
  expect(down.stdout).toContain("start `orbit server`");
  expect(down.stdout).toContain("not run: the server does not answer");
});

it("a failed workers check beside a failed database says the workers may be refused, not to start one", async () => {
  // A full disk under the server: the worker runs, its polls are answered 503, and the check said
  // "start a worker" (a tester).
  const workers = {
    name: "workers",
    status: "fail",
    message: "no live worker (seen in the last 60 s) polls: OrderProcessing (1 schedule)",
    hint: "start a worker with these workflows (new Worker({ server, workflows: [...] }).run()) pointed at this server; `orbit workers` lists the ones seen",
  };
  const full = serverWhoseDoctor(200, {
    server_time: "2026-11-15T18:51:00.347Z",
    checks: [
      {
        name: "database",
        status: "fail",
        message: "a write to the sqlite database failed: database or disk is full",
        hint: "check that the data directory and orbit.db are writable by this server's user and the disk is not full",
      },
      workers,
    ],
  });
  const r = await full.run(["doctor"]);
  expect(r.stdout).toContain(
    "no live worker (seen in the last 60 s) polls: OrderProcessing (1 schedule); the server's database check failed (above), so workers that run may be unable to reach it",
  );
  expect(r.stdout).toMatch(
    /fix: fix what the checks above name first, then run orbit doctor again; if this still fails: start a worker/,
  );
  // Only not ready: said with the server's reason.
  const notReady = serverWhoseDoctor(200, { server_time: "2026-11-15T18:51:00.347Z", checks: [workers] });
  expect((await notReady.run(["doctor"])).stdout).toContain(
    "; the server is not ready (the database is unavailable), so workers that run may be unable to reach it",
  );
  // A ready server with a healthy database keeps the server's words.
  const healthy = new FakeServer((q) => {
    if (q.path === "/healthz") return { status: 200, body: { status: "ok" } };
    if (q.path === "/readyz") return { status: 200, body: { status: "ready", role: "single" } };
    if (q.path === "/v1/me") return { status: 200, body: { name: null, kind: "client", allow: [] } };
    if (q.path === "/v1/doctor")
      return { status: 200, body: { server_time: "2026-11-15T18:51:00.347Z", checks: [workers] } };
    return undefined;
  });
  const said = (await healthy.run(["doctor"])).stdout;
  expect(said).toContain(`${workers.message}\n`);
  expect(said).toContain(`fix: ${workers.hint}\n`);
});
