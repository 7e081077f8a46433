/**
 * One webhook target that does not answer does not hold back the others (docs/outcomes.md §
 * Notifications): the loop's pass waited for every delivery it had started, so a target hanging
 * until its 10 s timeout held back every delivery due meanwhile, other schedules' alerts too.
 */
import { createServer, type ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { SystemClock } from "../../src/clock/system-clock.js";
import { Notifier } from "../../src/engine/notifier.js";
import { sqliteDialect, useStore } from "../helpers/db.js";

const held: ServerResponse[] = [];
const servers: ReturnType<typeof createServer>[] = [];
afterEach(async () => {
  for (const res of held.splice(0)) res.destroy();
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

async function listen(answer: (res: ServerResponse) => void): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => answer(res));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
}

/** A failure alert of `schedule` to `url`, as the outcome recorder stores one. */
function failureAlert(schedule: string, url: string, now: number) {
  return {
    scheduleId: schedule,
    workflow: "Report",
    event: "failure",
    url,
    payload: { event: "failure", schedule_id: schedule },
    createdMs: now,
  };
}

describe("a webhook target that does not answer [sqlite]", () => {
  const db = useStore(sqliteDialect);

  it("does not hold back a delivery that comes due while it hangs", async () => {
    const clock = new SystemClock();
    const hangs = await listen((res) => void held.push(res));
    const answers = await listen((res) => res.writeHead(200).end());
    const row = (schedule: string, url: string) => failureAlert(schedule, url, clock.now());
    await db.store.insertNotifications([row("hangs", hangs)], clock.now());
    const notifier = new Notifier({ store: db.store, clock, secret: null });
    notifier.start();
    try {
      while (held.length === 0) await new Promise((r) => setTimeout(r, 10));
      // Another schedule's alert comes due while the first target holds its request.
      await db.store.insertNotifications([row("answers", answers)], clock.now());
      const state = async (schedule: string) => (await db.store.listNotifications(schedule, { limit: 1 }))[0];
      while ((await state("answers"))?.state !== "delivered") await new Promise((r) => setTimeout(r, 20));
      // Delivered while the first is still under way: no attempt of it is recorded yet.
      expect(await state("hangs")).toMatchObject({ state: "pending", attempts: 0 });
    } finally {
      await notifier.close();
    }
  });
});

describe("a server stopping while a webhook call hangs [sqlite]", () => {
  const db = useStore(sqliteDialect);

  it("records no attempt: the delivery stays due for the next start", async () => {
    const clock = new SystemClock();
    const hangs = await listen((res) => void held.push(res));
    await db.store.insertNotifications([failureAlert("hangs", hangs, clock.now())], clock.now());
    const notifier = new Notifier({ store: db.store, clock, secret: null });
    notifier.start();
    while (held.length === 0) await new Promise((r) => setTimeout(r, 10));
    await notifier.close();
    // It was logged "webhook delivery failed; retrying" with "This operation was aborted", attempt 1.
    expect((await db.store.listNotifications("hangs", { limit: 1 }))[0]).toMatchObject({
      state: "pending",
      attempts: 0,
      lastError: null,
    });
  });
});

describe("a webhook target that answers 200 with a body without end [sqlite]", () => {
  const db = useStore(sqliteDialect);

  it("is delivered on its status, the body dropped, not read whole (into the server's memory) until the timeout", async () => {
    const clock = new SystemClock();
    // 64 KB a chunk, as fast as the socket takes it, never ended: the answer was read whole, so the
    // delivery ran into its 10 s timeout (and a 500 MB one took the server to 1.7 GB; a tester).
    const chunk = Buffer.alloc(64 * 1024, 120);
    let sent = 0;
    let dropped: () => void = () => undefined;
    const closed = new Promise<void>((resolve) => {
      dropped = resolve;
    });
    const endless = await listen((res) => {
      held.push(res);
      res.on("close", dropped);
      res.writeHead(200, { "content-type": "text/plain" });
      const more = () => {
        while (!res.destroyed) {
          sent += chunk.length;
          if (!res.write(chunk)) return;
        }
      };
      res.on("drain", more);
      more();
    });
    await db.store.insertNotifications([failureAlert("endless", endless, clock.now())], clock.now());
    const notifier = new Notifier({ store: db.store, clock, secret: null });
    try {
      expect(await notifier.deliverDue()).toBe(1);
      expect((await db.store.listNotifications("endless", { limit: 1 }))[0]).toMatchObject({
        state: "delivered",
        attempts: 1,
        lastError: null,
      });
      // The server let the connection go after a little of the answer (what the sockets' buffers
      // held besides), where it read on until the timeout: gigabytes on this loopback.
      await closed;
      expect(sent).toBeLessThan(32 * 1024 * 1024);
    } finally {
      await notifier.close();
    }
  });
});
