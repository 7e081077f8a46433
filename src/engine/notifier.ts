/**
 * The notify webhook sender (docs/outcomes.md § Notifications): delivers the rows the
 * execution-ended hook queued (orbit_notifications) as JSON POSTs signed with HMAC-SHA256, retried
 * with exponential back-off until delivered or MAX_ATTEMPTS, each attempt recorded on the row.
 */
import { createHmac } from "node:crypto";
import { lookup } from "node:dns/promises";
import { setMaxListeners } from "node:events";
import { isBlockedAddress } from "../domain/blocked-address.js";
import type { Clock } from "../domain/clock.js";
import { thrownText } from "../domain/error-text.js";
import { LoggedFailures, passLines } from "../domain/failure-spell.js";
import { linkedSignal } from "../domain/linked-signal.js";
import type { NotificationRow } from "../store/outcome-store.js";
import type { Store } from "../store/store.js";
import { DeadlineLoop } from "./deadline-loop.js";

export const MAX_ATTEMPTS = 8;
const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 10 * 60_000;
const TIMEOUT_MS = 10_000;
/**
 * How long a claimed delivery is this server's (its call's timeout and room to record it): a
 * server that dies with one claimed leaves it due again after this (docs/outcomes.md § Notifications).
 */
const CLAIM_MS = TIMEOUT_MS + 20_000;
const MAX_SLEEP_MS = 1000;
/** Deliveries under way at once. */
const MAX_IN_FLIGHT = 50;
/** While deliveries are under way, how often the loop looks for new due ones (wall time). */
const IN_FLIGHT_LOOK_MS = 250;
/**
 * The most of a target's answer read before the connection is let go. Nothing of it is used: it was
 * read whole (a 500 MB answer took the server's memory to 1.7 GB, held after; a tester).
 */
const ANSWER_READ_BYTES = 64 * 1024;

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, Stripe-style: the timestamp defeats replays. */
export function signature(secret: string, body: string, atMs: number): string {
  const t = Math.floor(atMs / 1000);
  return `t=${t},v1=${createHmac("sha256", secret).update(`${t}.${body}`).digest("hex")}`;
}

export class Notifier {
  private readonly loop: DeadlineLoop;
  /**
   * Deliveries under way, by notification id. The loop does not wait for a pass's deliveries to
   * end before the next pass: one target that does not answer (up to its 10 s timeout) held back
   * every other delivery, and the retries of its own pass, until it gave up.
   */
  private readonly inFlight = new Map<number, Promise<void>>();
  /** The pass's failures and each delivery's store writes, told as one spell. */
  private readonly failures: LoggedFailures;

  constructor(
    private readonly o: {
      store: Store;
      clock: Clock;
      /** The HMAC key (ORBIT_NOTIFY_SECRET); without one, calls carry no signature header. */
      secret: string | null;
      log?: {
        warn?(obj: object, msg: string): void;
        error(obj: object, msg: string): void;
        info?(obj: object, msg: string): void;
      };
      /** A delivery given up after its last attempt (orbit_notifications_failed_total). */
      onGiveUp?: () => void;
    },
  ) {
    this.failures = new LoggedFailures(o.log, () => o.clock.now(), passLines("sending webhooks", "retrying"));
    this.loop = new DeadlineLoop({
      clock: o.clock,
      pass: () => this.deliverPass(),
      nextDueMs: () => o.store.nextNotificationMs(),
      maxSleepMs: MAX_SLEEP_MS,
      minSleepMs: 10,
      onError: (err, startedMs) => this.failures.failed(err, startedMs),
      onSuccess: () => this.failures.succeeded(),
    });
    // Each delivery under way listens to the loop's signal (its call ends on close): up to 50 at
    // once, where Node warns of a leak past 10 (`MaxListenersExceededWarning`, a tester read one).
    setMaxListeners(MAX_IN_FLIGHT + 10, this.loop.signal);
  }

  start(): void {
    this.loop.start();
  }

  async close(): Promise<void> {
    await this.loop.close();
    await Promise.allSettled(this.inFlight.values());
  }

  /** Sends every due delivery not already under way once, and waits for them; returns how many it attempted. */
  async deliverDue(): Promise<number> {
    const started = await this.startDue();
    await Promise.all(started);
    return started.length;
  }

