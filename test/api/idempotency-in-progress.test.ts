/**
 * A request whose Idempotency-Key another server's request still holds, uncommitted (PostgreSQL: a
 * large keyed backfill): it waited on the claim until the database's answer bound and was answered
 * 503 "the database did not answer within 30000 ms", though the database was fine (a tester). It
 * now waits a bounded time and answers 409 CONFLICT, saying why; once the first has answered, the
 * same request replays its answer.
 */
import { describe, expect, it } from "vitest";
import { IdempotencyKeys } from "../../src/api/idempotency.js";
import { ManualClock } from "../../src/clock/manual-clock.js";
import { OrbitError } from "../../src/domain/errors.js";
import { postgresDialect, useStore } from "../helpers/db.js";

if (!postgresDialect.enabled)
  console.warn(`skipped: "a key held by a request in progress": ${postgresDialect.skipReason}`);
describe.skipIf(!postgresDialect.enabled)("a key held by a request in progress on another server [postgres]", () => {
  const db = useStore(postgresDialect);

  it("answers 409 after a bounded wait, then replays the first answer once it has committed", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const other = await db.location.open();
    // Two servers: each its own keys (and in-process queue), one database.
    const first = new IdempotencyKeys(db.store, clock);
    const second = new IdempotencyKeys(other, clock, () => undefined, 200);
    const request = { key: "backfill-1", scope: "POST /v1/schedules/a/backfill", fingerprint: { n: 1 } };
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started: () => void = () => undefined;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const long = first.run(request, async () => {
      started();
      await held;
      return { status: 200, body: { started: 3000 } };
    });
    await running;
    const refused = await second.run(request, async () => ({ status: 200, body: { twice: true } })).catch((e) => e);
    expect(refused).toBeInstanceOf(OrbitError);
    expect(refused).toMatchObject({
      code: "CONFLICT",
      message:
        'Idempotency-Key "backfill-1" is in use by a request still in progress (on this server or another); retry once it has answered, to get its answer',
    });
    release();
    expect(await long).toMatchObject({ status: 200, replayed: false });
    const again = await second.run(request, async () => ({ status: 200, body: { twice: true } }));
    expect(again.replayed).toBe(true);
    expect(JSON.stringify(again.body)).toBe('{"started":3000}');
    await other.close();
  });
});
