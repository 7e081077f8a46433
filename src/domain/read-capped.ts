/**
 * A file's text read up to a bound: `--input @/dev/zero` read until memory ran out (6 GB in 20 s),
 * `schedule apply -f /dev/urandom` reached 1.2 GB and `orbit server --config /dev/zero` 16 GB, where a
 * refusal was due (testers). Shared by the CLI and the server's identities file.
 *
 * The text is UTF-8, strictly: a Latin-1 `café` (byte 0xE9) was read as `caf\uFFFD` and stored by
 * `orbit start --input @in.json` and `orbit schedule apply -f`, where the API refuses the same bytes
 * (a tester). One leading byte order mark is skipped: `--input @bom.json` was refused with an
 * invisible character in its message while `apply -f` took it.
 */
import { closeSync, openSync, readSync } from "node:fs";

const CHUNK_BYTES = 256 * 1024;

/** Thrown when the file holds more than the bound. */
export class FileTooLarge extends Error {}

/** Thrown when the file is not UTF-8; the message names it and the first byte that is not. */
export class FileNotUtf8 extends Error {}

/** The name `-` given with {@link ReadCappedOptions.dashIsStdin}: the standard input. */
export const STDIN_NAME = "-";

export interface ReadCappedOptions {
  /** Whether `-` means the standard input (`-f -`, `--input @-`), read to its end. Default: false. */
  dashIsStdin?: boolean;
}

/**
 * The file's UTF-8 text (one leading byte order mark skipped), or FileTooLarge past `maxBytes`, or
 * FileNotUtf8; an unreadable file throws its errno error.
 */
export function readCapped(path: string, maxBytes: number, opts: ReadCappedOptions = {}): string {
  const stdin = opts.dashIsStdin === true && path === STDIN_NAME;
  const name = stdin ? "the standard input" : `the file ${path}`;
  // fd 0 is left open: it is the process's, not this read's.
  const fd = stdin ? 0 : openSync(path, "r");
  let bytes: Buffer;
  try {
    bytes = readAll(fd, maxBytes, name);
  } finally {
    if (!stdin) closeSync(fd);
  }
  try {
    // ignoreBOM false: one leading BOM is dropped, not kept as U+FEFF.
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    const at = firstInvalidUtf8(bytes);
    const byte = (bytes[at] ?? 0).toString(16).toUpperCase().padStart(2, "0");
    const fix = stdin ? "send UTF-8" : "save it as UTF-8";
    throw new FileNotUtf8(`${name} is not UTF-8 (byte 0x${byte} at offset ${at}); ${fix}`);
  }
}

function readAll(fd: number, maxBytes: number, name: string): Buffer {
  // In pieces: a buffer of the bound for every small file was 64 MB per apply.
  const pieces: Buffer[] = [];
  let got = 0;
  for (;;) {
    const piece = Buffer.allocUnsafe(CHUNK_BYTES);
    const n = readSync(fd, piece, 0, CHUNK_BYTES, null);
    if (n === 0) break;
    pieces.push(n === CHUNK_BYTES ? piece : piece.subarray(0, n));
    got += n;
    if (got > maxBytes) throw new FileTooLarge(`${name} is larger than ${maxBytes / 1024 / 1024} MB`);
  }
  return Buffer.concat(pieces, got);
}

/**
 * The offset of the first byte that is not UTF-8: a byte no character starts with, or the first
 * byte of a character that is broken (an overlong form, a surrogate, past U+10FFFF, a continuation
 * byte missing or cut off by the end), as the WHATWG decoder judges them; `bytes.length` if none.
 */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i] as number;
    if (b < 0x80) {
      i += 1;
      continue;
    }
    // The continuation bytes wanted, and the range of the first (which rules out the overlong
    // forms, the surrogates and what lies past U+10FFFF).
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || c < (k === 1 ? lo : 0x80) || c > (k === 1 ? hi : 0xbf)) return i;
    }
    i += need + 1;
  }
  return bytes.length;
}
