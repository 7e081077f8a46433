/** A promise with its resolve and reject, whose rejection nobody must handle (a caller may). */
export function settleable(): { promise: Promise<void>; resolve: () => void; reject: (err: unknown) => void } {
  let resolve: () => void = () => undefined;
  let reject: (err: unknown) => void = () => undefined;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}
