/**
 * A LISTEN connection that PostgreSQL ends is opened again, and says so: after an outage the log
 * said the task LISTEN connection "still fails" and never that it worked again (the other passes
 * did), so the log read as if the outage went on (docs/operations.md § A database outage).
 */
import { randomBytes } from "node:crypto";
import { expect, it } from "vitest";
import { PostgresListener } from "../../src/store/postgres/listener.js";
import { adminQuery, PG_URL } from "../helpers/db.js";

if (!PG_URL) console.warn("skipped: test/store/listener-reconnect.test.ts: ORBIT_TEST_DATABASE_URL is not set");

it.skipIf(!PG_URL)("reports the loss, listens again and says so when its connection is terminated", async () => {
  const channel = `orbit_test_${randomBytes(4).toString("hex")}`;
  const said: string[] = [];
  let reconnected: () => void = () => {};
  const again = new Promise<void>((resolve) => (reconnected = resolve));
  const listener = new PostgresListener({
    connectionString: PG_URL as string,
    channel,
    retryMs: 50,
    onNotify: () => said.push("notify"),
    onError: () => said.push("error"),
    onReconnected: () => {
      said.push("reconnected");
      reconnected();
    },
  });
  await listener.start();
  try {
    await adminQuery(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN ${channel}'`);
    await again;
    // The loss, then listening again, then the notify a reconnect makes (one may have been missed).
    expect(said.slice(0, 3)).toEqual(["error", "reconnected", "notify"]);
    await adminQuery(`NOTIFY ${channel}`);
    while (said.filter((s) => s === "notify").length < 2) await new Promise((r) => setTimeout(r, 10));
  } finally {
    await listener.close();
  }
});