  /**
   * The loop's pass: starts the due deliveries not under way, then returns once one of those under
   * way ends, or after {@link IN_FLIGHT_LOOK_MS}, so that new due ones start beside a slow one.
   */
  private async deliverPass(): Promise<void> {
    // Each started delivery is in `inFlight` and ends on its own (its errors are caught there).
    const started = await this.startDue();
    if (started.length === 0 && this.inFlight.size === 0) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const look = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, IN_FLIGHT_LOOK_MS);
    });
    await Promise.race([...this.inFlight.values(), look]);
    clearTimeout(timer);
  }

  private async startDue(): Promise<Promise<void>[]> {
    const room = MAX_IN_FLIGHT - this.inFlight.size;
    if (room <= 0) return [];
    const due = await this.o.store.listDueNotifications(this.o.clock.now(), room + this.inFlight.size);
    const started: Promise<void>[] = [];
    for (const n of due) {
      if (this.inFlight.has(n.id) || started.length >= room) continue;
      // Detached from the pass: its store writes failing (the database away) are told as the
      // pass's would be; the row stays due and is tried again.
      const attempt = this.attempt(n)
        .then(() => this.failures.succeeded())
        .catch((err: unknown) => this.failures.failed(err))
        .finally(() => this.inFlight.delete(n.id));
      this.inFlight.set(n.id, attempt);
      started.push(attempt);
    }
    return started;
  }

  /** POSTs the body; the error of a failed call (no answer, not 2xx), or null. Redirects are not followed. */
  private async post(url: string, headers: Record<string, string>, body: string): Promise<string | null> {
    // Not AbortSignal.any: on Node 20 it left an entry in the loop's signal per call (linked-signal.ts).
    const stop = linkedSignal([AbortSignal.timeout(TIMEOUT_MS), this.loop.signal]);
    try {
      const res = await fetch(url, { method: "POST", headers, body, signal: stop.signal, redirect: "manual" });
      await discardAnswer(res.body);
      return res.status < 200 || res.status >= 300 ? `HTTP ${res.status}` : null;
    } catch (err) {
      // With its causes: fetch's own message is only "fetch failed" (ECONNREFUSED is in the cause).
      return thrownText(err);
    } finally {
      stop.release();
    }
  }

  private async attempt(n: NotificationRow): Promise<void> {
    // Claimed first: a row listed as pending before an attempt of it ended here was sent again (a
    // tester's receiver got one delivery twice, and a 500's record overwrote the delivered one),
    // and every server of a cluster runs a sender over the same table.
    const claimedUntil = this.o.clock.now() + CLAIM_MS;
    if (!(await this.o.store.claimNotification(n.id, n, claimedUntil))) return;
    const body = JSON.stringify({ id: n.id, ...n.payload });
    const now = this.o.clock.now();
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "user-agent": "orbit-notify",
      "orbit-event": n.event,
      "orbit-delivery": String(n.id),
    };
    if (this.o.secret !== null) headers["orbit-signature"] = signature(this.o.secret, body, now);
    const error = (await blockedTarget(n.url)) ?? (await this.post(n.url, headers, body));
    // Cut short by the server stopping, not failed by the target: not an attempt (restarts during
    // a slow delivery used up its eight and gave it up). The row is due again as it was; the next
    // start sends it.
    if (error !== null && this.loop.signal.aborted) {
      await this.o.store.updateNotification(n.id, { ...n, state: "pending" }, claimedUntil);
      return;
    }
    const attempts = n.attempts + 1;
    const after = this.o.clock.now();
    if (error === null) {
      await this.o.store.updateNotification(
        n.id,
        { state: "delivered", attempts, nextAttemptMs: null, lastError: null, deliveredMs: after },
        claimedUntil,
      );
      return;
    }
    const giveUp = attempts >= MAX_ATTEMPTS;
    // The ids of what the webhook is about, on the line (docs/operations.md § Monitor).
    const executionId = n.payload.execution_id;
    const ids = {
      notification_id: n.id,
      schedule_id: n.scheduleId,
      ...(typeof executionId === "string" ? { execution_id: executionId } : {}),
      workflow: n.workflow,
    };
    const fields = { ...ids, url: n.url, event: n.event, attempts, error };
    if (giveUp) {
      this.o.log?.error(fields, "webhook delivery failed; giving up");
      this.o.onGiveUp?.();
    } else this.o.log?.warn?.(fields, "webhook delivery failed; retrying");
    await this.o.store.updateNotification(
      n.id,
      {
        state: giveUp ? "failed" : "pending",
        attempts,
        nextAttemptMs: giveUp ? null : after + Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (attempts - 1)),
        lastError: error,
        deliveredMs: null,
      },
      claimedUntil,
    );
  }
}

/**
 * Why the webhook's host may not be called, or null: a name that resolves to a link-local or cloud
 * metadata address is refused like the literal address, which the settings refuse already
 * (docs/security.md § Webhooks). A name that does not resolve is left to fetch, which says so.
 */
async function blockedTarget(url: string): Promise<string | null> {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return null;
  }
  if (isBlockedAddress(host)) return `refused: ${host} is a link-local or cloud metadata address`;
  let addresses: { address: string }[];
  try {
    addresses = await lookup(host.replace(/^\[|\]$/g, ""), { all: true });
  } catch {
    return null;
  }
  const blocked = addresses.find((a) => isBlockedAddress(a.address));
  return blocked === undefined
    ? null
    : `refused: ${host} resolves to ${blocked.address}, a link-local or cloud metadata address`;
}

/** Reads up to ANSWER_READ_BYTES of an answer's body (so a short one lets its connection be kept), then drops the rest. */
async function discardAnswer(body: ReadableStream<Uint8Array> | null): Promise<void> {
  if (body === null) return;
  const reader = body.getReader();
  try {
    for (let read = 0; read <= ANSWER_READ_BYTES; ) {
      const chunk = await reader.read();
      if (chunk.done) return;
      read += chunk.value.byteLength;
    }
    await reader.cancel();
  } catch {
    // the answer's status is what counts
  }
}
