/**
 * A transaction PostgreSQL aborted to break a deadlock is run again, five times in all, with a
 * short random pause between tries (src/engine/run-again.ts): three tries back to back could all
 * meet the same contender, and a heartbeat then failed and waited a whole interval. Anything else
 * is answered at once.
 */
import { expect, it } from "vitest";
import { OrbitError } from "../../src/domain/errors.js";
import { runAgainIfAborted } from "../../src/engine/run-again.js";

const aborted = () => new OrbitError("UNAVAILABLE", "the database aborted the transaction", { aborted: true });

/** A transaction aborted `n` times, then answering "done"; counts its tries. */
function abortedTimes(n: number): { run: () => Promise<string>; tries: () => number } {
  let tries = 0;
  return {
    run: async () => {
      tries++;
      if (tries <= n) throw aborted();
      return "done";
    },
    tries: () => tries,
  };
}

it("runs an aborted transaction again until it goes through, five tries in all", async () => {
  const four = abortedTimes(4);
  expect(await runAgainIfAborted(four.run)).toBe("done");
  expect(four.tries()).toBe(5);
  const five = abortedTimes(5);
  await expect(runAgainIfAborted(five.run)).rejects.toMatchObject({ details: { aborted: true } });
  expect(five.tries()).toBe(5);
});

it("answers any other failure at once", async () => {
  let tries = 0;
  const other = async () => {
    tries++;
    throw new OrbitError("UNAVAILABLE", "the database is unavailable");
  };
  await expect(runAgainIfAborted(other)).rejects.toThrow("the database is unavailable");
  expect(tries).toBe(1);
});
