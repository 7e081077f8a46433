/**
 * `--ledger-retention` (docs/server.md): the server keeps that many ledger rows per schedule, and
 * refuses a value outside 1 to 1,000,000 at start.
 */
import { expect, it } from "vitest";
import { startTestServer } from "../api/helpers.js";

it("a server keeps --ledger-retention rows of each schedule's ledger; 0 is refused at start", async () => {
  const t = await startTestServer({ ledgerRetention: 3 });
  try {
    await t.registerOrders();
    await t.call("POST", "/v1/schedules", {
      schedule_id: "s",
      workflow: "OrderProcessing",
      cron: "0 9 * * *",
      overlap: "allow",
      paused: true,
    });
    for (let i = 0; i < 5; i++) expect((await t.call("POST", "/v1/schedules/s/trigger", {})).status).toBe(201);
    const ledger = await t.call("GET", "/v1/schedules/s/occurrences?limit=100");
    expect((ledger.body as { occurrences: unknown[] }).occurrences).toHaveLength(3);
    expect((await t.call("GET", "/v1/schedules/s")).body).toMatchObject({ fired: 5 });
  } finally {
    await t.stop();
  }
  await expect(startTestServer({ ledgerRetention: 0 })).rejects.toThrow(
    "--ledger-retention must be a whole number from 1 to 1000000, got 0",
  );
});
