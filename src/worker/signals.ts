/**
 * A worker closes on SIGINT and SIGTERM by default (docs/workflows.md § Worker): a deploy's SIGTERM
 * killed a worker that did not wire it to `close()` itself, with runs in flight that then waited
 * for their leases to end (30 s) and ran their current step again elsewhere. One process listener
 * per signal serves every worker of the process (tests run dozens), and it is removed once it
 * fired, so a second Ctrl-C ends the process at once.
 */

/** What a signal closes: a worker's `close()`, told which signal it was. */
type Closer = (signal: NodeJS.Signals) => Promise<void>;

const closersBySignal = new Map<NodeJS.Signals, Set<Closer>>();
/** Signals the program listened for itself when this module began to: it decides what they do. */
const programListened = new Set<NodeJS.Signals>();

function onSignal(signal: NodeJS.Signals): void {
  // Whether the program handles the signal too, read now: a `process.once` listener has removed
  // itself by the time the workers have closed (examples/embed.ts was killed in its server's close).
  const programHandles = programListened.has(signal) || process.listenerCount(signal) > 1;
  const closers = closersBySignal.get(signal);
  closersBySignal.delete(signal);
  programListened.delete(signal);
  process.removeListener(signal, onSignal);
  const closing = [...(closers ?? [])].map((close) => close(signal).catch(() => undefined));
  void Promise.all(closing).then(() => {
    // Nothing else of the program handles the signal: end as Node would have without us, now
    // that the workers handed their tasks back.
    if (!programHandles && process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  });
}

/** Closes `close` on each of `signals` until the returned function is called. */
export function closeOnSignals(signals: readonly NodeJS.Signals[], close: Closer): () => void {
  for (const signal of signals) {
    let closers = closersBySignal.get(signal);
    if (closers === undefined) {
      closers = new Set();
      closersBySignal.set(signal, closers);
      if (process.listenerCount(signal) > 0) programListened.add(signal);
      process.on(signal, onSignal);
    }
    closers.add(close);
  }
  return () => {
    for (const signal of signals) {
      const closers = closersBySignal.get(signal);
      if (closers === undefined) continue;
      closers.delete(close);
      if (closers.size === 0) {
        closersBySignal.delete(signal);
        programListened.delete(signal);
        process.removeListener(signal, onSignal);
      }
    }
  };
}
