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

/**
 * Writes `text` on a fresh connection; resolves with what came back once the server closes it. With
 * `readAfterMs`, reads nothing until then (a paused socket sees neither data nor the close).
 */
function sendAll(text: string, read: boolean | { readAfterMs: number }): Promise<string> {
  const url = new URL(t.server.url);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    let answer = "";
    const reading = () => socket.on("data", (c: Buffer) => (answer += c.toString()));
    if (read === true) reading();
    else if (read !== false) setTimeout(reading, read.readAfterMs);
    socket.on("error", () => {});
    socket.on("close", () => resolve(answer));
    socket.write(text);
  });
}

it("closes a connection with more unanswered requests than the bound, whose client does not read", async () => {
  const host = new URL(t.server.url).host;
  const one = `GET /v1/openapi.json HTTP/1.1\r\nHost: ${host}\r\n\r\n`;
  // The client reads nothing for a while and never closes: only the server's bound ends the
  // connection, having answered at most the bound's requests (it buffered every answer: 1.1 GB).
  const unread = await sendAll(one.repeat(MAX_UNANSWERED * 4), { readAfterMs: 300 });
  expect((unread.match(/HTTP\/1\.1 200 OK\r\n/g) ?? []).length).toBeLessThanOrEqual(MAX_UNANSWERED);
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
    // A malformed chunk inside the next request's body: that request is never answered, and the
    // refusal waited for its answer too (no answer, a reset 10 s later; a tester).
    "a malformed chunk": `POST /v1/workflows HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n`,
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
    // Every answer says it is Orbit's, Node's refusals of bytes it cannot parse included.
    expect(answer.match(/^orbit-version: /gim)?.length, name).toBe(seen[name]?.length);
    expect((await t.call("GET", `/v1/executions/${id}`)).status).toBe(200);
  }
  expect(seen).toEqual({
    garbage: ["HTTP/1.1 201", "HTTP/1.1 400"],
    "a malformed chunk": ["HTTP/1.1 201", "HTTP/1.1 400"],
    "two content-lengths": ["HTTP/1.1 201", "HTTP/1.1 400"],
    "data after connection: close": ["HTTP/1.1 201", "HTTP/1.1 200"],
  });
});

it("answers the requests within the bound and closes the connection at the first past it, which is not carried out", async () => {
  // Destroyed at once, the connection had carried out 32 writes and answered none: a client sending
  // again what went unanswered started 32 executions twice (a tester).
  const host = new URL(t.server.url).host;
  const starts = Array.from({ length: MAX_UNANSWERED + 1 }, (_, i) => {
    const body = JSON.stringify({ execution_id: `bound-${i}`, workflow: "OrderProcessing", input: ORDER_INPUT });
    return `POST /v1/executions HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  });
  const answer = await sendAll(starts.join(""), true);
  expect(answer.match(/HTTP\/1\.1 201 /g)).toHaveLength(MAX_UNANSWERED);
  expect(answer.match(/HTTP\/1\.1 \d{3} /g)).toHaveLength(MAX_UNANSWERED);
  expect((await t.call("GET", `/v1/executions/bound-${MAX_UNANSWERED - 1}`)).status).toBe(200);
  expect((await t.call("GET", `/v1/executions/bound-${MAX_UNANSWERED}`)).status).toBe(404);
});

it("answers 408 and closes a connection whose body stalls, pipelined behind others or not", async () => {
  // Refused only after the answers before it, the stalled request waited for its own answer: no
  // 408, and the connection held for good, even after its client closed (a tester).
  const slow = await startTestServer({ requestTimeoutMs: 1500 });
  try {
    await slow.registerOrders();
    const host = new URL(slow.server.url).host;
    const started = JSON.stringify({ execution_id: "before-stall", workflow: "OrderProcessing", input: ORDER_INPUT });
    const first = `POST /v1/executions HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(started)}\r\n\r\n${started}`;
    const stalled = `POST /v1/executions HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"work`;
    const url = new URL(slow.server.url);
    for (const text of [stalled, first + stalled]) {
      const answer = await new Promise<string>((resolve) => {
        const socket = connect(Number(url.port), url.hostname);
        let got = "";
        socket.on("data", (c: Buffer) => (got += c.toString()));
        socket.on("error", () => {});
        socket.on("close", () => resolve(got));
        socket.write(text); // and never the rest of the body: only the server's bound ends it
      });
      expect(answer.match(/HTTP\/1\.1 \d{3}/g)?.at(-1)).toBe("HTTP/1.1 408");
    }
    expect((await slow.call("GET", "/v1/executions/before-stall")).status).toBe(200);
  } finally {
    await slow.stop();
  }
});
