/**
 * Flag parsers and option sets shared by the commands that talk to the server: JSON (`--input`,
 * `--input-schema`) inline or from `@file`, whole numbers, and the write options (`--if-match`,
 * `--expected-revision`, `--idempotency-key`). A malformed flag is a usage error (exit 2).
 */

import { randomUUID } from "node:crypto";
import { type Command, InvalidArgumentError } from "commander";
import type { WriteOptions } from "../client/http.js";
import { scanJsonText } from "../domain/body-guard.js";
import type { JsonObject, JsonValue } from "../domain/json.js";
import { MAX_JSON_BYTES } from "../domain/json-limits.js";
import { parseJsonText, stringifyJsonText } from "../domain/json-text.js";
import { FileNotUtf8, FileTooLarge, readCapped } from "../domain/read-capped.js";
import { EXIT_USAGE } from "./exit.js";
import type { CliIO } from "./io.js";

/** `'{"a":1}'` or `@path/to/file.json`: the flag's JSON value. */
export function parseJsonArg(text: string): JsonValue {
  let source = text;
  let where = "the value";
  if (text.startsWith("@")) {
    where = text.slice(1);
    if (where === "") throw new InvalidArgumentError("give a file after @ (@input.json), or the JSON itself.");
    source = readInputFile(where);
  }
  const what = where === "the value" ? where : where === "-" ? "the standard input" : `the file ${where}`;
  let value: JsonValue;
  try {
    value = parseJsonText(source) as JsonValue;
  } catch (err) {
    throw new InvalidArgumentError(`${what} is not JSON (${(err as Error).message}); give JSON or @file.`);
  }
  try {
    // A key given twice is refused here as the server refuses it: JSON.parse keeps the last.
    // "the file …", not the name first: a usage error's first letter is made a capital (main.ts),
    // and `Dup.json gives …` named a file that does not exist on a case-sensitive disk (a tester).
    scanJsonText(source, undefined, { name: what });
  } catch (err) {
    throw new InvalidArgumentError(`${(err as Error).message}.`);
  }
  return value;
}

/**
 * The file's text, read up to {@link MAX_FILE_BYTES} as UTF-8 (read-capped.ts); `@-` is the standard
 * input (it was read as a file named `-`: `cannot read -: ENOENT`).
 */
function readInputFile(where: string): string {
  try {
    return readCapped(where, MAX_FILE_BYTES, { dashIsStdin: true });
  } catch (err) {
    if (err instanceof FileTooLarge) {
      throw new InvalidArgumentError(
        `${err.message}; an input may be at most ${MAX_JSON_BYTES / 1024 / 1024} MB of JSON.`,
      );
    }
    if (err instanceof FileNotUtf8) throw new InvalidArgumentError(`${err.message}.`);
    throw new InvalidArgumentError(`cannot read ${where}: ${(err as NodeJS.ErrnoException).code ?? String(err)}.`);
  }
}

/** Whitespace and indentation around an input of the largest size the server takes. */
const MAX_FILE_BYTES = 4 * MAX_JSON_BYTES;

/** parseJsonArg that also requires an object (an input, a JSON Schema). */
export function parseJsonObjectArg(text: string): JsonObject {
  const value = parseJsonArg(text);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError("give a JSON object ({…}) or @file holding one.");
  }
  return value;
}

/** A parser for whole numbers from `min` to `max`. */
export function wholeNumber(min: number, max: number): (text: string) => number {
  return (text) => {
    const n = Number(text.trim());
    if (!/^\d+$/.test(text.trim()) || n < min || n > max) {
      throw new InvalidArgumentError(`give a whole number from ${min} to ${max}.`);
    }
    return n;
  };
}

/**
 * `--if-match`: a schedule revision, `3`, or quoted as the ETag is (`"3"`). Anything else is a usage
 * error that quotes the value once: sent, `abc` came back as `If-Match "\"abc\"" is not …`. A weak
 * tag (`W/"3"`) never matches If-Match, as the server answers (412): it was sent as `"3"` and matched.
 */
export function revisionArg(text: string): string {
  if (/^\s*W\//.test(text)) {
    throw new InvalidArgumentError(
      "a weak tag (W/…) never matches If-Match: give the revision, such as 3, or the ETag as the server sends it.",
    );
  }
  const m = /^\s*(?:"(\d{1,15})"|(\d{1,15}))\s*$/.exec(text);
  if (m === null) {
    throw new InvalidArgumentError("give a schedule revision such as 3 (`orbit schedule get <id> --json` shows it).");
  }
  return (m[1] ?? m[2]) as string;
}

/** A parser for one of `allowed`, any case (`running` is RUNNING); the allowed spelling is returned. */
export function oneOf(allowed: readonly string[]): (text: string) => string {
  return (text) => {
    const found = allowed.find((a) => a.toLowerCase() === text.trim().toLowerCase());
    if (found === undefined) throw new InvalidArgumentError(`give one of ${allowed.join(", ")}.`);
    return found;
  };
}

