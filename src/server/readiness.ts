/**
 * /readyz's answer (docs/server.md § Health): the database answers its check, and can be written,
 * within a bound. The check runs apart from the server's pool (Store.readApart): a lock held on an
 * Orbit table keeps the fire, the polls and the requests waiting, each on a pooled connection, and a
 * check waiting behind them said "the database does not answer" while it did, 503 for as long as
 * every connection waited and 200 between (docs/operations.md § When PostgreSQL restarts). Such a
 * lock stalls every server of the database alike, so it does not make one not-ready: the firing
 * loop's log and /metrics (orbit_schedule_fire_waiting_seconds) report it. A check that waits past
 * the bound while other statements got their answers is a busy database, not a missing one (SQLite's
 * one connection; PostgreSQL's connections apart all busy). A database that answers nothing in that
 * time (a network stall) is not ready, as before.
 */
import type { Readiness, ServerRole } from "../api/deps.js";
import type { Store } from "../store/store.js";

/** How long the readiness check waits for the database. */
export const READINESS_TIMEOUT_MS = 2000;

export interface ReadinessCheck {
  store: Pick<Store, "databaseNow" | "readApart" | "writeProblem" | "lastAnswerAt" | "knownWriteProblem">;
  role: () => ServerRole;
  /** False while the server starts or stops. */
  ready: () => boolean;
  timeoutMs?: number;
}

/** The readiness function /readyz calls. */
export function readinessCheck(o: ReadinessCheck): () => Promise<Readiness> {
  const timeoutMs = o.timeoutMs ?? READINESS_TIMEOUT_MS;
  /** What the last finished check said about writes: a busy answer keeps it. */
  let writeProblem: string | null = null;
  return async () => {
    const role = o.role();
    if (!o.ready()) return { ready: false, role, message: "starting or stopping" };
    const asked = performance.now();
    try {
      writeProblem =
        (await within(timeoutMs, async () => {
          await (o.store.readApart ? o.store.readApart((ops) => ops.databaseNow()) : o.store.databaseNow());
          return o.store.writeProblem?.();
        })) ?? null;
    } catch (err) {
      const answeredAt = o.store.lastAnswerAt?.() ?? null;
      const busy = err instanceof TimedOut && answeredAt !== null && answeredAt >= asked;
      // Unanswered while writes fail with a cause: that cause (a lock another process holds).
      const known = o.store.knownWriteProblem?.() ?? null;
      if (!busy && known !== null) return { ready: false, role, message: `the database cannot be written: ${known}` };
      if (!busy) return { ready: false, role, message: `the database does not answer: ${(err as Error).message}` };
    }
    if (writeProblem) return { ready: false, role, message: `the database cannot be written: ${writeProblem}` };
    return { ready: true, role };
  };
}

class TimedOut extends Error {}

/** `check()`, or a rejection after `ms`; the check goes on in the background under the store's own bound. */
async function within<T>(ms: number, check: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimedOut(`no answer within ${ms} ms`)), ms);
  });
  const answer = check();
  answer.catch(() => undefined); // a check that fails after the timeout has nobody to tell
  try {
    return await Promise.race([answer, late]);
  } finally {
    clearTimeout(timer);
  }
}
