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

export function parseJsonText(text: string): unknown {
  return parse(text, undefined, parseNumber);
}

/** JSON.stringify that writes LosslessNumbers with their text. */
export function stringifyJsonText(value: unknown): string {
  return stringify(value) ?? "null";
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
  if (rawBody === undefined || rawBody.trim() === "") return undefined;
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
  if (rawBody === undefined || rawBody.trim() === "") return [];
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
