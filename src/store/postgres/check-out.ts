/** Checking a client out of the pg pool without a moment in which nobody listens to its errors. */
import type pg from "pg";

/**
 * A client of `pool`, with `onError` listening on it from the moment the pool hands it over. Not
 * `await pool.connect()`: the pool removes its own listener and resolves the promise, and the
 * continuation that would add ours runs only after the rest of the socket read that completed the
 * connection is parsed. When that read also holds the FATAL of a backend terminated right after it
 * started (pg_terminate_backend, a restart), pg emits 'error' on a client nobody listens to, and the
 * process dies (test/faults/pg-connections.test.ts). The callback runs inside the hand-over.
 */
export function checkOut(pool: pg.Pool, onError: (err: Error) => void): Promise<pg.PoolClient> {
  return new Promise((resolve, reject) => {
    pool.connect((err, client) => {
      if (err !== undefined || client === undefined) {
        reject(err ?? new Error("the pool gave no client"));
        return;
      }
      client.on("error", onError);
      resolve(client);
    });
  });
}
