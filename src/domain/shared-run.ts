/**
 * One run at a time per key: a call while the key's run is going gets that run's result, a call
 * after it ends starts a new one (a result is never kept). For expensive reads many clients may ask
 * for at once (`GET /v1/doctor`).
 */
export class SharedRuns<T> {
  private readonly running = new Map<string, Promise<T>>();

  run(key: string, fn: () => Promise<T>): Promise<T> {
    const going = this.running.get(key);
    if (going !== undefined) return going;
    const started = fn().finally(() => this.running.delete(key));
    this.running.set(key, started);
    return started;
  }
}
