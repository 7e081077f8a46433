/**
 * JSON text that keeps how numbers were written. JavaScript reads `120.0` as 120 and writes it back
 * as `120`; Orbit shows a schedule's input as it was given (the seed's `"amount":120.0`), so inputs
 * are also kept as text, and API answers splice that text in.
 *
 * `parseJsonText` returns plain numbers for every number JavaScript writes back unchanged and a
 * LosslessNumber (which keeps the text) for the others (`120.0`, `1e3`, integers beyond 2^53).
 */

import { randomBytes } from "node:crypto";
import { isLosslessNumber, LosslessNumber, parse, stringify } from "lossless-json";

function parseNumber(text: string): number | LosslessNumber {
  const n = Number(text);
  return String(n) === text ? n : new LosslessNumber(text);
}

/** A JSON number's text (RFC 8259 § 6). */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * A number read from another format (a YAML file) as {@link parseJsonText} reads it: the text as
 * written when it is JSON's and JavaScript would write it otherwise (`120.0`, `1e3`), else `value`
 * (YAML's `0x1F`, `+12` or `.5` are not JSON texts, so only their value can be kept).
 */
export function numberAsWritten(value: number, text: string): number | LosslessNumber {
  return Number.isFinite(value) && JSON_NUMBER.test(text) && String(value) !== text ? new LosslessNumber(text) : value;
}

/**
 * A number JavaScript writes back as it was written: no sign on a zero, no exponent, no trailing
 * zero after the point, at most 15 characters of digits and point (so at most 15 significant
 * digits: every decimal of up to 15 digits survives the trip through a double), and not below
 * 0.000001 (JavaScript writes 1e-7). Conservative: a number it misses only takes the slow path.
 */
const CANONICAL_NUMBER =
  /(?:0|-?(?=[\d.]{1,15}(?![\d.]))(?:[1-9]\d*(?:\.\d*[1-9])?|0\.0{0,5}[1-9](?:\d*[1-9])?))(?![\d.eE+-])/.source;
const STRING = /"[^"\\]*(?:\\[\s\S][^"\\]*)*"/.source;
/**
 * The whole text is strings, canonical numbers and other characters (structure, whitespace,
 * literals): then JSON.parse reads every number as parseNumber would. One native match, with no
 * ambiguity between its alternatives (each starts with its own character), so no backtracking
 * blow-up on a text that does not match.
 */
const ALL_NUMBERS_CANONICAL = new RegExp(String.raw`^[^"\d-]*(?:(?:${STRING}|${CANONICAL_NUMBER})[^"\d-]*)*$`);

/** True when JSON.parse gives what {@link parseJsonText}'s lossless parser would (exported for its test). */
export function numbersAreCanonical(text: string): boolean {
  try {
    return ALL_NUMBERS_CANONICAL.test(text);
  } catch {
    return false; // the regular expression's stack ran out on a huge text: take the slow path
  }
}

export function parseJsonText(text: string): unknown {
  // The lossless parser is JavaScript, several times slower than JSON.parse, and every answer the
  // worker and the CLI read goes through here: most hold no number JavaScript would change.
  // (One difference is accepted: a key repeated with different values, which the lossless parser
  // refuses and JSON.parse resolves to the last; Orbit's server never writes one.)
  if (numbersAreCanonical(text)) {
    try {
      return JSON.parse(text);
    } catch {
      // Invalid JSON: the lossless parser's error, as without this fast path.
    }
  }
  return parse(text, undefined, parseNumber);
}

/** JSON.stringify that writes LosslessNumbers with their text. */
export function stringifyJsonText(value: unknown): string {
  // JSON.stringify writes what the lossless stringify would for anything without a LosslessNumber,
  // a bigint or a toJSON of its own (lossless-json calls toJSON without the key) inside.
  if (!needsLosslessStringify(value, 0)) return JSON.stringify(value) ?? "null";
  return stringify(value) ?? "null";
}

function needsLosslessStringify(value: unknown, depth: number): boolean {
  if (typeof value !== "object" || value === null) return typeof value === "bigint";
  if (depth > 100 || isLosslessNumber(value) || typeof (value as { toJSON?: unknown }).toJSON === "function") {
    return true;
  }
  const items = Array.isArray(value) ? value : Object.values(value);
  for (const item of items) if (needsLosslessStringify(item, depth + 1)) return true;
  return false;
}

/** True when the value holds a number whose text JavaScript would change. */
function hasLosslessNumber(value: unknown): boolean {
  if (isLosslessNumber(value)) return true;
  if (Array.isArray(value)) return value.some(hasLosslessNumber);
  if (typeof value === "object" && value !== null) return Object.values(value).some(hasLosslessNumber);
  return false;
}

/**
 * The text of the `input` member of a JSON request body, when writing it back through JavaScript
 * would change it (`120.0`); undefined when there is no input or JSON.stringify would give the same.
 */
export function inputTextOf(rawBody: string | undefined): string | undefined {
  // Every number as JavaScript writes it: nothing to keep, and no second parse of the whole body.
  if (rawBody === undefined || numbersAreCanonical(rawBody)) return undefined;
  try {
    const body = parseJsonText(rawBody);
    if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
    const input = (body as Record<string, unknown>).input;
    if (input === undefined || !hasLosslessNumber(input)) return undefined;
    return stringifyJsonText(input);
  } catch {
    return undefined;
  }
}

/** {@link inputTextOf} for each element of the body's array member `key` (the batch create). */
export function inputTextsOf(rawBody: string | undefined, key: string): (string | undefined)[] {
  if (rawBody === undefined || numbersAreCanonical(rawBody)) return [];
  try {
    const body = parseJsonText(rawBody) as Record<string, unknown>;
    const items = body?.[key];
    if (!Array.isArray(items)) return [];
    return items.map((item) => {
      const input = (item as Record<string, unknown> | null)?.input;
      return input === undefined || !hasLosslessNumber(input) ? undefined : stringifyJsonText(input);
    });
  } catch {
    return [];
  }
}

/** A value whose JSON text is given: serialised verbatim by {@link serializeJson}, as `value` by JSON.stringify. */
export class RawJson {
  constructor(
    readonly text: string,
    readonly value: unknown,
  ) {}

  toJSON(): unknown {
    if (collecting === null) return this.value;
    collecting.push(this.text);
    return `${MARK}${collecting.length - 1}`;
  }
}

const MARK = `\u0000orbit-raw-${randomBytes(6).toString("hex")}:`;

/** The texts of the RawJson values met by the {@link serializeJson} running now (null: none is). */
let collecting: string[] | null = null;

/**
 * JSON.stringify, except that RawJson values are written as their text. No replacer function: with
 * one, JSON.stringify calls back into JavaScript for every value of the answer (a list of 1,000
 * schedules is ~30,000 values); instead each RawJson's own `toJSON` leaves a marker while this
 * function runs (JSON.stringify is synchronous, so no other serialisation can see the flag).
 */
export function serializeJson(payload: unknown): string {
  const outer = collecting;
  const raws: string[] = [];
  collecting = raws;
  let text: string;
  try {
    text = JSON.stringify(payload);
  } finally {
    collecting = outer;
  }
  if (raws.length === 0) return text;
  return text.replace(/"\\u0000orbit-raw-[0-9a-f]{12}:(\d+)"/g, (whole, i: string) =>
    whole.includes(MARK.slice(1)) ? (raws[Number(i)] as string) : whole,
  );
}
