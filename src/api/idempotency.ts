/**
 * `Idempotency-Key` on writes (docs/design.md § Changes): the first successful answer to a key is stored (status
 * and body) and replayed for a repeat with the same request; the same key with another request is
 * 422. Keys are scoped to method, path and caller identity, and kept 24 hours. A refused request
 * (any 4xx/5xx) stores nothing, so it can be retried with the same key.
 *
 * The key is claimed in the database, in the same transaction as the request's writes
 * (Store.atomically), on both dialects: the write and its key commit together, so a server killed
 * between them cannot leave a write whose retry runs it again (test/faults/sigkill-writes.test.ts).
 * On PostgreSQL (several servers may share the database) a concurrent request with the key, on any
 * server, waits on the claimed row and then replays the committed answer; a request that fails
 * rolls its claim back with its writes. Within one process an in-process queue per key also makes
 * a concurrent repeat wait for the first answer.
 */

import { createHash } from "node:crypto";
import { canonicalJson } from "../domain/canonical-json.js";
import type { Clock } from "../domain/clock.js";
import { OrbitError } from "../domain/errors.js";
import { RawJson, serializeJson } from "../domain/json-text.js";
import type { IdempotencyRecord } from "../store/rows.js";
import type { Store, StoreOps } from "../store/store.js";
import { IdempotencyKeyReused } from "./errors.js";

/** How long a key is remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
const PURGE_EVERY_MS = 3_600_000;
const KEY = /^[\x21-\x7e]{1,255}$/;
/**
 * How long a request waits for another's uncommitted claim of its key (PostgreSQL: another server
 * handling it) before answering 409: within the database's answer bound (30 s), which it ran into
 * behind a large keyed backfill and answered 503 "the database did not answer" (a tester).
 */
export const CLAIM_WAIT_MS = 20_000;

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

export class IdempotencyKeys {
  private lastPurgeMs = Number.NEGATIVE_INFINITY;
  /** Requests in flight per scope+key: a concurrent repeat waits for the first answer. */
  private readonly inflight = new Map<string, Promise<unknown>>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    /**
     * Called after a request's transaction commits (PostgreSQL). Wake-ups its writes sent while
     * the transaction was open (the firing loop, long polls) looked before the commit, so they
     * are sent again. Default: nothing.
     */
    private readonly afterCommit: () => void = () => undefined,
    private readonly claimWaitMs = CLAIM_WAIT_MS,
  ) {}

  /** The key of a request, validated; undefined when the header is absent. */
  static keyOf(header: string | string[] | undefined): string | undefined {
    if (header === undefined) return undefined;
    const key = Array.isArray(header) ? header[0] : header;
    // Node joins a repeated header with ", " (a key holds no space): said as given twice, as a
    // repeated query parameter is, not as a malformed key.
    if (Array.isArray(header) ? header.length > 1 : key?.includes(", ") && key.split(", ").every((k) => KEY.test(k))) {
      throw new OrbitError("INVALID_ARGUMENT", "Idempotency-Key is given more than once; give it once");
    }
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
    const hash = createHash("sha256").update(canonicalJson(request.fingerprint)).digest("hex");
    const now = this.clock.now();
    await this.purge(now);
    const stored = await this.store.getIdempotencyKey(request.scope, request.key);
    if (stored !== null && stored.createdMs >= now - IDEMPOTENCY_TTL_MS && stored.status !== 0) {
      return this.replay(request, stored, hash);
    }
    if (stored !== null) await this.purge(now, true);
    if (this.store.atomically !== undefined) return this.claimed(request, hash, now, handle);
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

  /** PostgreSQL: claim, write and record the answer in one transaction (see the header). */
  private async claimed(
    request: IdempotentRequest,
    hash: string,
    now: number,
    handle: () => Promise<StoredAnswer>,
  ): Promise<StoredAnswer & { replayed: boolean }> {
    const { scope, key } = request;
    const answer = await this.store.atomically!(async (tx) => {
      // Blocks while another transaction holds an uncommitted claim of the key; then either
      // inserts (the other rolled back) or finds its committed answer.
      const claim = { scope, key, requestHash: hash, response: null, status: 0, createdMs: now };
      if (!(await this.claim(tx, claim))) {
        const stored = await tx.getIdempotencyKey(scope, key);
        if (stored === null || stored.status === 0) {
          throw new OrbitError("CONFLICT", `Idempotency-Key "${key}" is being used by another request; retry`);
        }
        return this.replay(request, stored, hash);
      }
      const answer = await handle();
      if (answer.status < 400) {
        // As text: PostgreSQL's JSONB would reorder the keys, and a replay must read as the first answer.
        const text = answer.body === undefined || answer.body === null ? null : serializeJson(answer.body);
        await tx.setIdempotencyAnswer(scope, key, answer.status, text);
      } else await tx.deleteIdempotencyKey(scope, key);
      return { ...answer, replayed: false };
    });
    if (!answer.replayed) this.afterCommit();
    return answer;
  }

  /** Inserts the claim; a claim another request holds past the wait is 409. */
  private async claim(tx: StoreOps, claim: IdempotencyRecord): Promise<boolean> {
    try {
      return await tx.insertIdempotencyKey(claim, this.claimWaitMs);
    } catch (err) {
      if (!(err instanceof OrbitError && err.details?.lockTimeout === true)) throw err;
      throw new OrbitError(
        "CONFLICT",
        `Idempotency-Key "${claim.key}" is in use by a request still in progress (on this server or another); retry once it has answered, to get its answer`,
      );
    }
  }

  private replay(
    request: IdempotentRequest,
    stored: { requestHash: string; response: unknown; status: number },
    hash: string,
  ): StoredAnswer & { replayed: boolean } {
    if (stored.requestHash !== hash) {
      throw new IdempotencyKeyReused(
        `Idempotency-Key "${request.key}" was already used for a different request to this route; use a new key for a new request`,
      );
    }
    // The stored text itself, not JSON.parse's reading of it: that wrote `"amount":120.0` back as
    // `120`, and a replay must read as the first answer (docs/api.md § Schedules).
    const body =
      typeof stored.response === "string" ? new RawJson(stored.response, JSON.parse(stored.response) as unknown) : null;
    return { status: stored.status, body, replayed: true };
  }

  private async purge(now: number, force = false): Promise<void> {
    if (!force && now - this.lastPurgeMs < PURGE_EVERY_MS) return;
    this.lastPurgeMs = now;
    await this.store.deleteIdempotencyKeysBefore(now - IDEMPOTENCY_TTL_MS);
  }
}
