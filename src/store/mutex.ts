/**
 * A FIFO async mutex. The SQLite store has one connection; every operation takes this lock so that
 * nothing runs on the connection while a transaction is open there (it would silently become part
 * of that transaction, and be rolled back with it).
 */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();
  private held = 0;

  /** Runs `fn` once every earlier holder has finished; releases even when `fn` throws. */
  async run<T>(fn: () => Promise<T> | T): Promise<T> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.held++;
    try {
      await previous;
      return await fn();
    } finally {
      this.held--;
      release();
    }
  }

  /** Holders and waiters, for close() to know whether work is still queued. */
  get pending(): number {
    return this.held;
  }

  /** Resolves when everything queued so far has finished. */
  async drain(): Promise<void> {
    await this.run(() => undefined);
  }
}
