/**
 * notify webhooks (docs/outcomes.md § Notifications), for real: a receiver on loopback gets signed
 * JSON calls for a failure and the pause-on-failure that follows; a call answered 500 is retried;
 * a start that stays blocked is a dead letter, and that is a call too.
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
    const recorded = async () => {
      const res = await fetch(`${cluster.url}/v1/schedules/alerting/notifications`);
      const { notifications } = (await res.json()) as { notifications: Array<Record<string, unknown>> };
      return Object.fromEntries(notifications.map((n) => [n.event, n])) as Record<string, Record<string, unknown>>;
    };
    const { execution_id } = await client.triggerSchedule("alerting");
    // The failure call answered 500 is retried a second later on the server's clock: move it there.
    await waitFor("the failed call recorded for a retry", async () => {
      const failure = (await recorded()).failure;
      return failure?.state === "pending" && failure.attempts === 1;
    });
    await cluster.jumpServerClock(1_000);
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

    // The receiver answered before the server recorded the delivery: wait for the record.
    await waitFor("both deliveries recorded", async () =>
      Object.values(await recorded()).every((n) => n.state === "delivered"),
    );
    const byEvent = await recorded();
    expect(byEvent.failure).toMatchObject({ state: "delivered", attempts: 2, last_error: null, url });
    expect(byEvent.paused).toMatchObject({ state: "delivered", attempts: 1 });
    // Every call landed in the end: the schedule does not say its alerts fail (docs/outcomes.md § Notifications).
    expect((await client.getSchedule("alerting")).notify_failure).toBeUndefined();
  }, 240_000);

  it("calls the receiver for a dead letter (a start that keeps failing)", async () => {
    const { client } = cluster;
    await client.registerWorkflow({ name: "Strict", version: "1.0.0" });
    await client.createSchedule({
      schedule_id: "blocked",
      workflow: "Strict",
      interval: "1s",
      paused: true,
      notify: { url, events: ["dead_letter"] },
    });
    // "latest" is now a version whose schema the schedule's input fails: every start is refused,
    // retried 5 s later (on the server's clock, which the test moves there), and the occurrence left
    // behind is a dead letter.
    await client.registerWorkflow({
      name: "Strict",
      version: "2.0.0",
      input_schema: { type: "object", required: ["order_id"] },
    });
    await client.resumeSchedule("blocked");
    await waitFor("a refused start", async () => (await client.getSchedule("blocked")).last_error !== null);
    await cluster.jumpServerClock(5_000);
    const call = await waitFor("a dead_letter call", async () =>
      calls.find((c) => c.headers["orbit-event"] === "dead_letter"),
    );
    const body = JSON.parse(call.body) as Record<string, unknown>;
    expect(body).toMatchObject({ event: "dead_letter", schedule_id: "blocked", workflow: "Strict" });
    expect(String((body.error as { message: string }).message)).toContain("/order_id is required");
    const { occurrences } = (await (await fetch(`${cluster.url}/v1/schedules/blocked/occurrences`)).json()) as {
      occurrences: Array<Record<string, unknown>>;
    };
    const dead = occurrences.filter((o) => o.kind === "dead_letter").map((o) => o.occurrence);
    expect(dead).toContain(body.occurrence);
    expect(calls.every((c) => c.headers["orbit-event"] === "dead_letter")).toBe(true);
  }, 240_000);
});
