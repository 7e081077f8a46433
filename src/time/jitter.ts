/**
 * Deterministic jitter (docs/design.md § Jitter): delay = hash(schedule_id, nominal occurrence) mod jitter.
 * The hash is the first 48 bits of SHA-256 over `<schedule_id>\n<occurrence RFC 3339>`, so every
 * server, every release and every language computes the same delay.
 */
import { createHash } from "node:crypto";
import { formatInstant } from "./format.js";

export function jitterDelay(scheduleId: string, occurrence: number, jitterMs: number): number {
  if (jitterMs <= 0) return 0;
  const digest = createHash("sha256")
    .update(`${scheduleId}\n${formatInstant(occurrence)}`)
    .digest();
  return digest.readUIntBE(0, 6) % jitterMs;
}
