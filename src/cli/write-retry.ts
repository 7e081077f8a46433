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

/** What a write's tries tell the CLI (connection.ts says them on stderr; main.ts the last). */
export interface RepeatWatch {
  /**
   * Called once, before the first repeat, with the 503 that came (`503 UNAVAILABLE (<the first
   * line of its message>)`) and how many tries may follow: the command then waits on its own
   * repeats, not on the server, which has answered.
   */
  repeating?(answer: string, triesLeft: number): void;
  /**
   * Called when the write ends answered 503 on each of its `tries`, every one of them a refusal
   * the server says came before anything of it was written ({@link saysNothingWritten}): then the
   * change was not made.
   */
  refusedEach?(idempotencyKey: string, tries: number): void;
}

/**
 * `fetchFn`, repeating a write that carries an Idempotency-Key while the server answers 503, with
 * the same request (headers, key and body), waiting `sleep` between tries. What it answers is the
 * last try's answer; a repeat that gets none (no answer in time, the server gone) answers the 503
 * before it, which the CLI reports as a change that may or may not have been made, naming the key
 * (src/client/http.ts, src/cli/main.ts), unless every try was refused before anything was written
 * (`watch.refusedEach`).
 */
export function repeatsUnavailableWrites(
  fetchFn: typeof fetch,
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>,
  watch: RepeatWatch = {},
): typeof fetch {
  return async (input, init) => {
    const method = (init?.method ?? "GET").toUpperCase();
    const key = new Headers(init?.headers).get("idempotency-key");
    if (method === "GET" || method === "HEAD" || key === null) return fetchFn(input, init);
    const signal = init?.signal ?? undefined;
    let tries = 1;
    // Whether each try so far was refused before anything of it was written.
    let refusedEach = true;
    const ended = async (res: Response): Promise<Response> => {
      if (res.status !== 503) return res;
      const last = await kept(res);
      if (refusedEach && saysNothingWritten(await last.clone().text())) watch.refusedEach?.(key, tries);
      return last;
    };
    let res = await fetchFn(input, init);
    for (const [i, wait] of UNAVAILABLE_REPEAT_WAITS_MS.entries()) {
      if (res.status !== 503) return res;
      const unavailable = await kept(res);
      const text = await unavailable.clone().text();
      refusedEach &&= saysNothingWritten(text);
      if (i === 0) watch.repeating?.(answerText(unavailable, text), UNAVAILABLE_REPEAT_WAITS_MS.length);
      await sleep(wait, signal);
      if (signal?.aborted) return ended(unavailable);
      try {
        tries += 1;
        res = await fetchFn(input, init);
      } catch {
        // The repeat that got no answer may have been carried out.
        refusedEach = false;
        return unavailable;
      }
    }
    return ended(res);
  };
}

/**
 * The server's 503 messages that say the write was refused before anything of it was written, and
 * where: the request refused before any route ran (src/api/app.ts); a SQLite file deleted or
 * replaced, or its folder's lock, checked before COMMIT (src/store/sqlite/file-identity.ts); a full
 * or read-only SQLite file (its failed write commits nothing; src/store/sqlite/sqlite-connection.ts);
 * and on PostgreSQL a transaction the database aborted, a read-only session, and a connection that
 * was never had (src/store/postgres/unavailable.ts). A keyed write is one transaction with its key
 * (src/api/idempotency.ts). Any other 503 (a connection that broke, no answer from the database, a
 * SQLite I/O error) may have come after the COMMIT was carried out.
 */
const NOTHING_WRITTEN: readonly RegExp[] = [
  /^the server is shutting down;/,
  /^the (?:database file|database's write-ahead log|data dir's lock file) .* while the server ran, .*; writes are refused/,
  /^the SQLite database cannot be written \(SQLITE_(?:FULL|READONLY)\b/,
  /^the database aborted the transaction \(.*\); nothing of it was kept/,
  /^the database refuses writes \(/,
  /^could not connect to the database within \d+ ms /,
  /^no database connection came free within \d+ ms /,
];

/** Whether a 503's body (`{code, message}`) says nothing of the write was written. */
export function saysNothingWritten(body: string): boolean {
  const message = messageOf(body);
  return message !== null && NOTHING_WRITTEN.some((re) => re.test(message));
}

function messageOf(body: string): string | null {
  try {
    const parsed = JSON.parse(body) as { code?: unknown; message?: unknown } | null;
    return parsed?.code === "UNAVAILABLE" && typeof parsed.message === "string" ? parsed.message : null;
  } catch {
    return null;
  }
}

/** The most of a 503's message the line saying the CLI tries again quotes (the last line has it all). */
const QUOTED_CHARS = 200;

/** `503 UNAVAILABLE (the server is shutting down; …)`, or a proxy's `503 Service Unavailable (…)`. */
function answerText(res: Response, body: string): string {
  const message = messageOf(body);
  const said = (message ?? body).split("\n", 1)[0]?.trim() ?? "";
  const cut = said.length > QUOTED_CHARS ? `${said.slice(0, QUOTED_CHARS)}…` : said;
  const status = message !== null ? `${res.status} UNAVAILABLE` : `${res.status} ${res.statusText}`.trim();
  return cut === "" ? status : `${status} (${cut})`;
}

/**
 * The writes of a run (its CliIO) whose every try was refused before anything was written, by
 * key, with the number of tries: connection.ts notes them, main.ts says the change was not made.
 */
const refusedWrites = new WeakMap<object, Map<string, number>>();

/** Notes that the write with `key` was refused on each of its `tries` (see {@link refusedWrites}). */
export function noteRefusedWrite(run: object, key: string, tries: number): void {
  const keys = refusedWrites.get(run) ?? new Map<string, number>();
  keys.set(key, tries);
  refusedWrites.set(run, keys);
}

/** The tries of a write of `run` refused on each before anything was written, or null. */
export function refusedTries(run: object, key: string | undefined): number | null {
  return key === undefined ? null : (refusedWrites.get(run)?.get(key) ?? null);
}

/** What the CLI says of a write whose every try the server refused before writing anything. */
export function notMadeText(tries: number): string {
  const each = tries === 1 ? "it" : `each of the ${tries} tries`;
  return `the change was not made: the server refused ${each} before writing anything`;
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
