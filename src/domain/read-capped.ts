/**
 * A file's text read up to a bound: `--input @/dev/zero` read until memory ran out (6 GB in 20 s),
 * `schedule apply -f /dev/urandom` reached 1.2 GB and `orbit server --config /dev/zero` 16 GB, where a
 * refusal was due (testers). Shared by the CLI and the server's identities file.
 */
import { closeSync, openSync, readSync } from "node:fs";

const CHUNK_BYTES = 256 * 1024;

/** Thrown when the file holds more than the bound. */
export class FileTooLarge extends Error {}

/** The file's text, or FileTooLarge past `maxBytes`; an unreadable file throws its errno error. */
export function readCapped(path: string, maxBytes: number): string {
  const fd = openSync(path, "r");
  try {
    // In pieces: a buffer of the bound for every small file was 64 MB per apply.
    const pieces: Buffer[] = [];
    let got = 0;
    for (;;) {
      const piece = Buffer.allocUnsafe(CHUNK_BYTES);
      const n = readSync(fd, piece, 0, CHUNK_BYTES, null);
      if (n === 0) break;
      pieces.push(n === CHUNK_BYTES ? piece : piece.subarray(0, n));
      got += n;
      if (got > maxBytes) throw new FileTooLarge(`the file ${path} is larger than ${maxBytes / 1024 / 1024} MB`);
    }
    return Buffer.concat(pieces, got).toString("utf8");
  } finally {
    closeSync(fd);
  }
}
