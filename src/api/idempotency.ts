/**
 * `Idempotency-Key` on writes (docs/design.md § Changes): the first successful answer to a key is stored (status
 * and body) and replayed for a repeat with the same request; the same key with another request is
 * 422. Keys are scoped to method, path and caller identity, and kept 24 hours. A refused request
 * (any 4xx/5xx) stores nothing, so it can be retried with the same key.
 */

import { createHash } from "node:crypto";
import type { Clock } from "../domain/clock.js";
import { OrbitError } from "../domain/errors.js";
import { serializeJson } from "../domain/json-text.js";
import type { Store } from "../store/store.js";
import { IdempotencyKeyReused } from "./errors.js";

/** How long a key is remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
const PURGE_EVERY_MS = 3_600_000;
const KEY = /^[\x21-\x7e]{1,255}$/;

export interface StoredAnswer {
  status: number;
  body: unknown;
}

export interface IdempotentRequest {
  key: string;
  /** Method, path and identity. */
  scope: string;
  /** What must match for a replay: body, query and fence. */
  fingerprint: unknown;
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as object).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

export class IdempotencyKeys {
  private lastPurgeMs = Number.NEGATIVE_INFINITY;
  /** Requests in flight per scope+key: a concurrent repeat waits for the first answer. */
  private readonly inflight = new Map<string, Promise<unknown>>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  /** The key of a request, validated; undefined when the header is absent. */
  static keyOf(header: string | string[] | undefined): string | undefined {
    if (header === undefined) return undefined;
    const key = Array.isArray(header) ? header[0] : header;
    if (key === undefined || !KEY.test(key)) {
      throw new OrbitError(
        "INVALID_ARGUMENT",
        "Idempotency-Key must be 1-255 printable ASCII characters without spaces",
      );
    }
    return key;
  }

  /** Runs `handle` once per key: a repeat replays the stored answer, a different request is 422. */
  async run(
    request: IdempotentRequest,
    handle: () => Promise<StoredAnswer>,
  ): Promise<StoredAnswer & { replayed: boolean }> {
    const slot = `${request.scope}\u0000${request.key}`;
    for (let pending = this.inflight.get(slot); pending !== undefined; pending = this.inflight.get(slot)) {
      await pending.catch(() => undefined);
    }
    const work = this.runOnce(request, handle);
    this.inflight.set(slot, work);
    try {
      return await work;
    } finally {
      if (this.inflight.get(slot) === work) this.inflight.delete(slot);
    }
  }

  private async runOnce(
    request: IdempotentRequest,
    handle: () => Promise<StoredAnswer>,
  ): Promise<StoredAnswer & { replayed: boolean }> {
    const hash = createHash("sha256").update(canonical(request.fingerprint)).digest("hex");
    const now = this.clock.now();
    await this.purge(now);
    const stored = await this.store.getIdempotencyKey(request.scope, request.key);
    if (stored !== null && stored.createdMs >= now - IDEMPOTENCY_TTL_MS) {
      if (stored.requestHash !== hash) {
        throw new IdempotencyKeyReused(
          `Idempotency-Key "${request.key}" was already used for a different request to this route; use a new key for a new request`,
        );
      }
      const body = typeof stored.response === "string" ? (JSON.parse(stored.response) as unknown) : null;
      return { status: stored.status, body, replayed: true };
    }
    if (stored !== null) await this.purge(now, true);
    const answer = await handle();
    if (answer.status < 400) {
      await this.store.insertIdempotencyKey({
        scope: request.scope,
        key: request.key,
        requestHash: hash,
        // As text: PostgreSQL's JSONB would reorder the keys, and a replay must read as the first answer.
        response: answer.body === undefined || answer.body === null ? null : serializeJson(answer.body),
        status: answer.status,
        createdMs: this.clock.now(),
      });
    }
    return { ...answer, replayed: false };
  }

  private async purge(now: number, force = false): Promise<void> {
    if (!force && now - this.lastPurgeMs < PURGE_EVERY_MS) return;
    this.lastPurgeMs = now;
    await this.store.deleteIdempotencyKeysBefore(now - IDEMPOTENCY_TTL_MS);
  }
}
