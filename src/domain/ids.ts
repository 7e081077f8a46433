/**
 * Generated ids (worker tasks; executions started without an id): UUIDs of version 7 (RFC 9562
 * § 5.7), time-ordered. The first 48 bits are the Unix time in milliseconds and the next 12 a counter
 * within that millisecond (RFC 9562 § 6.2, method 1), so the ids one process makes increase; the last
 * 62 bits are random (unguessable).
 *
 * Why: an id is a table's key. A random UUID puts each new row at a random place in the key's
 * B-tree, so a fire batch of 200 tasks dirtied about 170 different pages of that index, half of the
 * bytes a fire wrote to SQLite's WAL; increasing ids append to its last page (docs/storage.md § Ids).
 */
import { randomFillSync } from "node:crypto";

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
/** Two hex digits of a byte. */
const h = (byte: number): string => HEX[byte & 0xff] as string;

/** Random bytes drawn 4 KB at a time (as node's randomUUID caches its entropy). */
class RandomPool {
  private readonly bytes = new Uint8Array(4096);
  private used = this.bytes.length;

  /** `n` (at most 4096) fresh random bytes; valid until the next call. */
  take(n: number): { bytes: Uint8Array; at: number } {
    if (this.used + n > this.bytes.length) {
      randomFillSync(this.bytes);
      this.used = 0;
    }
    const at = this.used;
    this.used += n;
    return { bytes: this.bytes, at };
  }
}

/**
 * A generator of version-7 UUIDs, each greater (as a string, and as bytes) than the one before.
 * `now` is the wall clock in ms; when it goes back, or when 4,096 ids were made in one millisecond,
 * the ids go on from the last one's time (the counter carries into it), so the order holds.
 */
export function timeOrderedIds(now: () => number = Date.now): () => string {
  const pool = new RandomPool();
  let lastMs = -1;
  let counter = 0;
  return () => {
    const { bytes, at } = pool.take(10);
    const ms = Math.max(now(), 0);
    if (ms > lastMs) {
      lastMs = ms;
      // A random start below 2048 leaves room for 2,048 more ids in this millisecond.
      counter = ((bytes[at] as number) << 3) | ((bytes[at + 1] as number) & 7);
    } else if (++counter > 0xfff) {
      lastMs++;
      counter = 0;
    }
    const hi = Math.floor(lastMs / 0x1000000);
    const lo = lastMs % 0x1000000;
    const r = (i: number): string => h(bytes[at + i] as number);
    return (
      h(hi >>> 16) +
      h(hi >>> 8) +
      h(hi) +
      h(lo >>> 16) +
      "-" +
      h(lo >>> 8) +
      h(lo) +
      "-" +
      h(0x70 | (counter >>> 8)) +
      h(counter) +
      "-" +
      h(0x80 | ((bytes[at + 2] as number) & 0x3f)) +
      r(3) +
      "-" +
      r(4) +
      r(5) +
      r(6) +
      r(7) +
      r(8) +
      r(9)
    );
  };
}

/** The server's generator (one per process, so every id it makes is greater than the last). */
export const newTimeOrderedId: () => string = timeOrderedIds();
