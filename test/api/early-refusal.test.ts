/**
 * A request refused before its body arrived (here a Host the server does not answer to) gets one
 * answer and the connection closes with it: it was kept alive, the unread body's request timed
 * out 30 s later, and a second answer (408) followed on the same connection.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

it("answers once and closes the connection when it refuses a request whose body has not arrived", async () => {
  const { port } = new URL(t.server.url);
  const socket = connect(Number(port), "127.0.0.1");
  socket.write(
    "POST /v1/schedules HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
  );
  let answer = "";
  socket.on("data", (chunk: Buffer) => {
    answer += chunk.toString();
  });
  // Closed by the server with its one answer (before, only the 408 30 s later closed it).
  await new Promise<void>((resolve) => socket.once("close", () => resolve()));
  expect(answer.match(/^HTTP\/1\.1 /gm)).toHaveLength(1);
  expect(answer).toMatch(/^HTTP\/1\.1 4\d\d /);
  expect(answer.toLowerCase()).toContain("connection: close");
}, 15_000);
