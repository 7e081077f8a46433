/**
 * How PostgreSQL failures reach clients (src/store/postgres/unavailable.ts): a dropped connection
 * and a transaction PostgreSQL aborted (deadlock, serialization failure) are UNAVAILABLE (503, to
 * retry: nothing of the transaction was kept); a refusal such as a unique violation is not.
 */
import { describe, expect, it } from "vitest";
import { isOutage, OrbitError } from "../../src/domain/errors.js";
import { asUnavailable } from "../../src/store/postgres/unavailable.js";

const pgError = (code: string, message: string): Error => Object.assign(new Error(message), { code });

describe("PostgreSQL failures as UNAVAILABLE", () => {
  it("a deadlock or a serialization failure is UNAVAILABLE, saying nothing was kept", () => {
    for (const [code, message] of [
      ["40P01", "deadlock detected"],
      ["40001", "could not serialize access due to concurrent update"],
    ] as const) {
      const err = asUnavailable(pgError(code, message));
      expect(err).toBeInstanceOf(OrbitError);
      expect(err).toMatchObject({
        code: "UNAVAILABLE",
        message: `the database aborted the transaction (${message}); nothing of it was kept, retry`,
      });
    }
  });

  it("a dropped connection is UNAVAILABLE; a unique violation is left as it is", () => {
    expect(asUnavailable(pgError("57P01", "terminating connection due to administrator command"))).toMatchObject({
      code: "UNAVAILABLE",
    });
    const unique = pgError("23505", "duplicate key value violates unique constraint");
    expect(asUnavailable(unique)).toBe(unique);
  });

  it("a database closed to connections (ALLOW_CONNECTIONS false) is UNAVAILABLE; another 55000 is not", () => {
    expect(asUnavailable(pgError("55000", 'database "orbit" is not currently accepting connections'))).toMatchObject({
      code: "UNAVAILABLE",
      message: 'the database is unavailable (database "orbit" is not currently accepting connections); retry shortly',
    });
    const other = pgError("55000", "cannot ALTER TABLE because it is being used by active queries");
    expect(asUnavailable(other)).toBe(other);
  });

  it("a database gone (dropped, renamed) or refusing the role is UNAVAILABLE, marked refused", () => {
    // It was 500 INTERNAL: a worker gave a finished run's report up and the run ran again (a tester).
    for (const [code, message] of [
      ["3D000", 'database "orbit" does not exist'],
      ["28P01", 'password authentication failed for user "orbit"'],
      ["28000", 'role "orbit" is not permitted to log in'],
    ] as const) {
      const err = asUnavailable(pgError(code, message));
      expect(err).toMatchObject({ code: "UNAVAILABLE", details: { refused: true } });
      expect(isOutage(err)).toBe(true);
    }
    expect(asUnavailable(pgError("57P01", "terminating connection"))).not.toMatchObject({ details: { refused: true } });
  });

  it("a connection not made in time says within how long and why, where pg said only 'timeout expired'", () => {
    const said =
      "could not connect to the database within 5000 ms (a network stall, a firewall dropping packets, or a frozen or overloaded database host); retry shortly";
    for (const message of ["timeout expired", "Connection terminated due to connection timeout"]) {
      const err = asUnavailable(new Error(message), 30_000, 5000);
      expect(err).toBeInstanceOf(OrbitError);
      expect(err).toMatchObject({ code: "UNAVAILABLE", message: said });
      expect(isOutage(err)).toBe(true);
    }
    // No pooled connection came free in time: pg-pool's words said "trying to connect".
    expect(asUnavailable(new Error("timeout exceeded when trying to connect"), 30_000, 5000)).toMatchObject({
      code: "UNAVAILABLE",
      message:
        "no database connection came free within 5000 ms (each is busy or waits for an answer: a network stall, a frozen or overloaded database host, or long writes); retry shortly",
    });
    // A connection dropped while connecting is not a timeout.
    expect(asUnavailable(new Error("Connection terminated unexpectedly"), 30_000, 5000)).toMatchObject({
      message: "the database is unavailable (Connection terminated unexpectedly); retry shortly",
    });
  });
});
