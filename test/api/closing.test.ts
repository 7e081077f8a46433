/**
 * A request that reaches a closing server is answered 503 with Orbit's `{code, message}` (src/api/
 * app.ts): fastify's own answer was `{"error":"Service Unavailable",…}`, and a worker polling
 * through a deploy logged only "Service Unavailable" (a tester). The request is pipelined behind
 * one whose body is still coming when the close begins, so it is parsed while the server closes.
 */
import { connect } from "node:net";
import { expect, it } from "vitest";
import { ORDER_INPUT, startTestServer } from "./helpers.js";

it.each([
  [
    "/v1/schedules",
    {
      code: "UNAVAILABLE",
      message: "the server is shutting down; retry shortly (on another server, or on this one once it is back)",
    },
  ],
  // Readiness in its own shape, with the role: it was the bare {code, message} (a tester).
  ["/readyz", { status: "not_ready", role: "single", message: "the server is shutting down" }],
])("answers a request for %s that comes while the server closes 503, saying why", async (path, said) => {
  const t = await startTestServer();
  await t.registerOrders();
  const url = new URL(t.server.url);
  const body = JSON.stringify({ execution_id: "during-close", workflow: "OrderProcessing", input: ORDER_INPUT });
  const socket = connect(Number(url.port), url.hostname);
  let answer = "";
  socket.on("data", (c: Buffer) => (answer += c.toString()));
  const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
  await new Promise<void>((resolve) => socket.on("connect", () => resolve()));
  // Headers and half the body: the request is in flight, so the close waits for it. Its `100
  // Continue` says the server has taken it (before that, the close could come first).
  socket.write(
    `POST /v1/executions HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
  );
  while (!answer.includes("100 Continue")) await new Promise((resolve) => setImmediate(resolve));
  const stopping = t.stop();
  // The close has begun once the server takes no new connection.
  for (;;) {
    const refused = await new Promise<boolean>((resolve) => {
      const probe = connect(Number(url.port), url.hostname);
      probe.on("connect", () => {
        probe.destroy();
        resolve(false);
      });
      probe.on("error", () => resolve(true));
    });
    if (refused) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  socket.write(`${body.slice(10)}GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`);
  await closed;
  await stopping;
  const statuses = answer.match(/HTTP\/1\.1 \d{3}/g);
  expect(statuses).toEqual(["HTTP/1.1 100", "HTTP/1.1 201", "HTTP/1.1 503"]);
  const last = answer.slice(answer.lastIndexOf("HTTP/1.1 503"));
  expect(JSON.parse(last.slice(last.indexOf("\r\n\r\n") + 4))).toEqual(said);
});
