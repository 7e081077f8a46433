/**
 * The notify webhook sender (docs/outcomes.md § Notifications): delivers the rows the
 * execution-ended hook queued (orbit_notifications) as JSON POSTs signed with HMAC-SHA256, retried
 * with exponential back-off until delivered or MAX_ATTEMPTS, each attempt recorded on the row.
 */
import { createHmac } from "node:crypto";
import type { Clock } from "../domain/clock.js";
import type { NotificationRow } from "../store/outcome-store.js";
import type { Store } from "../store/store.js";
import { DeadlineLoop } from "./deadline-loop.js";

export const MAX_ATTEMPTS = 8;
const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 10 * 60_000;
const TIMEOUT_MS = 10_000;
const MAX_SLEEP_MS = 1000;

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, Stripe-style: the timestamp defeats replays. */
export function signature(secret: string, body: string, atMs: number): string {
  const t = Math.floor(atMs / 1000);
  return `t=${t},v1=${createHmac("sha256", secret).update(`${t}.${body}`).digest("hex")}`;
}

export class Notifier {
  private readonly loop: DeadlineLoop;

  constructor(
    private readonly o: {
      store: Store;
      clock: Clock;
      /** The HMAC key (ORBIT_NOTIFY_SECRET); without one, calls carry no signature header. */
      secret: string | null;
      log?: { warn?(obj: object, msg: string): void; error(obj: object, msg: string): void };
    },
  ) {
    this.loop = new DeadlineLoop({
      clock: o.clock,
      pass: () => this.deliverDue(),
      nextDueMs: () => o.store.nextNotificationMs(),
      maxSleepMs: MAX_SLEEP_MS,
      minSleepMs: 10,
      onError: (err) => o.log?.error({ err }, "sending webhooks failed; retrying"),
    });
  }

  start(): void {
    this.loop.start();
  }

  async close(): Promise<void> {
    await this.loop.close();
  }

  /** Sends every due delivery once; returns how many it attempted. */
  async deliverDue(): Promise<number> {
    const due = await this.o.store.listDueNotifications(this.o.clock.now(), 50);
    await Promise.all(due.map((n) => this.attempt(n)));
    return due.length;
  }

  private async attempt(n: NotificationRow): Promise<void> {
    const body = JSON.stringify({ id: n.id, ...n.payload });
    const now = this.o.clock.now();
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "user-agent": "orbit-notify",
      "orbit-event": n.event,
      "orbit-delivery": String(n.id),
    };
    if (this.o.secret !== null) headers["orbit-signature"] = signature(this.o.secret, body, now);
    let error: string | null = null;
    try {
      const res = await fetch(n.url, {
        method: "POST",
        headers,
        body,
        signal: AbortSignal.any([AbortSignal.timeout(TIMEOUT_MS), this.loop.signal]),
        redirect: "manual",
      });
      await res.arrayBuffer().catch(() => undefined);
      if (res.status < 200 || res.status >= 300) error = `HTTP ${res.status}`;
    } catch (err) {
      error = (err as Error).message;
    }
    const attempts = n.attempts + 1;
    const after = this.o.clock.now();
    if (error === null) {
      await this.o.store.updateNotification(n.id, {
        state: "delivered",
        attempts,
        nextAttemptMs: null,
        lastError: null,
        deliveredMs: after,
      });
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
    if (giveUp) this.o.log?.error(fields, "webhook delivery failed; giving up");
    else this.o.log?.warn?.(fields, "webhook delivery failed; retrying");
    await this.o.store.updateNotification(n.id, {
      state: giveUp ? "failed" : "pending",
      attempts,
      nextAttemptMs: giveUp ? null : after + Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (attempts - 1)),
      lastError: error,
      deliveredMs: null,
    });
  }
}