/** A parser for a value that must not be empty (an empty filter would silently match everything). */
export function nonEmpty(text: string): string {
  if (text.trim() === "") throw new InvalidArgumentError("give a value (it is empty).");
  return text;
}

export interface WriteFlags {
  ifMatch?: string;
  expectedRevision?: number;
  idempotencyKey?: string;
}

/**
 * Adds `--idempotency-key` and, for writes on an existing resource (`fence`), `--if-match` and
 * `--expected-revision`.
 */
export function addWriteOptions(cmd: Command, fence = true): Command {
  if (fence) {
    cmd
      .option(
        "--if-match <revision>",
        'send If-Match: "<revision>": refused with 412 if the schedule moved on',
        revisionArg,
      )
      .option(
        "--expected-revision <revision>",
        "send ?expected_revision=N: refused with 409 if the schedule moved on",
        wholeNumber(0, Number.MAX_SAFE_INTEGER),
      );
  }
  return cmd.option(
    "--idempotency-key <key>",
    "send Idempotency-Key: a repeat with the same key returns the first answer (without it a new key is sent, and named if no answer comes)",
    idempotencyKeyArg,
  );
}

/**
 * `--idempotency-key`: what the server takes (src/api/idempotency.ts), checked before anything is
 * sent, in the server's words. An empty or non-ASCII key was sent and refused by the server (exit
 * 1), while a malformed `--if-match` is bad usage (exit 2; a tester).
 */
export function idempotencyKeyArg(text: string): string {
  if (!/^[\x21-\x7e]{1,255}$/.test(text)) {
    throw new InvalidArgumentError("Idempotency-Key must be 1-255 printable ASCII characters without spaces.");
  }
  return text;
}

/**
 * The write's headers. Without `--idempotency-key` the write carries a key of its own
 * (`orbit-cli-<uuid>`): when its answer does not come (a server stopped, a lock held), the error
 * names the key, and the same command with `--idempotency-key <it>` gets the first answer or does
 * the write now, never twice. A trigger whose answer timed out was retried and started a second
 * execution (a tester). Nothing in the CLI sends a request twice by itself.
 */
export function writeOptionsOf(flags: WriteFlags): WriteOptions {
  const out: WriteOptions = { idempotencyKey: flags.idempotencyKey ?? `orbit-cli-${randomUUID()}` };
  if (flags.ifMatch !== undefined) out.ifMatch = flags.ifMatch;
  if (flags.expectedRevision !== undefined) out.expectedRevision = flags.expectedRevision;
  return out;
}

/** The parsers that collect every occurrence of their flag (`--label a=1 --label b=2`). */
const REPEATABLE = new WeakSet<object>();

/**
 * Marks `parser` as collecting each occurrence of its flag, so the flag may be given more than once;
 * any other flag that takes a value is refused given twice ({@link refuseRepeatedOptions}).
 */
export function repeatable<P extends (value: string, previous: never) => unknown>(parser: P): P {
  REPEATABLE.add(parser);
  return parser;
}

/**
 * Makes each option of `cmd` and its subcommands that takes one value a usage error when given
 * twice: commander keeps the last, so `--cron "0 25 * * *" --cron "0 2 * * *"` created a schedule
 * with the second and said nothing of the first (a tester). Flags without a value (`--json`) and
 * {@link repeatable} ones may repeat.
 */
export function refuseRepeatedOptions(cmd: Command): void {
  for (const opt of cmd.options) {
    if (!(opt.required || opt.optional) || opt.variadic) continue;
    if (opt.parseArg !== undefined && REPEATABLE.has(opt.parseArg)) continue;
    let given = 0;
    cmd.on(`option:${opt.name()}`, () => {
      given += 1;
      if (given > 1) usageError(cmd, `${opt.long ?? opt.short ?? opt.flags} is given twice; give it once.`);
    });
  }
  for (const sub of cmd.commands) refuseRepeatedOptions(sub);
}

/** Stops the command with a usage error (exit 2), printed as `orbit: <message>`. */
export function usageError(cmd: Command, message: string): never {
  cmd.error(message, { exitCode: EXIT_USAGE, code: "orbit.usage" });
}

/** Prints the server's JSON, compact, on one line (as the API sends it). */
export async function printJson(io: CliIO, value: unknown): Promise<void> {
  await io.stdout.write(`${stringifyJsonText(value)}\n`);
}

/**
 * The filters a list command was given, as typed (`--workflow Nope --status RUNNING`; a value with
 * blanks quoted), for its "no … matches" line; "" for none.
 */
export function givenFilters(given: ReadonlyArray<readonly [flag: string, value: string | undefined]>): string {
  return given
    .flatMap(([flag, value]) =>
      value === undefined ? [] : [`${flag} ${/\s/.test(value) ? JSON.stringify(value) : value}`],
    )
    .join(" ");
}
