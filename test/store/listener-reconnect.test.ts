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
    stableMs: 20,
    onNotify: () => said.push("notify"),
    onError: () => said.push("error"),
    onReconnected: (upForMs) => {
      said.push(`reconnected, up ${upForMs} ms`);
      reconnected();
    },
  });
  await listener.start();
  try {
    await adminQuery(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN ${channel}'`);
    await again;
    // The loss, the notify a reconnect makes (one may have been missed), then, the connection up
    // for stableMs, that it works again.
    expect(said.slice(0, 3)).toEqual(["error", "notify", "reconnected, up 20 ms"]);
    await adminQuery(`NOTIFY ${channel}`);
    while (said.filter((s) => s === "notify").length < 2) await new Promise((r) => setTimeout(r, 10));
  } finally {
    await listener.close();
  }
});

it.skipIf(!PG_URL)("says nothing of a reconnection terminated again before it lasted stableMs", async () => {
  // pg_terminate_backend in a loop: each reconnection said "works again" (13 times a minute).
  const channel = `orbit_test_${randomBytes(4).toString("hex")}`;
  const said: string[] = [];
  const listener = new PostgresListener({
    connectionString: PG_URL as string,
    channel,
    retryMs: 50,
    stableMs: 600_000,
    onNotify: () => said.push("notify"),
    onError: () => said.push("error"),
    onReconnected: () => said.push("reconnected"),
  });
  await listener.start();
  try {
    for (let kill = 1; kill <= 2; kill++) {
      await adminQuery(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN ${channel}'`);
      while (said.filter((s) => s === "notify").length < kill) await new Promise((r) => setTimeout(r, 10));
    }
    expect(said).toEqual(["error", "notify", "error", "notify"]);
  } finally {
    await listener.close();
  }
});
