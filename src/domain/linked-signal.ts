/**
 * A signal that aborts when any of its sources does, unhooked from them by `release()`.
 *
 * Node 20's `AbortSignal.any` keeps an entry in each source for every signal made from it, and drops
 * it only when that source aborts: a source that lives as long as the process (a server's or a
 * worker's "closing" signal, the firing loop's) grew by one entry (about 70 bytes) per poll, per
 * heartbeat and per firing round, for as long as the process ran. This one listens on each source
 * once and removes its listeners at `release()`, so a long-lived source keeps nothing.
 */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** Stops listening to the sources (idempotent); the signal keeps whatever state it has. */
  release(): void;
}

export function linkedSignal(sources: ReadonlyArray<AbortSignal | undefined>): LinkedSignal {
  const controller = new AbortController();
  const hooked: AbortSignal[] = [];
  const release = (): void => {
    for (const source of hooked.splice(0)) source.removeEventListener("abort", onAbort);
  };
  function onAbort(this: AbortSignal): void {
    release();
    controller.abort(this.reason);
  }
  for (const source of sources) {
    if (source === undefined) continue;
    if (source.aborted) {
      release();
      controller.abort(source.reason);
      break;
    }
    source.addEventListener("abort", onAbort, { once: true });
    hooked.push(source);
  }
  return { signal: controller.signal, release };
}

/** Runs `fn` with a signal linked to `sources`, and unhooks it once `fn` settles. */
export async function withLinkedSignal<T>(
  sources: ReadonlyArray<AbortSignal | undefined>,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const linked = linkedSignal(sources);
  try {
    return await fn(linked.signal);
  } finally {
    linked.release();
  }
}
