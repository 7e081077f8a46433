/**
 * `orbit doctor` against a server that runs but does not answer ok: stopped by SIGSTOP (it takes the
 * connection, answers nothing), or answering 500 with a proxy's text. Both were told "start `orbit
 * server`" and "not run: the server does not answer" (a tester); a 503 in Orbit's form already said
 * to read its log (doctor-hints.test.ts). And an answer of another shape is said so, not thrown.
 */
import { expect, it } from "vitest";
import { FakeServer } from "./fake-server.js";
import { runCli } from "./run-cli.js";

const env = { ORBIT_SERVER: "http://orbit.test:7233" };

it("a server that took the connection and did not answer in time is said to be stuck, not told to start", async () => {
  const stopped = (async () => {
    throw new DOMException("The operation was aborted due to timeout", "TimeoutError");
  }) as typeof fetch;
  const r = await runCli(["doctor"], { fetch: stopped, env });
  expect(r.code).toBe(1);
  expect(r.stdout).toContain("fail  server        the Orbit server at http://orbit.test:7233 did not answer in time");
  expect(r.stdout).toContain(
    "fix: it took the connection and sent no answer: the process runs but is stuck (stopped by SIGSTOP or a debugger, its event loop blocked) or waits for its database",
  );
  expect(r.stdout).toContain("not run: the server took the connection but did not answer in time");
  expect(r.stdout).not.toContain("start `orbit server`");
  expect(r.stdout).not.toContain("does not answer");
});

it("a /healthz answered 500 with text, not in Orbit's form, is said to have answered", async () => {
  const proxy = (async () =>
    new Response("Internal Server Error", { status: 500, statusText: "Internal Server Error" })) as typeof fetch;
  const r = await runCli(["doctor"], { fetch: proxy, env });
  expect(r.code).toBe(1);
  expect(r.stdout).toContain(
    "fail  server        http://orbit.test:7233 answered /healthz with an error: the server answered 500 Internal Server Error: Internal Server Error",
  );
  expect(r.stdout).toContain(
    "fix: if it is `orbit server`, read its log (it may be failing or starting); if it is a proxy or another program, point the CLI at Orbit's address with --server URL or ORBIT_SERVER",
  );
  expect(r.stdout).toContain("not run: the server answered /healthz with an error, not ok");
  expect(r.stdout).not.toContain("start `orbit server`");
});

it("answers of another shape are a failed check naming the field, not a stack or `role undefined`", async () => {
  for (const [path, body, line] of [
    [
      "/healthz",
      null,
      "fail  server        the server's answer is not what orbit 0.1.0 expects: the answer to GET /healthz is null, not a JSON object",
    ],
    [
      "/readyz",
      {},
      "fail  server        the server's answer is not what orbit 0.1.0 expects: the answer to GET /readyz has no role (text)",
    ],
    [
      "/v1/me",
      [],
      "fail  token         the server's answer is not what orbit 0.1.0 expects: the answer to GET /v1/me is a list, not a JSON object",
    ],
    [
      "/v1/doctor",
      { server_time: "x", checks: [7] },
      "the server's answer is not what orbit 0.1.0 expects: a check of GET /v1/doctor is not a JSON object",
    ],
  ] as const) {
    const server = new FakeServer((r) => {
      if (r.path === path) return { status: 200, body };
      if (r.path === "/healthz") return { status: 200, body: { status: "ok" } };
      if (r.path === "/readyz") return { status: 200, body: { status: "ready", role: "single" } };
      if (r.path === "/v1/me") return { status: 200, body: { name: null, kind: "client" } };
      return undefined;
    });
    const r = await server.run(["doctor"]);
    expect(r.code, path).toBe(1);
    expect(r.stdout, path).toContain(line);
    expect(r.stdout, path).toContain("fix: is --server (or ORBIT_SERVER) an Orbit server of this release?");
    expect(r.stderr, path).toBe("");
  }
});
