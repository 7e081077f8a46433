/**
 * An async mutex with two lanes. The SQLite store has one connection; every operation takes this
 * lock so that nothing runs on the connection while a transaction is open there (it would silently
 * become part of that transaction, and be rolled back with it). Waiters are served in order within
 * their lane, and the urgent lane first: the firing loop's transactions go ahead of queued worker
 * requests, so a busy worker protocol never makes occurrences fire late (docs/storage.md § SQLite).
 * The holder is never interrupted; urgent only means "next".
 */
export class Mutex {
  private busy = false;
  private readonly urgent: (() => void)[] = [];
  private readonly normal: (() => void)[] = [];
  private held = 0;
  private reservations = 0;

  /** Runs `fn` once the lock is free and every earlier waiter of its lane (and, if not urgent, of the urgent lane) has run. */
  async run<T>(fn: () => Promise<T> | T, urgent = false): Promise<T> {
    this.held++;
    try {
      if (this.busy || (!urgent && this.reservations > 0)) {
        await new Promise<void>((resolve) => (urgent ? this.urgent : this.normal).push(resolve));
      } else {
        this.busy = true;
        await undefined; // as when waiting: fn never starts in the caller's synchronous turn
      }
      return await fn();
    } finally {
      this.held--;
      // Hand the lock straight to the next waiter (busy stays true), so nobody can slip in between.
      this.busy = false;
      this.startNext();
    }
  }

  /**
   * Until the returned function is called, only urgent waiters get the lock: the firing loop holds
   * this while it fires a herd batch after batch, so the worker traffic queued in the gaps between
   * its batches waits until the herd has fired. Idempotent release.
   */
  reserve(): () => void {
    this.reservations++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.reservations--;
      if (!this.busy) this.startNext();
    };
  }

  /** Whether the firing loop holds a reservation (only urgent waiters get the lock). */
  get reserved(): boolean {
    return this.reservations > 0;
  }

  private startNext(): void {
    const next = this.urgent.shift() ?? (this.reservations > 0 ? undefined : this.normal.shift());
    if (next) {
      this.busy = true;
      next();
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
