/**
 * A webhook delivery is sent once while no server dies (docs/outcomes.md § Notifications): each
 * attempt claims its row first. A pass that listed a row as pending before an attempt of it ended
 * sent it again (a tester's receiver got one delivery twice, and the 500 of the extra call was
 * recorded over the delivered state), and every server of a cluster runs a sender over the same
 * table. Two senders on one store here stand for both.
 */
import { createServer } from "node:http";
import { afterEach, expect, it } from "vitest";
import { SystemClock } from "../../src/clock/system-clock.js";
import { Notifier } from "../../src/engine/notifier.js";
import { describeEachDialect, useStore } from "../helpers/db.js";

const servers: ReturnType<typeof createServer>[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

describeEachDialect("a webhook delivery", (dialect) => {
  const db = useStore(dialect);

  it("is sent once when two senders find it due at once, and recorded once", async () => {
    let calls = 0;
    const server = createServer((req, res) => {
      calls++;
      req.resume();
      req.on("end", () => res.writeHead(200).end());
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
    const clock = new SystemClock();
    const rows = Array.from({ length: 20 }, (_, i) => ({
      scheduleId: `s${i}`,
      workflow: "Report",
      event: "failure",
      url,
      payload: { event: "failure", schedule_id: `s${i}` },
      createdMs: clock.now(),
    }));
    await db.store.insertNotifications(rows, clock.now());
    const a = new Notifier({ store: db.store, clock, secret: null });
    const b = new Notifier({ store: db.store, clock, secret: null });
    // Both list the rows at once (most of them both); each row is sent by one of them.
    const warnings: Error[] = [];
    const warned = (w: Error) => void warnings.push(w);
    process.on("warning", warned);
    await Promise.all([a.deliverDue(), b.deliverDue()]);
    process.off("warning", warned);
    expect(calls).toBe(20);
    // Twenty calls under way listen to one sender's signal: no "possible memory leak" warning.
    expect(warnings.map((w) => w.name)).not.toContain("MaxListenersExceededWarning");
    for (const { scheduleId } of rows) {
      expect((await db.store.listNotifications(scheduleId as string, { limit: 5 }))[0]).toMatchObject({
        state: "delivered",
        attempts: 1,
      });
    }
    // Delivered rows are not due again.
    expect(await a.deliverDue()).toBe(0);
    expect(calls).toBe(20);
  });
});
