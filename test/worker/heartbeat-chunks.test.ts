/**
 * A worker may run more tasks than one heartbeat may name (concurrency above the server's 1,000
 * ids a request): its heartbeats and releases go in pieces the server takes, so no lease runs out
 * because one oversized heartbeat was refused (docs/workflows.md § Protocol). The stub refuses a
 * body of more than 1,000 ids as the server's schema does (src/api/worker-schemas.ts).
 */
import { createServer, type Server } from "node:http";
import { afterEach, expect, it } from "vitest";
import { SystemClock } from "../../src/clock/system-clock.js";
import { MAX_TASK_IDS } from "../../src/domain/worker-protocol.js";
import { ProtocolClient } from "../../src/worker/protocol-client.js";

let server: Server | null = null;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
  server = null;
});

async function stub(): Promise<{ url: string; sizes: Record<string, number[]> }> {
  const sizes: Record<string, number[]> = {};
  server = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => {
      text += chunk.toString();
    });
    req.on("end", () => {
      const ids = (JSON.parse(text) as { task_ids: string[] }).task_ids;
      const url = req.url ?? "";
      sizes[url] = [...(sizes[url] ?? []), ids.length];
      const answer =
        ids.length > MAX_TASK_IDS
          ? { status: 400, body: { code: "INVALID_ARGUMENT", message: "task_ids must hold at most 1000 items" } }
          : req.url === "/v1/worker/heartbeat"
            ? {
                status: 200,
                body: { tasks: Object.fromEntries(ids.map((id) => [id, { lease: "held", cancel_requested: null }])) },
              }
            : { status: 200, body: { released: ids } };
      res.writeHead(answer.status, { "content-type": "application/json" }).end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return { url: `http://127.0.0.1:${port}`, sizes };
}

it("heartbeats and releases 2,500 tasks in requests of at most 1,000 ids, every lease answered", async () => {
  const s = await stub();
  const client = new ProtocolClient({
    server: s.url,
    workerId: "w1",
    clock: new SystemClock(),
    signal: new AbortController().signal,
  });
  const ids = Array.from({ length: 2500 }, (_, i) => `task-${i}`);
  const answer = await client.heartbeat(ids);
  expect(Object.keys(answer.tasks)).toHaveLength(2500);
  expect(Object.values(answer.tasks).every((t) => t.lease === "held")).toBe(true);
  await client.release(ids);
  await client.release([]);
  // Sent side by side: in any order.
  const sorted = (sizes: number[] | undefined) => [...(sizes ?? [])].sort((a, b) => b - a);
  expect(sorted(s.sizes["/v1/worker/heartbeat"])).toEqual([1000, 1000, 500]);
  expect(sorted(s.sizes["/v1/worker/release"])).toEqual([1000, 1000, 500]);
  client.close();
});
