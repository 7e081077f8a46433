/**
 * The end hooks of one top-level transaction (StoreOps.onEnd), run by the store once it knows how
 * the transaction ended: `committed` after its COMMIT, `rolledBack` after a rollback or a failure.
 */
import type { TransactionEnd } from "../store.js";

export class TransactionEnds {
  private readonly ends: TransactionEnd[] = [];

  add(end: TransactionEnd): void {
    this.ends.push(end);
  }

  /** `transaction`'s outcome, after running the hooks that match it. */
  settle<T>(transaction: Promise<T>): Promise<T> {
    return transaction.then(
      (value) => {
        for (const end of this.ends) end.committed();
        return value;
      },
      (error: unknown) => {
        for (const end of this.ends) end.rolledBack();
        throw error;
      },
    );
  }
}
