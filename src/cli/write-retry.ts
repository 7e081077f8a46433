/**
 * A write the server answered 503 UNAVAILABLE is sent again, with the same Idempotency-Key: the
 * database may have committed it and lost only its answer (a proxy that swallowed COMMIT answers;
 * a tester's `orbit schedule trigger` said "retry shortly", and the retry started a second
 * execution). The server keeps the key in the write's own transaction, so a repeat answers what
 * the first did, or does it now if it had not, never twice (docs/api.md). A read is not repeated.
 */
import type { UnansweredWrite } from "../client/http.js";

/**
 * The waits before each repeat: four more tries over 7.5 s, inside the request's own bound (its
 * signal, 30 s for most writes), so the command waits no longer than it did for an answer.
 */
export const UNAVAILABLE_REPEAT_WAITS_MS: readonly number[] = [500, 1000, 2000, 4000];

/** A timer of `ms`, ended early when `signal` aborts. */
export function timerSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done);
  });
}

/**
 * `fetchFn`, repeating a write that carries an Idempotency-Key while the server answers 503, with
 * the same request (headers, key and body), waiting `sleep` between tries. What it answers is the
 * last try's answer; a repeat that gets none (no answer in time, the server gone) answers the 503
 * before it, which the CLI reports as a change that may or may not have been made, naming the key
 * (src/client/http.ts, src/cli/main.ts).
 */
export function repeatsUnavailableWrites(
  fetchFn: typeof fetch,
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>,
): typeof fetch {
  return async (input, init) => {
    const method = (init?.method ?? "GET").toUpperCase();
    if (method === "GET" || method === "HEAD" || !new Headers(init?.headers).has("idempotency-key")) {
      return fetchFn(input, init);
    }
    const signal = init?.signal ?? undefined;
    let res = await fetchFn(input, init);
    for (const wait of UNAVAILABLE_REPEAT_WAITS_MS) {
      if (res.status !== 503) return res;
      const unavailable = await kept(res);
      await sleep(wait, signal);
      if (signal?.aborted) return unavailable;
      try {
        res = await fetchFn(input, init);
      } catch {
        return unavailable;
      }
    }
    return res;
  };
}

/** A copy of `res` whose body can still be read, its own read now. */
async function kept(res: Response): Promise<Response> {
  const text = await res.text();
  return new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers });
}

/**
 * What the CLI says of a write whose answer did not come, or was 503 to every try: it may have been
 * carried out (a trigger retried after a timeout started a second execution, a create retried said
 * "already exists"; testers), and how to repeat it safely: with the key it carried (args.ts
 * writeOptionsOf).
 */
export function maybeDoneText(write: UnansweredWrite): string {
  const what = "the change may or may not have been made";
  if (write.idempotencyKey === undefined) {
    return write.path === "/v1/schedules/apply"
      ? `${what}: \`orbit schedule apply\` run again makes the schedules match the file either way, and its plan shows what was left to do`
      : `${what}: read the current state before running the command again`;
  }
  return `${what}: to retry it safely run the same command again with --idempotency-key ${write.idempotencyKey} (within 24 hours): the server then answers what the first did, or does it now if it had not, never twice`;
}
