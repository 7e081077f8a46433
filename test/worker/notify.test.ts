/**
 * notify webhooks (docs/outcomes.md § Notifications), for real: a receiver on loopback gets signed
 * JSON calls for a failure and the pause-on-failure that follows; a call answered 500 is retried.
 */
import { createHmac } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, expect, it } from "vitest";
import { describeEachDialect } from "../helpers/db.js";
import { useWorkerCluster, waitFor } from "./harness.js";

const SECRET = "test-notify-secret";
process.env.ORBIT_NOTIFY_SECRET = SECRET; // read by the server child

describeEachDialect("notify webhooks", (dialect) => {
  const cluster = useWorkerCluster(dialect, { leaseMs: 5000 });
  let calls: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
  let url = "";
  let close = async () => {};
  beforeEach(async () => {
    calls = [];
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        calls.push({ headers: req.headers, body });
        // The first failure call fails: it must be retried.
        const failures = calls.filter((c) => c.headers["orbit-event"] === "failure").length;
        res.statusCode = req.headers["orbit-event"] === "failure" && failures === 1 ? 500 : 200;
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    close = () => new Promise((r) => server.close(() => r()));
  });
  afterEach(() => close());

  it("calls the receiver signed, retries a failed call, records the deliveries", async () => {
    const { client } = cluster;
    await cluster.startWorker("A");
    await client.createSchedule({
      schedule_id: "alerting",
      workflow: "Checkout",
      interval: "1h",
      pause_on_failure: 1,
      notify: url,
    });
    const { execution_id } = await client.triggerSchedule("alerting");
    await waitFor("three calls (one retried)", async () => calls.length >= 3);
    for (const call of calls) {
      const [t, v1] = String(call.headers["orbit-signature"]).split(",");
      const ts = t!.replace("t=", "");
      const expected = createHmac("sha256", SECRET).update(`${ts}.${call.body}`).digest("hex");
      expect(v1).toBe(`v1=${expected}`);
      expect(call.headers["content-type"]).toBe("application/json");
    }
    const bodies = calls.map((c) => JSON.parse(c.body) as Record<string, unknown>);
    const failure = bodies.filter((b) => b.event === "failure");
    expect(failure).toHaveLength(2); // the 500, then the retry
    expect(failure[0]).toEqual(failure[1]);
    expect(failure[0]).toMatchObject({
      event: "failure",
      schedule_id: "alerting",
      workflow: "Checkout",
      execution_id,
      status: "FAILED",
      consecutive_failures: 1,
      error: { message: "card declined" },
    });
    const paused = bodies.find((b) => b.event === "paused");
    expect(String(paused?.pause_note)).toContain(`execution ${execution_id} failed: card declined`);

    const res = await fetch(`${cluster.url}/v1/schedules/alerting/notifications`);
    const { notifications } = (await res.json()) as { notifications: Array<Record<string, unknown>> };
    const byEvent = Object.fromEntries(notifications.map((n) => [n.event, n]));
    expect(byEvent.failure).toMatchObject({ state: "delivered", attempts: 2, last_error: null, url });
    expect(byEvent.paused).toMatchObject({ state: "delivered", attempts: 1 });
  }, 240_000);
});
