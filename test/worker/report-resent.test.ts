/**
 * A report whose first send got no answer (the connection dropped after the server had it) and
 * whose resend is refused 409 most likely landed the first time: the worker says so at info, not
 * "lost the task's lease while reporting" (a tester's dropping proxy: 61 such warnings for fail
 * and continue-as-new reports that had all been recorded). A 409 with no lost answer before it is
 * still a lost lease. Against a real HTTP server that drops the first request's connection.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { LeaseLostError } from "../../src/worker/errors.js";
import { ProtocolClient } from "../../src/worker/protocol-client.js";

let server: Server | null = null;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = null;
});

/** A server answering every report 409; with `dropFirst`, the first request's connection is cut unanswered. */
async function refusing(dropFirst: boolean): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      requests++;
      if (dropFirst && requests === 1) {
        req.socket.destroy();
        return;
      }
      res.writeHead(409, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ code: "CONFLICT", message: "worker task t1 (execution e1) is not leased to worker w1" }),
      );
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, requests: () => requests };
}

async function failReport(url: string, clock: ManualClock): Promise<unknown> {
  const api = new ProtocolClient({ server: url, workerId: "w1", clock, signal: new AbortController().signal });
  const sent = api.fail({ task_id: "t1", attempt: 1 }, { message: "boom" }, true, 60_000).catch((e: unknown) => e);
  // The resend waits 500 ms on the worker's clock after the lost answer.
  while (clock.pendingSleeps === 0) {
    const settled = await Promise.race([sent.then(() => true), new Promise((r) => setTimeout(() => r(false), 5))]);
    if (settled) break;
  }
  clock.advance(500);
  const err = await sent;
  api.close();
  return err;
}

it("a resend refused after a lost answer is not called a lost lease; a plain refusal still is", async () => {
  const clock = new ManualClock(Date.parse("2026-12-06T12:00:00Z"));
  const dropped = await refusing(true);
  const resent = await failReport(dropped.url, clock);
  expect(resent).toBeInstanceOf(LeaseLostError);
  expect({ afterLostAnswer: (resent as LeaseLostError).afterLostAnswer, requests: dropped.requests() }).toEqual({
    afterLostAnswer: true,
    requests: 2,
  });
  await new Promise((resolve) => server!.close(resolve));
  const plain = await refusing(false);
  const refused = await failReport(plain.url, clock);
  expect({ afterLostAnswer: (refused as LeaseLostError).afterLostAnswer, requests: plain.requests() }).toEqual({
    afterLostAnswer: false,
    requests: 1,
  });
});
