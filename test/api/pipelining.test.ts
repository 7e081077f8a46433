/**
 * Pipelined requests, bounded (src/api/pipelining.ts, docs/api.md § Limits): a connection whose
 * client sends request after request without reading the answers is closed past 32 unanswered
 * (200 of them on 20 connections held 1.1 GB), and after an answer that says `connection: close`
 * the requests that follow on the connection are not carried out (RFC 9112 § 9.6).
 */
import { connect } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { MAX_UNANSWERED } from "../../src/api/pipelining.js";
import { ORDER_INPUT, startTestServer, type TestServer } from "./helpers.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  await t.registerOrders();
});
afterAll(() => t.stop());

/** Writes `text` on a fresh connection; resolves with what came back once the server closes it. */
function sendAll(text: string, read: boolean): Promise<string> {
  const url = new URL(t.server.url);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    let answer = "";
    if (read) socket.on("data", (c: Buffer) => (answer += c.toString()));
    socket.on("error", () => {});
    socket.on("close", () => resolve(answer));
    socket.write(text);
  });
}

it("closes a connection with more unanswered requests than the bound, whose client never reads", async () => {
  const host = new URL(t.server.url).host;
  const one = `GET /v1/openapi.json HTTP/1.1\r\nHost: ${host}\r\n\r\n`;
  // The client never reads and never closes: only the server's bound ends the connection.
  await sendAll(one.repeat(MAX_UNANSWERED * 4), false);
  // Within the bound, pipelined requests are answered in order.
  const answered = await sendAll(
    `${one.repeat(3)}GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
    true,
  );
  expect(answered.match(/HTTP\/1\.1 200 OK\r\n/g)).toHaveLength(4);
});

it("does not carry out a request pipelined after an answer that closes the connection", async () => {
  const host = new URL(t.server.url).host;
  const body = JSON.stringify({ execution_id: "after-close", workflow: "OrderProcessing", input: ORDER_INPUT });
  const start = `POST /v1/executions HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const answer = await sendAll(`GET /v1/me HTTP/1.1\r\nHost: ${host}\r\nExpect: junk\r\n\r\n${start}`, true);
  expect(answer).toMatch(/^HTTP\/1\.1 417 /);
  expect(answer.match(/HTTP\/1\.1 \d{3} /g)).toHaveLength(1);
  expect((await t.call("GET", "/v1/executions/after-close")).status).toBe(404);
});

it("answers the requests before a malformed one or one that closes the connection, then closes", async () => {
  // Node's parser met the bad bytes while the write before them was being carried out, and the 400
  // was written to the socket at once, ending it: the write was done but answered "not valid
  // HTTP", so a client that retried it started a second execution (a tester).
  const host = new URL(t.server.url).host;
  const tails = {
    garbage: "GARBAGE\r\n\r\n",
    "two content-lengths": `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n`,
    "data after connection: close": `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\nGET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
  };
  const seen: Record<string, string[]> = {};
  for (const [name, tail] of Object.entries(tails)) {
    const id = `pipelined-${name.replace(/\W+/g, "-")}`;
    const body = JSON.stringify({ execution_id: id, workflow: "OrderProcessing", input: ORDER_INPUT });
    const start = `POST /v1/executions HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const answer = await sendAll(start + tail, true);
    seen[name] = answer.match(/HTTP\/1\.1 \d{3}/g) ?? [];
    expect((await t.call("GET", `/v1/executions/${id}`)).status).toBe(200);
  }
  expect(seen).toEqual({
    garbage: ["HTTP/1.1 201", "HTTP/1.1 400"],
    "two content-lengths": ["HTTP/1.1 201", "HTTP/1.1 400"],
    "data after connection: close": ["HTTP/1.1 201", "HTTP/1.1 200"],
  });
});
