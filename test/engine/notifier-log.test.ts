/**
 * A failed webhook delivery's log line names what it is about (docs/operations.md § Monitor):
 * notification_id, schedule_id, execution_id and workflow, on both dialects. The receiver is a
 * loopback port that refuses connections; the sender's pass runs once, by hand.
 */
import { expect, it } from "vitest";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { closedPort } from "../helpers/ports.js";
import { deliverOnce } from "./notifier-fixture.js";

describeEachDialect("webhook delivery log lines", (dialect) => {
  const db = useStore(dialect);

  it("carry notification_id, schedule_id, execution_id and workflow", async () => {
    const lines = await deliverOnce(db.store, `http://127.0.0.1:${await closedPort()}/hook`, {
      event: "failure",
      schedule_id: "nightly",
      execution_id: "nightly:2026-11-15T19:00:00Z",
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      msg: "webhook delivery failed; retrying",
      notification_id: expect.any(Number),
      schedule_id: "nightly",
      execution_id: "nightly:2026-11-15T19:00:00Z",
      workflow: "Report",
      attempts: 1,
    });
  });
});
