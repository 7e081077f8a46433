/**
 * A client that stalls its headers is cut with 408 at the headers bound (docs/security.md: headers
 * within 10 s). Node checks the bound on a sweep of the connections, every 30 s unless the server
 * is created with another interval: the cut came 24-39 s after the stall began.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { HEADERS_TIMEOUT_MS, TIMEOUT_SWEEP_MS } from "../../src/api/errors.js";
import { startTestServer, type TestServer } from "./helpers.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

it("answers 408 and closes a connection whose headers never end, within the bound and one sweep", async () => {
  const { port } = new URL(t.server.url);
  const socket = connect(Number(port), "127.0.0.1");
  const began = Date.now();
  socket.write(`GET /v1/schedules HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`); // never the blank line
  let answer = "";
  socket.on("data", (chunk: Buffer) => {
    answer += chunk.toString();
  });
  await new Promise<void>((resolve) => socket.once("close", () => resolve()));
  const took = Date.now() - began;
  expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  // Not a speed goal: the product's own promise (the bound plus one sweep, with room for a slow
  // machine), which the 30 s sweep broke by 14-29 s.
  expect(took).toBeLessThan(HEADERS_TIMEOUT_MS + TIMEOUT_SWEEP_MS + 5000);
}, 30_000);
