/**
 * A server that answers a write 503 at once (a tester deleted the data folder under it: curl had
 * the 503 in 0.04 s) left `orbit schedule pause` saying "still waiting for the server's answer
 * after 5 s (busy, or waiting for its database)" during the CLI's own waits between its repeats
 * (0.5 + 1 + 2 + 4 s), and then that the change "may or may not have been made" though the server
 * had refused each try before writing anything. Now one line says the CLI tries again, "still
 * waiting" times each try alone, and a write refused on every try that way is said not made.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { abortableSleep } from "../../src/domain/sleep.js";
import { runCli } from "./run-cli.js";

const env = { ORBIT_SERVER: "http://orbit.test:7233" };

const GONE =
  "the database file /data/orbit.db was deleted while the server ran, so a write now would be lost at the next start; writes are refused: stop the server, then restore the file from a backup (orbit restore) or start on an empty one";
const BROKE = "the database is unavailable (Connection terminated unexpectedly); retry shortly";
const STOPPING = "the server is shutting down; retry shortly (on another server, or on this one once it is back)";
const PAUSED = { code: "NOT_FOUND", message: "schedule c1 does not exist" };

/** A fetch answering each request with the next of `answers` (the last one again once they run out). */
function answering(answers: Array<{ status: number; body: unknown }>) {
  const keys: Array<string | null> = [];
  const fetch = (async (_input: string | URL | Request, init?: RequestInit) => {
    keys.push(new Headers(init?.headers).get("idempotency-key"));
    const next = answers[Math.min(keys.length, answers.length) - 1] ?? { status: 500, body: null };
    return new Response(JSON.stringify(next.body), {
      status: next.status,
      headers: { "content-type": "application/json", "orbit-version": "0.1.0" },
    });
  }) as typeof globalThis.fetch;
  return { keys, fetch };
}

const unavailable = (message: string) => ({ status: 503, body: { code: "UNAVAILABLE", message } });
const tryingAgain = (message: string): string =>
  `orbit: the server answered 503 UNAVAILABLE (${message}); trying again with the same Idempotency-Key (up to 4 more tries, 0.5 s to 4 s apart)\n`;

describe("a write answered 503 at once, on every try", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("says once that the CLI tries again, never that it waits for the server, and that the change was not made", async () => {
    const { keys, fetch } = answering([unavailable(GONE)]);
    // The CLI's own waits between the tries, on the (fake) timers, as a real run spends them.
    const running = runCli(["schedule", "pause", "c1"], { fetch, env, sleep: abortableSleep });
    await vi.advanceTimersByTimeAsync(8_000);
    const r = await running;
    // pause reads the schedule first (its GET, no key), then writes five times.
    expect(keys.filter((k) => k !== null)).toHaveLength(5);
    expect(r.code).toBe(1);
    // The line quotes the first 200 characters of the message; the last line has it whole.
    expect(r.stderr).toBe(
      `${tryingAgain(`${GONE.slice(0, 200)}…`)}orbit: ${GONE}; the change was not made: the server refused each of the 5 tries before writing anything\n`,
    );
  });

  it("a try that may have been written (a broken connection) leaves the change uncertain, whatever came after", async () => {
    const { keys, fetch } = answering([unavailable(BROKE), unavailable(STOPPING)]);
    const running = runCli(["schedule", "trigger", "s2"], { fetch, env, sleep: abortableSleep });
    await vi.advanceTimersByTimeAsync(8_000);
    const r = await running;
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `${tryingAgain(BROKE)}orbit: ${STOPPING}; the change may or may not have been made: to retry it safely run the same command again with --idempotency-key ${keys[0]} (within 24 hours): the server then answers what the first did, or does it now if it had not, never twice\n`,
    );
  });

  it("a server shutting down on each try: not made", async () => {
    const { fetch } = answering([unavailable(STOPPING)]);
    const running = runCli(["start", "Uni", "--idempotency-key", "k-1"], { fetch, env, sleep: abortableSleep });
    await vi.advanceTimersByTimeAsync(8_000);
    const r = await running;
    expect(r.stderr.split("\n").slice(1)).toEqual([
      `orbit: ${STOPPING}; the change was not made: the server refused each of the 5 tries before writing anything`,
      "",
    ]);
  });

  it("a repeat that goes unanswered 5 s is still waited for, and said so", async () => {
    let answer: (r: Response) => void = () => undefined;
    const held = new Promise<Response>((resolve) => {
      answer = resolve;
    });
    let tries = 0;
    const fetch = (async () => {
      tries += 1;
      if (tries > 1) return held;
      return new Response(JSON.stringify(unavailable(BROKE).body), { status: 503 });
    }) as typeof globalThis.fetch;
    const running = runCli(["schedule", "trigger", "c1", "--idempotency-key", "k-2"], {
      fetch,
      env,
      sleep: abortableSleep,
    });
    // 0.5 s between the tries, then 5 s of the second try unanswered.
    await vi.advanceTimersByTimeAsync(500 + 5_000);
    answer(new Response(JSON.stringify(PAUSED), { status: 404 }));
    const r = await running;
    expect(r.stderr).toBe(
      `${tryingAgain(BROKE)}orbit: still waiting for the server's answer after 5 s (busy, or waiting for its database); it gives up at 30 s; if stopped now, the change may still be made: to retry it safely run the same command again with --idempotency-key k-2\norbit: schedule c1 does not exist\n`,
    );
  });
});
