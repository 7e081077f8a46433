import type { Store, StoreOps } from "../store/store.js";

/**
 * Runs `fn` inside the caller's transaction when one is given (so the scheduler can start an
 * execution inside its fire transaction), else in a new one.
 */
export function inTransaction<T>(store: Store, tx: StoreOps | undefined, fn: (tx: StoreOps) => Promise<T>): Promise<T> {
  return tx ? fn(tx) : store.transaction(fn);
}
