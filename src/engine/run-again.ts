/** Transactions that PostgreSQL may abort to break a deadlock, run again. */
import { OrbitError } from "../domain/errors.js";

/** How many times a transaction is run in all before its abort is answered (503). */
const ATTEMPTS = 5;

/**
 * Runs a transaction again (up to {@link ATTEMPTS} times in all) when PostgreSQL aborted it to break
 * a deadlock or a serialization conflict: nothing of it was kept. Each try after the first waits a
 * few random milliseconds, more each time, so that the transaction it met is likely done instead of
 * meeting it again at once (three tries back to back could all meet the same herd of
 * cancel_previous fires). Only for bodies that change nothing outside their transaction.
 */
export async function runAgainIfAborted<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (attempt >= ATTEMPTS || !(err instanceof OrbitError && err.details?.aborted === true)) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, attempt * (5 + Math.random() * 15)));
  }
}
