/** Transactions that PostgreSQL may abort to break a deadlock, run again. */
import { OrbitError } from "../domain/errors.js";

/**
 * Runs a transaction again (up to 3 times) when PostgreSQL aborted it to break a deadlock or a
 * serialization conflict: nothing of it was kept. Only for bodies that change nothing outside
 * their transaction.
 */
export async function runAgainIfAborted<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (attempt >= 3 || !(err instanceof OrbitError && err.details?.aborted === true)) throw err;
    }
  }
}
