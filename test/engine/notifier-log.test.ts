/**
 * A failed webhook delivery's log line names what it is about (docs/operations.md § Monitor):
 * notification_id, schedule_id, execution_id and workflow, on both dialects. The receiver is a
 * loopback port that refuses connections; the sender's pass runs once, by hand.
 */
import { expect, it } from "vitest";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { Notifier } from "../../src/engine/notifier.js";
import { describeEachDialect, useStore } from "../helpers/db.js";
import { closedPort } from "../helpers/ports.js";

describeEachDialect("webhook delivery log lines", (dialect) => {
  const db = useStore(dialect);

  it("carry notification_id, schedule_id, execution_id and workflow", async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 15, 19, 0, 0));
    const lines: Array<Record<string, unknown>> = [];
    const log = {
      warn: (obj: object, msg: string) => lines.push({ ...obj, msg }),
      error: (obj: object, msg: string) => lines.push({ ...obj, msg }),
    };
    await db.store.insertNotifications(
      [
        {
          scheduleId: "nightly",
          workflow: "Report",
          event: "failure",
          url: `http://127.0.0.1:${await closedPort()}/hook`,
          payload: { event: "failure", schedule_id: "nightly", execution_id: "nightly:2026-11-15T19:00:00Z" },
          createdMs: clock.now(),
        },
      ],
      clock.now(),
    );
    const notifier = new Notifier({ store: db.store, clock, secret: null, log });
    expect(await notifier.deliverDue()).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      msg: "webhook delivery failed; retrying",
      notification_id: expect.any(Number),
      schedule_id: "nightly",
      execution_id: "nightly:2026-11-15T19:00:00Z",
      workflow: "Report",
      attempts: 1,
    });
    await notifier.close();
  });
});
