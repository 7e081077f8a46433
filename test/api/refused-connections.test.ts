/**
 * Connections refused before fastify sees them let go of their file descriptor, and the server
 * takes no more connections than its share of the open files (src/api/connection-cap.ts). A
 * tester's clients that sent a byte and never closed kept the server's sockets open after their
 * 408 (ended, never destroyed), and 21,000 of them exhausted the process's open files: the firing
 * loop failed SQLITE_CANTOPEN and missed occurrences. The HTTP server here is Node's own with
 * Orbit's clientError handler and short bounds, so the refusal comes within a second.
 */
import { createServer, type Server } from "node:http";
import { connect, type Socket } from "node:net";
import { afterEach, expect, it } from "vitest";
import { capConnections, connectionCap, MIN_CONNECTIONS, openFileLimit } from "../../src/api/connection-cap.js";
import { clientErrorHandler } from "../../src/api/errors.js";

const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

async function listening(): Promise<{ server: Server; port: number }> {
  const server = createServer({ headersTimeout: 200, requestTimeout: 200, connectionsCheckingInterval: 50 }, () => {
    throw new Error("no request is expected to reach the handler");
  });
  server.on("clientError", clientErrorHandler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return { server, port: address.port };
}

const openConnections = (server: Server): Promise<number> =>
  new Promise((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n))));

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A client that sends `bytes`, reads whatever comes, and never closes its side. */
function holdingClient(port: number, bytes: string): { answer: () => string; ended: Promise<void> } {
  const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true });
  sockets.push(socket);
  let answer = "";
  socket.on("data", (chunk: Buffer) => {
    answer += chunk.toString();
  });
  socket.on("error", () => undefined);
  const ended = new Promise<void>((resolve) => socket.once("end", () => resolve()));
  socket.write(bytes);
  return { answer: () => answer, ended };
}

it("a connection answered 408 (headers never ended) is closed on the server though its client never closes", async () => {
  const { server, port } = await listening();
  const client = holdingClient(port, `GET /v1/schedules HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
  await client.ended;
  expect(client.answer()).toMatch(/^HTTP\/1\.1 408 /);
  await until(async () => (await openConnections(server)) === 0, "the server to let go of the refused connection");
});

it("a connection answered 400 (not HTTP) is closed on the server though its client never closes", async () => {
  const { server, port } = await listening();
  const client = holdingClient(port, "NOT HTTP AT ALL\r\n\r\n");
  await client.ended;
  expect(client.answer()).toMatch(/^HTTP\/1\.1 400 /);
  expect(client.answer()).toContain('"code":"INVALID_ARGUMENT"');
  await until(async () => (await openConnections(server)) === 0, "the server to let go of the refused connection");
});

it("takes at most three quarters of the open-file limit in connections, and refuses the rest at once", async () => {
  expect(
    openFileLimit(
      "Limit Soft Limit Hard Limit Units\nMax open files            20000                20000                files\n",
    ),
  ).toBe(20000);
  expect(openFileLimit("Max open files            unlimited            unlimited            files\n")).toBeNull();
  expect(connectionCap(20_000)).toBe(15_000);
  expect(connectionCap(null)).toBeNull();
  expect(connectionCap(10)).toBe(MIN_CONNECTIONS);
  // A server allowed 90 open files takes 67 connections: the 68th is closed as it comes, and said.
  const { server, port } = await listening();
  const said: string[] = [];
  expect(capConnections(server, { warn: (_o, msg) => said.push(msg) }, 90)).toBe(67);
  const held: Socket[] = [];
  for (let i = 0; i < 67; i++) {
    const s = connect({ port, host: "127.0.0.1" });
    s.on("error", () => undefined);
    sockets.push(s);
    held.push(s);
  }
  await until(async () => (await openConnections(server)) === 67, "67 connections");
  const extra = connect({ port, host: "127.0.0.1" });
  extra.on("error", () => undefined);
  sockets.push(extra);
  await new Promise<void>((resolve) => extra.once("close", () => resolve()));
  expect(await openConnections(server)).toBe(67);
  expect(said).toEqual([
    "new connections refused: 67 are open, the most this server takes (75 % of its 90 open files); a client opens connections without closing them",
  ]);
});
